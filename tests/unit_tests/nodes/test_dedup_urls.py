from typing import Any

import pytest

from deskresearch.nodes.dedup_urls import dedup_urls
from tests.support.fakes import hit, runtime

pytestmark = pytest.mark.anyio


async def test_dedup_urls_reads_each_page_once_and_remembers_every_query() -> None:
    a, b, c = hit(1), hit(2), hit(3)
    a_tracked = {**a, "url": a["url"] + "/?utm_source=x#frag"}
    state: Any = {
        "topic": "t",
        "language": "en",
        "round": 2,
        "ranked": [
            {"query": "q2", "order": 1, "hits": [a_tracked, c], "round": 2},
            {"query": "q1", "order": 0, "hits": [a, b], "round": 2},
            {"query": "q0", "order": 2, "hits": [hit(9)], "round": 1},  # an earlier round's
        ],
    }
    update = await dedup_urls(state, runtime())
    tasks = update["page_tasks"]
    assert [t["url"] for t in tasks] == [
        "https://example.org/1",
        "https://example.org/2",
        "https://example.org/3",
    ]
    assert tasks[0]["queries"] == ["q1", "q2"]
    assert [t["order"] for t in tasks] == [0, 1, 2] and {t["round"] for t in tasks} == {2}
    assert [p["outcome"] for p in update["provenance"]] == ["duplicate"]
    assert update["provenance"][0]["subject"] == a_tracked["url"]
