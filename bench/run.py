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
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.cli_mode import LATENCY as CLI_LATENCY
from bench.cli_mode import cli_main
from bench.measure import (
    children_peak_rss_mb,
    critical_path,
    extraction_ms_per_page,
    peak_overlap,
)
from bench.web import web_process

ROOT = Path(__file__).resolve().parents[1]
LATENCY = {"call_s": 0.3, "per_in_token_s": 0.00005, "per_out_token_s": 0.005,
           "search_s": 0.4, "fetch_s": 0.2}  # fmt: skip
TOPICS = [
    "How are lithium-ion batteries from electric cars recycled?",
    "What limits the growth of night trains in Europe?",
    "How do open licences change how research is evaluated?",
]


async def _one(params: dict[str, Any]) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    from deskresearch.services.model.client_import import client_imported
    from tests.support.hostile import PAGES
    from tests.support.runs import context_for, graph_for

    with web_process(params["latency"], params.get("port", 0)) as (web, server_pid):
        graph = graph_for(web, max_concurrency=params["max_concurrency"])
        # The model client is imported at the first call (the CLI imports it on a thread): here
        # before the clock, so the wall is the graph's, as it was before that change.
        await client_imported()
        start = time.perf_counter()
        out = await graph.ainvoke(
            {"topic": params["topic"]}, context=context_for(web, **params["context"])
        )
        wall = time.perf_counter() - start
        workers_mb = children_peak_rss_mb(exclude={server_pid})
    bound = critical_path(web.log, out["queries"])
    fetched = [PAGES / k.removeprefix("/pages/") for k in web.fetches if k.startswith("/pages/")]
    usage = out["usage"]
    tokens_in = sum(u["input_tokens"] for u in usage)
    return {
        "topic": params["topic"],
        "status": out["status"],
        "wall_s": wall,
        "bound_s": bound,
        "ratio": wall / bound if bound else 0.0,
        "model_calls": sum(u["calls"] for u in usage),
        "cached_calls": sum(u.get("cached_calls", 0) for u in usage),
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
        "workers_rss_mb": workers_mb,
        "extract_ms_per_page": extraction_ms_per_page(fetched),
        "peak_model_calls": peak_overlap(web.log, "model"),
        "peak_fetches": peak_overlap(web.log, "fetch"),
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
        f"| {r['label']} | {r['wall_s']:.2f} | {r['bound_s']:.2f} | {r['ratio']:.2f} "
        f"| {r['model_calls']} | {r['tokens_in']:.0f} / {r['tokens_out']:.0f} | {r['searches']:.0f} "
        f"| {r['pages_fetched']:.0f} | {r['sources']:.0f} | {r['tokens_in_per_source']:.0f} "
        f"| {r['extract_ms_per_page']:.0f} | {r['peak_rss_mb']:.0f} + {r['workers_rss_mb']:.0f} |"
    )


HEADER = (
    "| run | wall s | bound s | ratio | model calls | tokens in / out | searches | pages fetched "
    "| sources | in-tokens per source | extract ms/page | peak RSS MB (main + workers) |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|"
)
LIMITS_HEADER = (
    "| limits | wall s | bound s | ratio | peak model calls in flight | peak fetches in flight |\n"
    "|---|---|---|---|---|---|"
)


def _limits(base: dict[str, Any]) -> None:
    """Same research under tighter and looser explicit limits: what reaches the providers."""
    print(LIMITS_HEADER)
    for calls, fetches, per_host in [(1, 1, 1), (2, 4, 1), (4, 8, 2), (8, 16, 4), (32, 64, 16)]:
        ctx = {"max_model_calls": calls, "max_fetches": fetches, "max_fetches_per_host": per_host}
        r = run_isolated({**base, "context": {**base["context"], **ctx}})
        print(
            f"| {calls} calls, {fetches} fetches, {per_host}/host | {r['wall_s']:.2f} "
            f"| {r['bound_s']:.2f} | {r['ratio']:.2f} | {r['peak_model_calls']} "
            f"| {r['peak_fetches']} |",
            flush=True,
        )


def _scale(base: dict[str, Any]) -> None:
    """Grow queries × urls × chunks and show how time, tokens and memory follow."""
    print(HEADER)
    for q, u, chunk in [(2, 2, 6000), (4, 4, 6000), (4, 4, 1500), (6, 6, 1500), (8, 8, 800)]:
        ctx = {"decomposition_nums": q, "url_per_query": u, "max_chunk_tokens": chunk}
        r = run_isolated({**base, "context": ctx})
        print(_row({**r, "label": f"{q}q × {u}u, chunk {chunk}"}), flush=True)


