"""A report draft as units (headings, paragraphs, list items, table rows) of sentences.

Parsing is deterministic, so every node that reads the draft finds the same sentence at the
same place: a sentence is addressed by ``(unit, index)``. Edits (a sentence replaced or removed)
re-render only the units they touch; a unit left empty goes, and so does a heading whose section
is left empty, so headings stay consistent with what remains. Sentence boundaries come from
sentencex (abbreviations, decimals and ~300 languages handled).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from sentencex import segment

from deskresearch.grounding.citations import ids_in

Kind = Literal["heading", "text", "item", "row", "blank", "other"]
SentenceKey = tuple[int, int]  # (unit, sentence index in the unit)

_HEADING = re.compile(r"^(#{1,6})\s+\S")
_ITEM = re.compile(r"^(\s*(?:[-*+]|\d{1,3}[.)])\s+)(.*)$")
_QUOTE = re.compile(r"^(\s*>\s?)(.*)$")
_ROW = re.compile(r"^\s*\|")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LEADING_CITES = re.compile(r"^((?:\s*\[\d{1,4}\])+)(.*)$", re.DOTALL)
# A German ordinal ("im 15. Jahrhundert", "zum 3. Mal") is declined with an article; sentencex
# knows month names after one but splits before any other noun. A number ending a sentence
# ("lag bei 25.") has no article before it.
_DE_ORDINAL_END = re.compile(
    r"\b(?:am|im|zum|zur|vom|beim|der|die|das|den|dem|des)\s+\d{1,3}\.\s*$", re.IGNORECASE
)


@dataclass
class Unit:
    """One block of the draft: its kind, the marker that starts it, and its sentences."""

    kind: Kind
    raw: str  # the lines as written (kept verbatim unless a sentence is edited)
    prefix: str = ""  # "- ", "1. ", "> "
    sentences: list[str] = field(default_factory=list)
    level: int = 0  # heading level
    edited: bool = False

    def render(self) -> str:
        """The unit as markdown: verbatim, or its remaining sentences after an edit."""
        if not self.edited:
            return self.raw
        return self.prefix + " ".join(s.strip() for s in self.sentences if s.strip())


@dataclass(frozen=True)
class Sentence:
    """A sentence that cites sources."""

    key: SentenceKey
    text: str  # as written, citation markers included
    cites: tuple[int, ...]
    section: str  # the nearest heading above it ("" before the first)


def language_code(language: str) -> str:
    """Two-letter code for sentencex from a language setting (en-us, German, fr)."""
    names = {"english": "en", "german": "de", "deutsch": "de", "french": "fr", "français": "fr",
             "spanish": "es", "italian": "it", "dutch": "nl", "portuguese": "pt"}  # fmt: skip
    low = language.strip().casefold()
    return names.get(low, low[:2] if re.match(r"^[a-z]{2}\b", low) else "en")


def split_sentences(text: str, language: str) -> list[str]:
    """Split ``text`` into sentences; citation markers stay with the sentence they end."""
    out: list[str] = []
    code = language_code(language)
    for piece in segment(code, text):
        if code == "de" and out and _DE_ORDINAL_END.search(out[-1]) and piece[:1].isalpha():
            out[-1] = f"{out[-1]} {piece.strip()}"
            continue
        m = _LEADING_CITES.match(piece)
        if m and out:  # "Foo. [1] Bar." -> the [1] belongs to "Foo."
            out[-1] = out[-1].rstrip() + " " + m.group(1).strip()
            piece = m.group(2)
        if piece.strip():
            out.append(piece.strip())
    return out


def parse(draft: str, language: str) -> list[Unit]:
    """Cut ``draft`` into units (see the module docstring)."""
    units: list[Unit] = []
    paragraph: list[str] = []
    fenced = False

    def flush() -> None:
        if paragraph:
            raw = "\n".join(paragraph)
            units.append(
                Unit("text", raw, sentences=split_sentences(" ".join(paragraph), language))
            )
            paragraph.clear()

    for line in draft.split("\n"):
        if _FENCE.match(line):
            flush()
            fenced = not fenced
            units.append(Unit("other", line))
        elif fenced:
            units.append(Unit("other", line))
        elif not line.strip():
            flush()
            units.append(Unit("blank", line))
        elif heading := _HEADING.match(line):
            flush()
            units.append(Unit("heading", line, sentences=[line], level=len(heading.group(1))))
        elif _ROW.match(line):
            flush()
            units.append(Unit("row", line, sentences=[line]))
        elif (item := _ITEM.match(line)) or (item := _QUOTE.match(line)):
            flush()
            kind: Kind = "item" if _ITEM.match(line) else "text"
            body = split_sentences(item.group(2), language)
            units.append(Unit(kind, line, prefix=item.group(1), sentences=body))
        else:
            paragraph.append(line)
    flush()
    return units


def cited_sentences(units: list[Unit]) -> list[Sentence]:
    """Return every sentence that cites a source, in reading order."""
    found: list[Sentence] = []
    section = ""
    for u, unit in enumerate(units):
        if unit.kind == "heading":
            section = unit.raw.lstrip("#").strip()
            continue
        if unit.kind in ("blank", "other"):
            continue
        for i, text in enumerate(unit.sentences):
            ids = ids_in(text)
            if ids:
                found.append(Sentence((u, i), text, tuple(ids), section))
    return found


def _empty(unit: Unit) -> bool:
    return unit.edited and not any(s.strip() for s in unit.sentences)


def _drop_empty_tables(units: list[Unit]) -> list[Unit]:
    """Drop emptied rows; a table left with only its header and separator goes whole."""
    out: list[Unit] = []
    i = 0
    while i < len(units):
        if units[i].kind != "row":
            out.append(units[i])
            i += 1
            continue
        end = i
        while end < len(units) and units[end].kind == "row":
            end += 1
        table = units[i:end]
        left = [u for u in table if not _empty(u)]
        if len(left) > 2 or len(left) == len(table):
            out += left
        i = end
    return out


def _drop_empty_sections(units: list[Unit]) -> list[Unit]:
    """Drop headings (below the title) whose section holds nothing any more."""
    result: list[Unit] = []  # what follows the unit being looked at, farthest first
    for unit in reversed(units):
        if unit.kind == "heading" and unit.level > 1:
            content = False
            for nxt in reversed(result):  # nearest first
                if nxt.kind == "blank":
                    continue
                content = not (nxt.kind == "heading" and nxt.level <= unit.level)
                break
            if not content:
                continue
        result.append(unit)
    result.reverse()
    return result


def edit(draft: str, language: str, changes: Mapping[SentenceKey, str | None]) -> str:
    """Apply sentence replacements (``None``: remove) and return the new draft."""
    if not changes:
        return draft
    units = parse(draft, language)
    for (u, i), new in changes.items():
        unit = units[u]
        unit.sentences[i] = new or ""
        unit.edited = True
    kept = _drop_empty_tables([u for u in units if u.kind == "row" or not _empty(u)])
    text = "\n".join(u.render() for u in _drop_empty_sections(kept))
    return re.sub(r"\n{3,}", "\n\n", text).strip()
