"""Benchmark: topics per minute for `deskresearch batch`, in one process and on Ray; peak memory.

``python -m bench.batch`` runs the same topics file (default: 12 topics, default settings) with
local concurrency 1, 4 and 8, then on a Ray cluster of 1 and of 2 nodes (2 CPUs each, 4 topics
per node), against the loopback web with the latency model of ``python -m bench``. The Ray part
runs inside a network namespace of its own (``unshare -n``, root) with its own PostgreSQL.
The **ceiling** is what the model-call limit allows: ``max_model_calls`` calls in flight (one
limit for the whole batch, cluster-wide under Ray), each taking the mean call time measured,
for the model calls a topic needs: 60 × limit / (calls per topic × seconds per call).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.measure import children_peak_rss_mb, peak_overlap
from bench.web import ROOT, web_process
from deskresearch.config.context import Context

TOPICS = [
    "How are lithium-ion batteries from electric cars recycled?",
    "What limits the growth of night trains in Europe?",
    "How do open licences change how research is evaluated?",
    "Do heat pumps work in old, poorly insulated houses?",
    "What does desalinated drinking water cost?",
    "Is urban beekeeping good for wild bees?",
    "How reliable are tidal power plants?",
    "What slows the recycling of wind turbine blades?",
    "How do cities plan for heat waves?",
    "What is the carbon footprint of data centres?",
    "How are microplastics measured in rivers?",
    "Why do train tickets cost more than flights?",
]
MODEL_CALLS = Context().summary_spec().max_concurrent  # the default limit (a hosted API)
PG_PORT = "55434"


def _child(args: list[str]) -> None:
    """Run the batch command in this process; print its peak memory (and its workers')."""
    from deskresearch.batch.cli import main

    code = main(args)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"code": code, "rss_mb": rss, "workers_mb": children_peak_rss_mb(set())}))


def _batch(env: dict[str, str], args: list[str]) -> tuple[dict[str, Any], float]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "bench.batch", "--child", json.dumps(args)],
        env=env, cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"batch failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1]), wall


def _measure(label: str, latency: dict[str, float], n: int, flags: list[str],
             env_extra: dict[str, str], tmp: Path, calls: int = MODEL_CALLS) -> dict[str, Any]:  # fmt: skip
    """One batch of ``n`` topics under ``flags`` (``calls``: its model-call limit)."""
    from tests.support.runs import loopback_env

    file = tmp / f"{label}.txt"
    file.write_text("\n".join(TOPICS[:n]) + "\n", encoding="utf-8")
    out = tmp / label
    with web_process(latency) as (web, _):
        checkpoints = {"DESKRESEARCH_CHECKPOINTS": str(tmp / f"{label}.sqlite")}
        env = loopback_env(web, **(checkpoints | env_extra))
        peak, wall = _batch(env, [str(file), "-o", str(out), "-q", *flags])
    rows = json.loads((out / "batch.json").read_text(encoding="utf-8"))["topics"]
    if peak["code"] != 0 or any(r["status"] != "ok" for r in rows):
        raise SystemExit(f"{label}: not every topic ended ok: {[r['status'] for r in rows]}")
    model = [c for c in web.log if c.kind == "model"]
    per_topic = len(model) / n
    call_s = statistics.mean(c.seconds for c in model)
    workers = [r["rss_mb"] for r in rows if r.get("rss_mb")]
    return {
        "label": label,
        "topics": n,
        "wall_s": wall,
        "per_min": 60 * n / wall,
        "topic_s": statistics.median(r["wall_s"] for r in rows),
        "calls": len(model),
        "peak_calls": peak_overlap(web.log, "model"),
        "ceiling": 60 * calls / (per_topic * call_s),
        "limit": calls,
        "memory": f"{peak['rss_mb']:.0f} + {peak['workers_mb']:.0f} workers"
        if not workers
        else f"driver {peak['rss_mb']:.0f}; per worker {statistics.median(workers):.0f} "
        f"(max {max(workers):.0f})",
    }


HEADER = (
    "| how | topics | wall s | topics/min | s per topic (median) | model calls | peak calls in flight (limit) "
    "| ceiling at the limit, topics/min | peak RSS MB per process |\n|---|---|---|---|---|---|---|---|---|"
)