def _topics(base: dict[str, Any], n: int) -> None:
    """The default settings over ``n`` topics, with medians."""
    print(HEADER)
    results = []
    for topic in TOPICS[:n]:
        r = run_isolated({**base, "topic": topic})
        results.append(r)
        print(_row({**r, "label": topic[:40]}), flush=True)
    med = {
        k: statistics.median(r[k] for r in results)
        for k in results[0]
        if isinstance(results[0][k], int | float)
    }
    print(_row({**med, "label": "**median**", "model_calls": int(med["model_calls"])}))
    print("\nmodel calls per stage (first topic):", results[0]["calls_by_stage"])
    print("input tokens per stage (first topic):", results[0]["tokens_in_by_stage"])
    print("max fetches of one URL:", max(r["max_fetches_per_url"] for r in results))


def _cached(base: dict[str, Any], n: int) -> None:
    """Each topic run twice against one cache file (two processes, as two CLI runs)."""
    print(HEADER)
    for topic in TOPICS[:n]:
        with tempfile.TemporaryDirectory() as tmp, socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))  # one port for both runs: URLs are cache keys
            port = probe.getsockname()[1]
            probe.close()
            ctx = {"cache": True, "cache_path": str(Path(tmp) / "cache.sqlite")}
            for label in ("first run", "re-run"):
                r = run_isolated({**base, "topic": topic, "port": port, "context": ctx})
                print(_row({**r, "label": f"{topic[:30]}: {label}"}), flush=True)
        print(f"model calls answered from the cache on the re-run: {r['cached_calls']}")


def main(argv: list[str] | None = None) -> int:
    """Print the benchmark tables."""
    p = argparse.ArgumentParser(
        prog="python -m bench",
        description=__doc__.split("\n\n")[0],
        epilog="--cli: flags after -- go to every deskresearch run, e.g. "
        "python -m bench --cli -- --report-mode single",
    )
    p.add_argument("--one", help=argparse.SUPPRESS)
    for flag, what, default in [
        ("--call-s", "fixed seconds per model call", "0.3 / --cli 0.3"),
        ("--per-in-token-s", "seconds per input token", "0.00005 / --cli 0"),
        ("--per-out-token-s", "seconds per output token", "0.005 / --cli 0.003"),
        ("--search-s", "seconds per search request", "0.4 / --cli 0.3"),
        ("--fetch-s", "seconds per page request", "0.2 / --cli 0.2"),
    ]:
        p.add_argument(flag, type=float, help=f"{what} (default {default})")
    p.add_argument("--max-concurrency", type=int, default=32, help="graph max_concurrency")
    p.add_argument("--topics", type=int, default=3, help="how many topics (1-3)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--scale", action="store_true", help="grow queries × urls × chunks")
    mode.add_argument("--limits", action="store_true", help="vary the explicit call limits")
    mode.add_argument("--cached", action="store_true", help="each topic twice, with the cache")
    mode.add_argument(
        "--cli", action="store_true", help="the deskresearch command as a process, as users wait"
    )
    p.add_argument(
        "--as-module",
        action="store_true",
        help="--cli: run `python -m deskresearch` instead of the installed `deskresearch`",
    )
    p.add_argument(
        "--python",
        default=sys.executable,
        help="--cli: the Python of the install to time, e.g. .venv-user/bin/python of a venv made "
        "with the README's first command (default: this one, which has the dev extras)",
    )
    p.add_argument(
        "--no-profile",
        action="store_true",
        help="--cli: skip the two extra runs (phases, -X importtime)",
    )
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args, passed = p.parse_args(argv[:cut]), argv[cut + 1 :]
    if passed and not args.cli:
        p.error("flags after -- are passed to the deskresearch command: only with --cli")
    if args.one:
        print(json.dumps(asyncio.run(_one(json.loads(args.one)))))
        return 0
    latency = {
        k: getattr(args, k) if getattr(args, k) is not None else default
        for k, default in (CLI_LATENCY if args.cli else LATENCY).items()
    }
    if args.cli:
        topics = TOPICS[: args.topics]
        return cli_main(
            latency,
            topics,
            profile=not args.no_profile,
            module=args.as_module,
            extra=passed,
            python=args.python,
        )
    print(f"latency model: {latency}, max_concurrency={args.max_concurrency}\n")
    base = {"topic": TOPICS[0], "context": {}, "latency": latency,
            "max_concurrency": args.max_concurrency}  # fmt: skip
    if args.scale:
        _scale(base)
    elif args.limits:
        _limits(base)
    elif args.cached:
        _cached(base, args.topics)
    else:
        _topics(base, args.topics)
    return 0


if __name__ == "__main__":
    sys.exit(main())
