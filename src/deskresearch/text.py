"""Small pure text helpers shared by several nodes."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from html import unescape

MAX_PHRASE_CHARS = 300


def unique_phrases(raw: Sequence[object], limit: int) -> list[str]:
    """Return unique (case-insensitively), non-empty, not overlong phrases, at most ``limit``."""
    seen: set[str] = set()
    out: list[str] = []
    for item in raw:
        if not isinstance(item, str):
            continue
        phrase = " ".join(item.split())
        if not phrase or len(phrase) > MAX_PHRASE_CHARS or phrase.casefold() in seen:
            continue
        seen.add(phrase.casefold())
        out.append(phrase)
    return out[:limit]


def text_hash(text: str) -> str:
    """Return the sha256 of ``text`` with whitespace normalised (the ledger's content hash)."""
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()


_TAGS = re.compile(r"<(script|style|noscript)[^>]*>.*?</\1>|<[^>]+>", re.IGNORECASE | re.DOTALL)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def visible_text(html: str) -> str:
    """Return a crude visible text of ``html`` (for checks and indexing, not for summaries)."""
    return " ".join(unescape(_TAGS.sub(" ", html)).split())


def html_title(html: str) -> str:
    """Return the content of the first <title>, or ""."""
    m = _TITLE.search(html)
    return " ".join(unescape(m.group(1)).split()) if m else ""
