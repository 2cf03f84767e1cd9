"""A citation's independent origins: the sources that state it, copies once, none when removed."""

from __future__ import annotations

from typing import Any

from deskresearch.grounding.lexical import Evidence
from deskresearch.nodes.finish_report import weighed

SAID = "The plant in Lyon recycled 45,000 tonnes of batteries in 2024."


def source(i: int, group: int) -> Any:
    return {"id": i, "origin_group": group, "published": f"2024-0{i}-01"}


def evidence(i: int, text: str) -> Evidence:
    return Evidence(id=i, text=text, quotes=(text,), claims=(), language="en")


def citation(verdict: str, cites: list[int], quote_source: int | None) -> Any:
    return {"sentence": SAID if verdict != "removed" else "", "original": SAID, "sources": cites,
            "verdict": verdict, "quote": SAID, "quote_source": quote_source,
            "decided_by": "judge", "reason": "", "section": ""}  # fmt: skip


SOURCES = [source(1, 1), source(2, 2), source(3, 1), source(4, 4)]
LEDGER = {
    1: evidence(1, SAID),
    2: evidence(2, "Lyon is a city in France with a long history of silk weaving."),
    3: evidence(3, SAID + " Reprinted from the operator's release."),  # a copy of 1
    4: evidence(4, "In 2024 the Lyon plant recycled 45,000 tonnes of batteries, it said."),
}


def origins(c: Any) -> int:
    [out] = weighed([c], SOURCES, LEDGER, "en")
    return int(out["origins"])


def test_a_cited_page_that_does_not_state_the_sentence_adds_no_origin() -> None:
    assert origins(citation("supported", [1, 2], 1)) == 1


def test_copies_count_once_and_an_independent_page_that_states_it_counts() -> None:
    assert origins(citation("supported", [1, 3], 1)) == 1
    assert origins(citation("supported", [1, 3, 4], 1)) == 2


def test_a_removed_sentence_has_no_origin_and_dates_stay_those_of_its_sources() -> None:
    [out] = weighed([citation("removed", [1, 4], None)], SOURCES, LEDGER, "en")
    assert out["origins"] == 0 and out["published"] == ["2024-01-01", "2024-04-01"]
