"""Benchmark: wall time against the critical-path bound, calls, tokens and memory per run.

Every run is the real graph (real ChatOpenAI, tavily-python, httpx, trafilatura) against the
loopback web from the test suite, with a latency model on the fake model, search and pages:
a model call costs ``call_s + in_tokens * per_in + out_tokens * per_out``. The critical-path
bound is the time the run would take if every independent call ran at once: the longest chain
of dependent calls of that very run, each timed by the latency model from its real token counts.
Each run happens in its own process, so peak RSS is per run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import resource
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.support.loopback import Call

ROOT = Path(__file__).resolve().parents[1]
TOPICS = [
    "How are lithium-ion batteries from electric cars recycled?",
    "What limits the growth of night trains in Europe?",
    "How do open licences change how research is evaluated?",
]
_QUERY = re.compile(r"^Query: (.*)$", re.MULTILINE)
_PAGE_URL = re.compile(r'<page url="([^"]+)"')


def _user_text(body: dict[str, Any]) -> str:
    return "\n".join(
        str(m.get("content") or "") for m in body["messages"] if m.get("role") == "user"
    )


def critical_path(log: list[Call], queries: list[str], base: str) -> float:
    """Longest chain of dependent calls: keywords → keyword searches → plan → per query
    (search + rank) → per page (fetch → slowest chunk → reduce) → report."""
    model = [c for c in log if c.kind == "model"]

    def seq(stage: str) -> float:  # calls of one step run one after another
        return sum(c.seconds for c in model if c.key == stage)

    searches = [c for c in log if c.kind == "search"]
    kw_search = max((c.seconds for c in searches if c.key not in queries), default=0.0)
    per_query: dict[str, float] = defaultdict(float)
    for c in searches:
        if c.key in queries:
            per_query[c.key] += c.seconds
    for c in model:
        if c.key == "Ranking" and (m := _QUERY.search(_user_text(c.body))):
            per_query[m.group(1)] += c.seconds
    fetch: dict[str, float] = defaultdict(float)
    for c in log:
        if c.kind == "fetch":
            fetch[base + c.key] += c.seconds
    chunk: dict[str, float] = defaultdict(float)
    reduce: dict[str, float] = defaultdict(float)
    for c in model:
        m = _PAGE_URL.search(_user_text(c.body))
        if m and c.key == "ChunkSummary":
            chunk[m.group(1)] = max(chunk[m.group(1)], c.seconds)
        elif m and c.key == "PageSummary":
            reduce[m.group(1)] += c.seconds
    pages = set(fetch) | set(chunk)
    page_path = max((fetch[p] + chunk[p] + reduce[p] for p in pages), default=0.0)
    return (
        seq("Keywords") + kw_search + seq("QueryPlan") + max(per_query.values(), default=0.0)
        + page_path + seq("report")
    )  # fmt: skip


async def _one(params: dict[str, Any]) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    from tests.support.loopback import FakeWeb, Latency, serve
    from tests.support.runs import context_for, graph_for

    web = FakeWeb(latency=Latency(**params["latency"]))
    with serve(web):
        graph = graph_for(web, max_concurrency=params["max_concurrency"])
        start = time.perf_counter()
        out = await graph.ainvoke(
            {"topic": params["topic"]}, context=context_for(web, **params["context"])
        )
        wall = time.perf_counter() - start
        bound = critical_path(web.log, out["queries"], web.base)
    usage = out["usage"]
    tokens_in = sum(u["input_tokens"] for u in usage)
    return {
        "topic": params["topic"],
        "status": out["status"],
        "wall_s": wall,
        "bound_s": bound,
        "ratio": wall / bound if bound else 0.0,
        "model_calls": sum(u["calls"] for u in usage),
        "calls_by_stage": {u["stage"]: u["calls"] for u in usage},
        "tokens_in": tokens_in,
        "tokens_out": sum(u["output_tokens"] for u in usage),
        "tokens_in_by_stage": {u["stage"]: u["input_tokens"] for u in usage},
        "searches": sum(1 for c in web.log if c.kind == "search"),
        "pages_fetched": sum(1 for c in web.log if c.kind == "fetch"),
        "max_fetches_per_url": max(web.fetches.values(), default=0),
        "sources": len(out["sources"]),
        "tokens_in_per_source": tokens_in / max(len(out["sources"]), 1),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run_isolated(params: dict[str, Any]) -> dict[str, Any]:
    """Run one research in a fresh process (so its peak RSS is its own)."""
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", "--one", json.dumps(params)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"bench run failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _row(r: dict[str, Any]) -> str:
    return (
        f"| {r['label']} | {r['wall_s']:.2f} | {r['bound_s']:.2f} | {r['ratio']:.2f} | {r['model_calls']} "
        f"| {r['tokens_in']} / {r['tokens_out']} | {r['searches']} | {r['pages_fetched']} "
        f"| {r['sources']} | {r['tokens_in_per_source']:.0f} | {r['peak_rss_mb']:.0f} |"
    )


HEADER = (
    "| run | wall s | bound s | ratio | model calls | tokens in / out | searches | pages fetched "
    "| sources | in-tokens per source | peak RSS MB |\n|---|---|---|---|---|---|---|---|---|---|---|"
)


def main(argv: list[str] | None = None) -> int:
    """Print the benchmark tables."""
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--one", help=argparse.SUPPRESS)
    p.add_argument("--call-s", type=float, default=0.3, help="fixed seconds per model call")
    p.add_argument("--per-in-token-s", type=float, default=0.00005, help="seconds per input token")
    p.add_argument("--per-out-token-s", type=float, default=0.005, help="seconds per output token")
    p.add_argument("--search-s", type=float, default=0.4, help="seconds per search request")
    p.add_argument("--fetch-s", type=float, default=0.2, help="seconds per page request")
    p.add_argument("--max-concurrency", type=int, default=8, help="graph max_concurrency")
    p.add_argument("--topics", type=int, default=3, help="how many topics (1-3)")
    p.add_argument("--scale", action="store_true", help="grow queries × urls × chunks instead")
    args = p.parse_args(argv)
    if args.one:
        print(json.dumps(asyncio.run(_one(json.loads(args.one)))))
        return 0
    latency = {
        "call_s": args.call_s, "per_in_token_s": args.per_in_token_s, "per_out_token_s": args.per_out_token_s,
        "search_s": args.search_s, "fetch_s": args.fetch_s,
    }  # fmt: skip
    print(f"latency model: {latency}, max_concurrency={args.max_concurrency}\n")
    print(HEADER)
    if args.scale:
        points = [(2, 2, 6000), (4, 4, 6000), (4, 4, 1500), (6, 6, 1500), (8, 8, 800)]
        for q, u, chunk in points:
            ctx = {"decomposition_nums": q, "url_per_query": u, "max_chunk_tokens": chunk}
            r = run_isolated({"topic": TOPICS[0], "context": ctx, "latency": latency,
                              "max_concurrency": args.max_concurrency})  # fmt: skip
            print(_row({**r, "label": f"{q}q × {u}u, chunk {chunk}"}), flush=True)
        return 0
    results = []
    for topic in TOPICS[: args.topics]:
        r = run_isolated(
            {
                "topic": topic,
                "context": {},
                "latency": latency,
                "max_concurrency": args.max_concurrency,
            }
        )
        results.append(r)
        print(_row({**r, "label": topic[:40]}), flush=True)
    med = {
        k: statistics.median(r[k] for r in results)
        for k in results[0]
        if isinstance(results[0][k], int | float)
    }
    print(_row({**med, "label": "**median**", "model_calls": int(med["model_calls"]),
                "tokens_in": int(med["tokens_in"]), "tokens_out": int(med["tokens_out"]),
                "searches": int(med["searches"]), "pages_fetched": int(med["pages_fetched"]),
                "sources": int(med["sources"])}))  # fmt: skip
    print("\nmodel calls per stage (first topic):", results[0]["calls_by_stage"])
    print("input tokens per stage (first topic):", results[0]["tokens_in_by_stage"])
    print("max fetches of one URL:", max(r["max_fetches_per_url"] for r in results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
