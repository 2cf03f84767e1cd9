"""Re-running a research with the cache: no model tokens, no searches, no page downloads."""

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.integration_tests.test_cli import cli
from tests.support.loopback import FakeWeb
from tests.support.runs import context_for, graph_for

pytestmark = pytest.mark.anyio
TOPIC = "EV battery recycling"


def kinds(web: FakeWeb) -> Counter[str]:
    return Counter(call.kind for call in web.log)


async def research(web: FakeWeb, cache_path: Path, **ctx: Any) -> dict[str, Any]:
    context = context_for(web, cache=True, cache_path=str(cache_path), **ctx)
    out = await graph_for(web).ainvoke({"topic": TOPIC}, context=context)
    assert isinstance(out, dict) and out["status"] == "ok"
    return out


def cached(out: dict[str, Any], stage: str) -> list[dict[str, Any]]:
    return [p for p in out["provenance"] if p["outcome"] == "cached" and p["stage"] == stage]


async def test_a_rerun_costs_no_tokens_no_searches_and_no_downloads(
    web: FakeWeb, tmp_path: Path
) -> None:
    first = await research(web, tmp_path / "cache.sqlite")
    spent = kinds(web)
    assert spent["model"] and spent["search"] and spent["fetch"]
    second = await research(web, tmp_path / "cache.sqlite")
    assert kinds(web) == spent  # the loopback web saw nothing new
    assert second["report"] == first["report"] and second["sources"] == first["sources"]
    assert sum(u["input_tokens"] + u["output_tokens"] + u["calls"] for u in second["usage"]) == 0
    calls = sum(u["calls"] for u in first["usage"])
    assert sum(u.get("cached_calls", 0) for u in second["usage"]) == calls
    assert not any(p["outcome"] == "cached" for p in first["provenance"])
    searched = {p["subject"] for p in first["provenance"] if p["outcome"] == "issued"}
    assert {
        p["subject"] for p in cached(second, "search_keyword") + cached(second, "search_query")
    } == searched
    pages = {s["url"] for s in first["sources"] if s["origin"] == "page"}
    assert pages <= {p["subject"] for p in cached(second, "read_page")}
    (line,) = cached(second, "finish_report")
    assert line["reason"].startswith(f"{calls} of {calls} answers from the cache")


async def test_stale_pages_are_revalidated_not_downloaded(web: FakeWeb, tmp_path: Path) -> None:
    # Only the pages read (a prefetch would revalidate the results ranked out too).
    await research(web, tmp_path / "cache.sqlite", cache_page_hours=0, prefetch_pages=False)
    downloads = sum(web.fetches.values())
    second = await research(web, tmp_path / "cache.sqlite", cache_page_hours=0,
                            prefetch_pages=False)  # fmt: skip
    revalidated = [p for p in cached(second, "read_page") if "304" in p["reason"]]
    assert revalidated and sum(web.not_modified.values()) == len(revalidated)
    # Each page asked once more and answered 304: downloaded once in all.
    assert all(web.fetches[path] == 2 for path in web.not_modified)
    assert sum(web.fetches.values()) > downloads
    assert sum(u["input_tokens"] for u in second["usage"]) == 0


def test_cli_reruns_from_the_cache_and_no_cache_turns_it_off(web: FakeWeb, tmp_path: Path) -> None:
    env = {"DESKRESEARCH_CACHE": "true", "DESKRESEARCH_CACHE_PATH": str(tmp_path / "c.sqlite")}
    first = cli(web, TOPIC, "-o", str(tmp_path / "a"), "--progress", "plain", env=env)
    assert first.returncode == 0, first.stderr
    models = kinds(web)["model"]
    second = cli(web, TOPIC, "-o", str(tmp_path / "b"), "--progress", "plain", env=env)
    assert second.returncode == 0, second.stderr
    assert kinds(web)["model"] == models
    assert f"model calls: {models} ({models} from the cache)" in second.stderr
    assert "tokens: 0 in / 0 out" in second.stderr
    third = cli(web, TOPIC, "-o", str(tmp_path / "c"), "--progress", "plain", "--no-cache", env=env)
    assert third.returncode == 0, third.stderr
    assert kinds(web)["model"] == 2 * models and "(0 from the cache)" in third.stderr
