"""Load: 20 concurrent served runs with different budgets and settings, memory before and after.

    python -m bench.load [--runs 20] [--rounds 3] [--in-process]

Starts `langgraph dev` (offline, keys held by the server) against the loopback web, warms it up
with one run, then sends ``--runs`` runs at once through the SDK, each with its own token
budget, page count and cache choice. Prints, per run, whether its result matches its own
settings (no cross-run effects), and the server's resident memory: after warm-up, at the peak,
after each round once its threads are deleted and the server has settled. The first round
raises the allocator's high-water mark; later rounds show whether runs leave anything behind.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langgraph_sdk import get_client  # noqa: E402

from tests.support.loopback import FakeWeb, serve  # noqa: E402
from tests.support.runs import loopback_env  # noqa: E402
from tests.support.server import dev_server_process  # noqa: E402


def _rss(pid: int) -> float:
    status = Path(f"/proc/{pid}/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def children(pid: int) -> list[int]:
    """Every process below ``pid`` (the extraction workers)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        for child in (int(p) for p in task.read_text().split()):
            found += [child, *children(child)]
    return found


def rss_mb(pid: int) -> float:
    """Resident memory of the server process alone (its workers are counted by workers_mb)."""
    return _rss(pid)


def workers_mb(pid: int) -> float:
    """Resident memory of the server's worker processes together."""
    return sum(_rss(p) for p in children(pid))


def settings_for(i: int) -> dict[str, Any]:
    """Different budgets and settings per run: every third starves, pages per query vary."""
    budget = 1 if i % 3 == 0 else 50_000 + 1000 * i
    return {"token_budget": budget, "url_per_query": 1 + i % 3, "max_keywords": 1 + i % 2,
            "decomposition_nums": 2, "cache": i % 4 == 0}  # fmt: skip


async def one(client: Any, i: int) -> tuple[int, dict[str, Any], dict[str, Any]]:
    ctx = settings_for(i)
    thread = await client.threads.create()
    out = await client.runs.wait(
        thread["thread_id"], "researcher",
        input={"topic": f"EV battery recycling, aspect {i}"}, context=ctx,
    )  # fmt: skip
    state = await client.threads.get_state(thread["thread_id"])
    return i, out, {"thread": thread["thread_id"], "settings": state["values"]["settings"]}


async def round_of(client: Any, server_pid: int, runs: int, first: int) -> tuple[float, float, int]:
    """Run ``runs`` at once; print each; return (seconds, peak MB, runs with foreign effects)."""
    peak = rss_mb(server_pid)
    started = time.monotonic()
    task = asyncio.gather(*(one(client, i) for i in range(first, first + runs)))
    while not task.done():
        peak = max(peak, rss_mb(server_pid))
        await asyncio.sleep(0.2)
    results = await task
    seconds = time.monotonic() - started
    mixed = 0
    for i, out, seen in sorted(results):
        ctx = settings_for(i)
        own = all(seen["settings"].get(k) == v for k, v in ctx.items())
        stopped = bool(out.get("budget_stopped"))
        mixed += (not own) or stopped != (ctx["token_budget"] == 1)
        print(f"run {i:2d}: budget {ctx['token_budget']:>6} status {out.get('status'):22} "
              f"budget_stopped {stopped!s:5} sources {len(out.get('sources') or []):2d} "
              f"own settings {own}")  # fmt: skip
    for _, _, seen in results:
        await client.threads.delete(seen["thread"])
    return seconds, peak, mixed


async def load(url: str, server_pid: int, runs: int, rounds: int) -> None:
    async with get_client(url=url, timeout=600) as client:
        await one(client, 1)  # warm-up: imports, workers, tokenizer
        base = rss_mb(server_pid)
        print(
            f"server memory after warm-up: {base:.0f} MB (workers {workers_mb(server_pid):.0f} MB)"
        )
        for r in range(rounds):
            seconds, peak, mixed = await round_of(client, server_pid, runs, r * runs)
            await asyncio.sleep(5)
            settled = rss_mb(server_pid)
            print(f"round {r + 1}: {runs} concurrent served runs in {seconds:.1f} s; runs showing "
                  f"another run's settings or budget: {mixed}; server memory peak {peak:.0f} MB, "
                  f"threads deleted and settled {settled:.0f} MB ({settled - base:+.0f} vs "
                  f"warm-up); workers {workers_mb(server_pid):.0f} MB")  # fmt: skip


async def in_process(runs: int, rounds: int) -> None:
    """The same rounds against one compiled graph in this process, traced by tracemalloc.

    Prints what the graph's own code still holds after each round (allocations whose stack
    passes through deskresearch), which is what a leak of per-run state would show.
    """
    from tests.support.runs import context_for, graph_for

    with serve(FakeWeb()) as web:
        graph = graph_for(web)

        async def run_one(i: int) -> Any:
            ctx = context_for(web, **{k: v for k, v in settings_for(i).items() if k != "cache"})
            return await graph.ainvoke({"topic": f"EV battery recycling, aspect {i}"}, context=ctx)

        await run_one(1)
        gc.collect()
        tracemalloc.start(30)
        first = tracemalloc.take_snapshot()
        for r in range(rounds):
            await asyncio.gather(*(run_one(i) for i in range(r * runs, (r + 1) * runs)))
            gc.collect()
            snap = tracemalloc.take_snapshot().filter_traces(
                [tracemalloc.Filter(True, str(ROOT / "src" / "deskresearch" / "*"))]
            )
            ours = sum(st.size for st in snap.statistics("filename"))
            base = sum(
                st.size
                for st in first.filter_traces(
                    [tracemalloc.Filter(True, str(ROOT / "src" / "deskresearch" / "*"))]
                ).statistics("filename")
            )
            total = tracemalloc.get_traced_memory()[0] / 1e6
            print(f"in-process round {r + 1}: {runs} concurrent runs; memory held through "
                  f"deskresearch code {(ours - base) / 1e3:+.0f} KB vs before the rounds; all "
                  f"traced {total:.1f} MB")  # fmt: skip
        tracemalloc.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3, help="later rounds show a leak")
    parser.add_argument("--in-process", action="store_true", help="one graph here, tracemalloc")
    args = parser.parse_args()
    if args.in_process:
        asyncio.run(in_process(args.runs, args.rounds))
        return
    with serve(FakeWeb()) as web, tempfile.TemporaryDirectory() as tmp:
        env = loopback_env(web, DESKRESEARCH_CACHE_PATH=str(Path(tmp) / "cache.sqlite"))
        with dev_server_process(env, Path(tmp) / "server.log") as (url, pid):
            asyncio.run(load(url, pid, args.runs, args.rounds))


if __name__ == "__main__":
    main()
