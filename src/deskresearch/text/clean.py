"""Small pure text helpers shared by several nodes."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Collection, Sequence
from html import unescape

import regex

from deskresearch.errors import ConfigError
from deskresearch.text.languages import is_language

MAX_PHRASE_CHARS = 300
MAX_TOPIC_CHARS = 2000


def clean_topic(topic: object) -> str:
    """Return the topic with control characters removed and whitespace collapsed.

    Raises:
        ConfigError: the topic is missing, empty or longer than MAX_TOPIC_CHARS.
    """
    if not isinstance(topic, str):
        raise ConfigError(
            "topic is missing: pass a research question as the input's 'topic' "
            "(or as a human message in 'messages')"
        )
    kept = "".join(
        " " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") else ch for ch in topic
    )
    text = " ".join(kept.split())
    if not text:
        raise ConfigError(
            "topic is empty: pass a research question, e.g. 'How are EV batteries recycled?'"
        )
    if len(text) > MAX_TOPIC_CHARS:
        raise ConfigError(
            f"topic is {len(text)} characters; the limit is {MAX_TOPIC_CHARS}: "
            "state the question and leave background material out"
        )
    return text


MAX_LANGUAGE_CHARS = 32
# A language name or tag: up to three words of letters (any script) and digits, joined by a
# space, hyphen or underscore: en-us, zh-Hans-CN, es-419, German, Brazilian Portuguese, 中文.
LANGUAGE = regex.compile(r"^\p{L}[\p{L}\p{M}\p{N}]*(?:[ _-][\p{L}\p{M}\p{N}]+){0,2}$")


def clean_language(language: object) -> str:
    """Return the report language with whitespace collapsed, if it is a language name or tag.

    The language is written into every writing prompt's instructions, so a caller's value must
    not be able to say anything else there.

    Raises:
        ConfigError: anything but up to three words of letters and digits (no punctuation,
            no line breaks), or longer than MAX_LANGUAGE_CHARS.
    """
    text = " ".join(str(language).split()) if isinstance(language, str) else ""
    if len(text) > MAX_LANGUAGE_CHARS or not LANGUAGE.match(text):
        shown = " ".join(repr(language)[:60].split())
        raise ConfigError(
            f"language {shown} is not a language name or tag: give a code or a name of at "
            f"most three words and {MAX_LANGUAGE_CHARS} characters, letters and digits only "
            "(en-us, de, zh-Hans-CN, German, Brazilian Portuguese)"
        )
    return text


def known_language(language: str, origin: str = "") -> str:
    """Return ``language`` if it names a language (``text.languages``), after clean_language.

    Apart from clean_language because it reads Babel's data (files): run off an event loop.

    Raises:
        ConfigError: no language has that tag or name.
    """
    if not is_language(language):
        where = f" (from {origin})" if origin else ""
        raise ConfigError(
            f"language {language!r}{where} names no language deskresearch knows: give a tag "
            "(en-us, de, pt-BR, zh-Hans-CN) or a language's name (German, Brazilian Portuguese, "
            "Deutsch)"
        )
    return language


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


_MD_LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"\n]*\")?\s*\)")
_AUTOLINK = re.compile(r"<([a-z][a-z0-9+.-]*:[^>\s]*)>", re.IGNORECASE)
_BARE_URL = re.compile(
    r"\b(?:https?|ftp|file)://[^\s<>\[\]()\"'`]+|\bwww\.[a-z0-9-]+(?:\.[a-z0-9-]+)+[^\s<>\[\]()\"'`]*",
    re.IGNORECASE,
)


def _drop(m: re.Match[str], removed: list[str]) -> str:
    removed.append(m.group(1))
    return ""


def strip_links(text: str, allowed: Collection[str]) -> tuple[str, list[str]]:
    """Remove every link and URL from model-written ``text`` except the ``allowed`` ones.

    A report links only to its sources, and those links are the references': a URL a page
    talked the model into writing (markdown link, image, autolink or bare) is removed, the
    link's text kept. Returns the text and the URLs removed.
    """
    removed: list[str] = []

    def link(m: re.Match[str]) -> str:
        image, label, url = m.group(1), m.group(2), m.group(3)
        if url in allowed and not image:
            return m.group(0)
        removed.append(url)
        return label

    def bare(m: re.Match[str]) -> str:
        url = m.group(0).rstrip(".,;:!?")
        if url in allowed:
            return m.group(0)
        removed.append(url)
        return m.group(0)[len(url) :]

    text = _MD_LINK.sub(link, text)
    text = _AUTOLINK.sub(lambda m: m.group(0) if m.group(1) in allowed else _drop(m, removed), text)
    text = _BARE_URL.sub(bare, text)
    return text, removed


_HTML_TAG = re.compile(r"</?[a-z!?][^<>]*>?", re.IGNORECASE)
_MD_ACTIVE = re.compile(r"([\\`*_~\[\]<>])")  # links, autolinks, HTML, code, emphasis
MAX_LABEL_CHARS = 300


def inert_label(text: str) -> str:
    """Return a page's title (or site name) as plain text: no link, no URL, no tag, one line.

    A title is whatever the page's author wrote; printed in the references it must not add a
    link, a URL or markup the report never read. Markdown links keep their text, URLs and
    HTML tags go, whitespace (line breaks too) folds to one space; cut at MAX_LABEL_CHARS.
    """
    text = _MD_LINK.sub(lambda m: "" if m.group(1) else m.group(2), text)
    text = _AUTOLINK.sub("", text)
    text = _BARE_URL.sub("", text)
    text = " ".join(_HTML_TAG.sub(" ", text).split())
    return text if len(text) <= MAX_LABEL_CHARS else text[: MAX_LABEL_CHARS - 1] + "…"


def markdown_literal(text: str) -> str:
    """Return ``text`` with every character markdown could read as markup backslash-escaped."""
    return _MD_ACTIVE.sub(r"\\\1", text)
