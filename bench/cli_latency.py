"""The CLI process's own latency: --help, --version, time to the first model call, time to exit.

    python -m bench.cli_latency [--runs 3]

Each number is a median over ``--runs`` fresh processes. The research runs go against the
loopback web in its own process (bench.web) with the benchmark's latency model; the first model
call is when the fake model received it (wall clock), the files are written at the JSON file's
mtime, and the exit is when ``wait()`` returned here. Targets (issue 13): first call <= 0.8 s,
--help and --version <= 0.3 s, exit <= 0.2 s after the files are written.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.web import web_process

ROOT = Path(__file__).resolve().parents[1]
LATENCY = {"call_s": 0.3, "per_in_token_s": 0.00005, "per_out_token_s": 0.005,
           "search_s": 0.4, "fetch_s": 0.2}  # fmt: skip  # python -m bench's defaults
TOPIC = "How are lithium-ion batteries from electric cars recycled?"


def _cli() -> list[str]:
    return [str(Path(sys.executable).parent / "deskresearch")]


def time_command(args: list[str], runs: int) -> float:
    """Median wall seconds of ``deskresearch ARGS`` as a fresh process."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(_cli() + args, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _env(base: str, checkpoints: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "TAVILY_", "DESKRESEARCH_", "LANGSMITH_"))}  # fmt: skip
    return env | {
        "OPENAI_API_KEY": "test-key",
        "OPENAI_BASE_URL": base + "/v1",
        "TAVILY_API_KEY": "tvly-test",
        "DESKRESEARCH_TAVILY_BASE_URL": base,
        "DESKRESEARCH_ALLOW_HOSTS": "127.0.0.0/8",
        "DESKRESEARCH_SEARCH": "tavily",
        "DESKRESEARCH_CACHE": "false",
        "DESKRESEARCH_CHECKPOINTS": checkpoints,
    }


def time_run() -> dict[str, float]:
    """One research as a process: start → first model call, last call end → files → exit."""
    with tempfile.TemporaryDirectory() as tmp, web_process(LATENCY) as (web, _):
        env = _env(web.base, str(Path(tmp) / "checkpoints.sqlite"))
        start = time.time()
        proc = subprocess.run(
            _cli() + [TOPIC, "-o", tmp, "--progress", "plain"],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        end = time.time()
        if proc.returncode != 0:
            raise SystemExit(proc.stderr[-3000:])
        written = max(p.stat().st_mtime for p in Path(tmp).glob("*.json"))
    model = [c for c in web.log if c.kind == "model"]
    return {
        "wall_s": end - start,
        "first_call_s": min(c.started for c in model) - start,
        "last_call_to_files_s": written - max(c.started + c.seconds for c in model),
        "files_to_exit_s": end - written,
    }


def main(argv: list[str] | None = None) -> int:
    """Print the CLI's own latency."""
    p = argparse.ArgumentParser(prog="python -m bench.cli_latency", description=__doc__)
    p.add_argument("--runs", type=int, default=3, help="processes per number (median)")
    args = p.parse_args(argv)
    print(f"deskresearch --help:    {time_command(['--help'], args.runs):.3f} s (target 0.3)")
    print(f"deskresearch --version: {time_command(['--version'], args.runs):.3f} s (target 0.3)")
    runs = [time_run() for _ in range(args.runs)]
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"research run wall:      {med['wall_s']:.2f} s")
    print(f"start → first model call: {med['first_call_s']:.3f} s (target 0.8)")
    print(f"last model call → files: {med['last_call_to_files_s']:.3f} s")
    print(f"files written → exit:   {med['files_to_exit_s']:.3f} s (target 0.2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
