"""Citations in a report: find them, drop the ones that point nowhere, render the references."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from deskresearch.records import Source
from deskresearch.text.clean import inert_label, markdown_literal

# [3], [1, 2], [1; 4] — but not markdown links [text](url) or footnotes [^1].
_CITE = re.compile(r"\s?\[(\d{1,4}(?:\s*[,;]\s*\d{1,4})*)\](?!\()")
_HEADING = re.compile(r"^#{1,6}\s+\S", re.MULTILINE)
# A reference entry starts with its number in brackets or carries a URL.
_REF_LINE = re.compile(r"^\s*(?:[-*]\s*|\d+[.)]\s*)?\[\d+\]|https?://", re.IGNORECASE)


def ids_in(text: str) -> list[int]:
    """Return the source ids ``text`` cites, in order of first use."""
    ids: list[int] = []
    for m in _CITE.finditer(text):
        ids += [i for i in (int(x) for x in re.split(r"\s*[,;]\s*", m.group(1))) if i not in ids]
    return ids


def without_citations(text: str) -> str:
    """Return ``text`` with its citation markers removed."""
    return " ".join(_CITE.sub(" ", text).split())


_CITE_RUN = re.compile(rf"(?:{_CITE.pattern})+")


def claims_of(sentence: str) -> list[tuple[str, list[int]]]:
    """Split ``sentence`` into its claims: the parts its citation markers close, with their ids.

    "A rose 5% [1], while B fell [2]." gives ("A rose 5%", [1]) and ("while B fell.", [2]);
    words after the last marker go with the last claim, and a sentence citing once is one claim.
    """
    claims: list[tuple[str, list[int]]] = []
    start = 0
    for m in _CITE_RUN.finditer(sentence):
        text = " ".join(sentence[start : m.start()].split()).lstrip(",;: ")
        if text or not claims:
            claims.append((text, ids_in(m.group(0))))
        else:  # two runs of markers in a row: one claim citing both
            claims[-1][1].extend(i for i in ids_in(m.group(0)) if i not in claims[-1][1])
        start = m.end()
    rest = " ".join(sentence[start:].split())
    if claims and rest:
        glue = "" if rest[0] in ".,;:!?" else " "
        claims[-1] = (f"{claims[-1][0]}{glue}{rest}".strip(), claims[-1][1])
    return [(t, ids) for t, ids in claims if t] or [(rest, [])]


def recite(text: str, ids: Sequence[int]) -> str:
    """Replace the citations of ``text`` by ``ids``, where its first citation stood."""
    first = True

    def swap(m: re.Match[str]) -> str:
        nonlocal first
        if not first:
            return ""
        first = False
        return " " + "".join(f"[{i}]" for i in ids)

    return _CITE.sub(swap, text)


@dataclass(frozen=True)
class Cleaned:
    """A report body after citation checking."""

    text: str
    cited: list[int]  # ledger ids the text cites, in order of first use
    removed: list[int]  # ids the text cited that are not in the ledger


def clean_citations(text: str, valid: Collection[int]) -> Cleaned:
    """Remove citations of ids not in ``valid``; keep the rest as written."""
    cited: list[int] = []
    removed: list[int] = []

    def fix(m: re.Match[str]) -> str:
        ids = [int(x) for x in re.split(r"\s*[,;]\s*", m.group(1))]
        good = [i for i in ids if i in valid]
        removed.extend(i for i in ids if i not in valid)
        cited.extend(i for i in good if i not in cited)
        if not good:
            return ""
        lead = " " if m.group(0).startswith((" ", "\n", "\t")) else ""
        return lead + "".join(f"[{i}]" for i in good)

    return Cleaned(_CITE.sub(fix, text), cited, removed)


def strip_model_references(text: str) -> str:
    """Drop a trailing section that lists references: ours come from the ledger, not the model."""
    headings = list(_HEADING.finditer(text))
    if not headings:
        return text.strip()
    last = headings[-1]
    body = [ln for ln in text[last.end() :].splitlines()[1:] if ln.strip()]
    if body and sum(bool(_REF_LINE.search(ln)) for ln in body) >= max(1, len(body) // 2 + 1):
        return text[: last.start()].rstrip()
    return text.strip()


def reference_label(text: str) -> str:
    """A page-written label (title, site, date) as inert markdown: plain text, markup escaped."""
    return markdown_literal(inert_label(text))


REFERENCES = "References"


def body_of(report: str) -> str:
    """The report before its References section (whose ``[n]`` lines list, not cite)."""
    return report.split(f"\n## {REFERENCES}\n", 1)[0]


def render_references(sources: Sequence[Source], heading: str = REFERENCES) -> str:
    """Render the ledger as the report's reference list.

    Titles, site names and dates are the pages' own words: printed as inert text (no link, no
    URL, no markup), so each entry links to one address only, the source's own.
    """
    lines = [f"## {heading}", ""]
    for s in sources:
        title = reference_label(s["title"])
        parts = [f"[{s['id']}] {title or s['url']}"]
        if site := reference_label(s["site"]):
            parts.append(site)
        if published := reference_label(s["published"]):
            parts.append(f"published {published}")
        read = "search snippet only" if s["origin"] == "snippet" else "read"
        parts.append(f"<{s['url']}> ({read} {s['date_read']})")
        lines.append(". ".join(parts) + "  ")
    return "\n".join(lines)
