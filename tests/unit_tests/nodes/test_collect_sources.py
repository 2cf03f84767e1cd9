"""collect_sources: a copy is noted in provenance when it is found, even in a later round."""

from __future__ import annotations

from typing import Any, cast

import pytest

from deskresearch.nodes.collect_sources import collect_sources
from tests.support.fakes import runtime

pytestmark = pytest.mark.anyio

RELEASE = " ".join(
    f"The recycling plant in town number {i} recovered {i * 10} tonnes of lithium from old "
    f"batteries during the pilot phase, the operator said in a statement on its results."
    for i in range(1, 12)
)


def digest(url: str, text: str, published: str, round_: int, order: int) -> dict[str, Any]:
    return {"url": url, "title": url, "site": url.split("/")[2], "published": published,
            "date_read": "2026-11-27", "queries": ["q"], "text_hash": str(hash(text)),
            "origin": "page", "facts": [], "order": order, "text": text, "language": "en",
            "round": round_}  # fmt: skip


async def test_an_earlier_source_found_a_copy_in_a_later_round_is_noted_then() -> None:
    reprint = digest("https://news.example/reprint", RELEASE + " Reprinted with permission.",
                     "2024-03-05", 1, 0)  # fmt: skip
    first = await collect_sources(cast(Any, {"pages": [reprint], "round": 1}), runtime())
    assert [s["copy_of"] for s in first["sources"]] == [None]
    assert not [p for p in first["provenance"] if p["outcome"] == "weighed"]
    original = digest("https://operator.example/release", RELEASE, "2024-03-01", 2, 1)
    state = {"pages": [reprint, original], "round": 2, "sources": first["sources"]}
    second = await collect_sources(cast(Any, state), runtime())
    by_url = {s["url"]: s for s in second["sources"]}
    assert by_url["https://news.example/reprint"]["copy_of"] == by_url[original["url"]]["id"]
    weighed = [p["subject"] for p in second["provenance"] if p["outcome"] == "weighed"]
    assert weighed == ["https://news.example/reprint"]  # a round-1 source, noted in round 2