def _row(r: dict[str, Any]) -> str:
    return (
        f"| {r['label']} | {r['topics']} | {r['wall_s']:.1f} | {r['per_min']:.1f} "
        f"| {r['topic_s']:.1f} | {r['calls']} "
        f"| {r['peak_calls']} ({r['limit']}) | {r['ceiling']:.1f} | {r['memory']} |"
    )


def _ray(latency: dict[str, float], n: int, tmp: Path) -> None:
    """Inside the network namespace: PostgreSQL, then 1 and 2 Ray nodes; prints result lines."""
    from ray.cluster_utils import Cluster

    pg_env = {**os.environ, "PG_DIR": f"/tmp/deskresearch-bench-pg-{os.getpid()}",
              "PG_PORT": PG_PORT}  # fmt: skip
    script = str(ROOT / ".ci" / "postgres.sh")
    url = subprocess.run([script], env=pg_env, capture_output=True, text=True, check=True)
    keys = {"OPENAI_API_KEY": "test-key", "TAVILY_API_KEY": "tvly-test"}
    cluster = Cluster(initialize_head=True,
                      head_node_args={"num_cpus": 2, "env_vars": keys, "include_dashboard": False})  # fmt: skip
    try:
        for nodes in (1, 2):
            if nodes == 2:
                cluster.add_node(num_cpus=2, env_vars=keys)
                cluster.wait_for_nodes()
            flags = ["--ray", cluster.address, "--ray-cpus", "0.5"]
            extra = {"DESKRESEARCH_CHECKPOINTS": url.stdout.strip()}
            r = _measure(f"Ray, {nodes} node{'s' * (nodes > 1)} ({4 * nodes} at once)",
                         latency, n, flags, extra, tmp)  # fmt: skip
            print("RESULT " + json.dumps(r), flush=True)
    finally:
        cluster.shutdown()  # type: ignore[no-untyped-call]
        subprocess.run([script, "stop"], env=pg_env, check=False)


def main(argv: list[str] | None = None) -> int:
    """Print the batch throughput table."""
    p = argparse.ArgumentParser(prog="python -m bench.batch", description=__doc__.split("\n\n")[0])
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--ray-part", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--topics", type=int, default=12, help=f"topics per batch (1-{len(TOPICS)})")
    p.add_argument("--concurrency", default="1,4,8", help="local concurrency levels")
    p.add_argument("--no-ray", action="store_true", help="local runs only")
    p.add_argument("--tight", type=int, default=2, help="also concurrency 8 at this call limit")
    p.add_argument("--wide", type=int, default=32, help="and at this one (0: neither)")
    p.add_argument("--call-s", type=float, default=0.3, help="fixed seconds per model call")
    args = p.parse_args(argv)
    if args.child:
        _child(json.loads(args.child))
        return 0
    latency = {"call_s": args.call_s, "per_in_token_s": 0.00005, "per_out_token_s": 0.005,
               "search_s": 0.4, "fetch_s": 0.2}  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        if args.ray_part:
            _ray(latency, args.topics, Path(tmp))
            return 0
        print(f"latency model: {latency}; {args.topics} topics, default settings\n")
        print(HEADER)
        for c in (int(x) for x in args.concurrency.split(",")):
            r = _measure(f"local, concurrency {c}", latency, args.topics,
                         ["--concurrency", str(c)], {}, Path(tmp))  # fmt: skip
            print(_row(r), flush=True)
        # The call limit lowered (a strict provider) and raised (a generous one).
        for calls in (c for c in (args.tight, args.wide) if c):
            r = _measure(f"local, concurrency 8, {calls} calls", latency, args.topics,
                         ["--concurrency", "8", "--max-model-calls", str(calls)], {},
                         Path(tmp), calls=calls)  # fmt: skip
            print(_row(r), flush=True)
        if not args.no_ray:
            inner = 'ip link set lo up && exec "$0" -m bench.batch --ray-part "$@"'
            cmd = ["unshare", "-n", "sh", "-c", inner, sys.executable, "--topics", str(args.topics),
                   "--call-s", str(args.call_s)]  # fmt: skip
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
            results = [json.loads(line[7:]) for line in proc.stdout.splitlines()
                       if line.startswith("RESULT ")]  # fmt: skip
            if proc.returncode != 0 or not results:
                print(f"Ray part failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
            for r in results:
                print(_row(r), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
