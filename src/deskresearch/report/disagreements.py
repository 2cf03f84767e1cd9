"""The report's closing section on disagreements: written by code, checked like any sentence.

Each disagreement is a list item naming what it is about, with one sub-item per side: the
side's fact as its source states it, citing one source per independent origin that gives that
value. The section joins the draft before the citation check, so each side is checked against
the page it cites; ``settle`` then keeps a disagreement only when the check supported every
side, and removes the others whole (never one side of a disagreement alone).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from deskresearch.grounding.draft import SentenceKey, Unit, language_code, parse
from deskresearch.records import Disagreement, ValueSide

HEADINGS = {
    "en": "Where the sources disagree",
    "de": "Wo die Quellen sich widersprechen",
    "fr": "Où les sources divergent",
    "es": "Dónde discrepan las fuentes",
    "it": "Dove le fonti non concordano",
    "pt": "Onde as fontes divergem",
    "nl": "Waar de bronnen elkaar tegenspreken",
}
_MARKERS = re.compile(r"\s*\[\d+(?:\s*[,;]\s*\d+)*\]")


def heading(language: str) -> str:
    """The section's heading in the report's language (English where none is written)."""
    return HEADINGS.get(language_code(language), HEADINGS["en"])


def _line(text: str) -> str:
    """Model or page words as one plain line: no markup that could start a heading or list."""
    flat = " ".join(_MARKERS.sub("", text).replace("#", " ").split())
    return flat.lstrip("-*+> ").rstrip(" .;:")


def side_sentence(side: ValueSide) -> str:
    """The sentence a side gets: its fact, citing one source per origin."""
    cites = "".join(f"[{i}]" for i in side["cites"])
    return f"{_line(side['claim'])} {cites}."


def about_line(d: Disagreement) -> str:
    """The item that names what a disagreement is about (not a claim: it cites nothing)."""
    return f"{_line(d['about'])}:"


def section(disagreements: Sequence[Disagreement], language: str) -> str:
    """The closing section ("" when there is nothing to show)."""
    if not disagreements:
        return ""
    lines = [f"## {heading(language)}", ""]
    for d in disagreements:
        lines.append(f"- {about_line(d)}")
        lines += [f"  - {side_sentence(s)}" for s in d["sides"]]
    return "\n".join(lines)


def with_section(draft: str, disagreements: Sequence[Disagreement], language: str) -> str:
    """The draft with the disagreements' section at its end."""
    part = section(disagreements, language)
    return f"{draft.rstrip()}\n\n{part}" if part else draft


def _entries(units: list[Unit], language: str) -> list[list[int]]:
    """The unit indices of each entry of the section: its about item, then its sides."""
    title = f"## {heading(language)}"
    start = max((i for i, u in enumerate(units) if u.kind == "heading"
                 and u.raw.strip() == title), default=None)  # fmt: skip
    if start is None:
        return []
    entries: list[list[int]] = []
    for i in range(start + 1, len(units)):
        u = units[i]
        if u.kind == "heading":
            break
        if u.kind != "item":
            continue
        if u.prefix[:1].isspace() and entries:
            entries[-1].append(i)
        else:
            entries.append([i])
    return entries


def settle(
    draft: str,
    language: str,
    disagreements: Sequence[Disagreement],
    verdicts: Mapping[SentenceKey, str],
    *,
    checked: bool,
) -> tuple[list[Disagreement], dict[SentenceKey, None], list[tuple[Disagreement, str]]]:
    """Keep the disagreements whose every side the check supported; remove the rest whole.

    ``verdicts`` maps each cited sentence of the draft to its check status. Returns the kept
    disagreements (``checked`` set), the sentences to remove, and each dropped one with why.
    With the check turned off (``checked`` False) every disagreement stays, marked unchecked.
    """
    units = parse(draft, language)
    entries = _entries(units, language)
    kept: list[Disagreement] = []
    removals: dict[SentenceKey, None] = {}
    dropped: list[tuple[Disagreement, str]] = []
    for d, entry in zip(disagreements, entries, strict=False):
        sides = entry[1:]
        statuses = [
            next((verdicts[(i, n)] for n in range(len(units[i].sentences)) if (i, n) in verdicts),
                 "missing")
            for i in sides
        ]  # fmt: skip
        if not checked:
            kept.append({**d, "checked": False})
            continue
        bad = sorted({s for s in statuses if s != "supported"})
        if not bad and len(sides) == len(d["sides"]):
            kept.append({**d, "checked": True})
            continue
        for i in entry:
            for n in range(len(units[i].sentences)):
                removals[(i, n)] = None
        why = f"a side was not supported by the page it cites ({', '.join(bad) or 'missing'})"
        dropped.append((d, why))
    return kept, removals, dropped
