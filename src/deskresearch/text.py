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


# Phrases by which page text addresses the model instead of the reader (en, de, fr).
_INJECTION = re.compile(
    r"ignore (?:all |any )?(?:the )?(?:previous|prior|above) (?:instructions|prompts?)"
    r"|disregard (?:all |the )?(?:previous|prior|above)|you are now (?:a|an|in)\b"
    r"|(?:reveal|print|show) (?:your|the) (?:system )?prompt|new instructions:"
    r"|as an ai (?:language )?model,? you must|<\|?(?:im_start|system)\|?>"
    r"|ignoriere (?:alle )?(?:vorherigen|bisherigen) anweisungen"
    r"|ignore[sz]? (?:toutes )?les instructions pr[ée]c[ée]dentes",
    re.IGNORECASE,
)


def injection_marker(text: str) -> str | None:
    """Return the first phrase in ``text`` that tries to instruct a model, or None."""
    m = _INJECTION.search(text)
    return " ".join(m.group(0).split()) if m else None


_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


def remove_injections(text: str) -> tuple[str, int]:
    """Drop every sentence of ``text`` that tries to instruct a model; return it and the count.

    Works line by line, then sentence by sentence, so the rest of a paragraph survives.
    """
    removed = 0
    lines = []
    for line in text.split("\n"):
        if _INJECTION.search(line):
            sentences = _SENTENCE_END.split(line)
            kept = [s for s in sentences if not _INJECTION.search(s)]
            removed += len(sentences) - len(kept)
            line = " ".join(kept)
        lines.append(line)
    return "\n".join(lines), removed
