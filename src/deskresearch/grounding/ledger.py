"""The evidence each numbered source offers the citation check, and the check's summary line."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from deskresearch.grounding.lexical import Evidence
from deskresearch.records import Citation, Source
from deskresearch.state import PageDigest

VERDICT_ORDER = ("supported", "re-cited", "rewritten", "removed", "unchecked")


def ledger_evidence(sources: Sequence[Source], pages: Sequence[PageDigest]) -> dict[int, Evidence]:
    """Map each source id to what we read of it (found by its text hash) and its facts.

    Its publication date goes with it (``Evidence.statements``): a sentence may date a source's
    figure by it ("in 2018, ... [2]").
    """
    read: Mapping[str, PageDigest] = {p["text_hash"]: p for p in pages}
    out: dict[int, Evidence] = {}
    for s in sources:
        page = read.get(s["text_hash"])
        out[s["id"]] = Evidence(
            id=s["id"],
            text=page["text"] if page else "",
            quotes=tuple(f["quote"] for f in s["facts"]),
            claims=tuple(f["claim"] for f in s["facts"]),
            language=page["language"] if page else "",
            published=s["published"],
        )
    return out


def summary_line(citations: Sequence[Citation]) -> str:
    """One line for people: ``41 checked · 38 supported · 2 re-cited · 1 removed``."""
    counts: Counter[str] = Counter(c["verdict"] for c in citations)
    checked = len(citations) - counts["unchecked"]
    parts = [f"{checked} checked"]
    parts += [f"{counts[v]} {v}" for v in VERDICT_ORDER if counts[v]]
    return " · ".join(parts)
