"""Benchmark: research in rounds on questions whose answer is one or two pages away.

``python -m bench.multihop`` runs ``deskresearch QUESTION --max-rounds N`` as a process for every
case of ``bench/multihop_cases.json`` (14 questions in English, German and French: 10 two-hop,
4 three-hop) and N = 1, 2, 3, against the loopback web in its own process: the cases' written
pages among the real fixture pages, found by a search that ranks pages by the words they share
with the query. A case's later pages share no word with its question, so only a search for the
name an earlier page mentions finds them. Then the single-hop default topics (``bench.run``),
at max_rounds 1 and 2, show what a reflection costs when there is nothing to follow.

The model is the test suite's fake: its reflection follows the names facts mention (see
``tests/support/fake_reflect.py``). So the figures measure the loop (follow-ups searched, pages
reached, read once, cited, checked, at what cost), not a real model's judgement of what is
missing. Printed per run: answered (the answer in a cited sentence whose source's page states
it), rounds used, model calls, tokens, wall seconds, pages fetched more than once.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from bench.cli_mode import LATENCY
from bench.cli_process import run_cli
from bench.run import TOPICS

ROOT = Path(__file__).resolve().parents[1]


def _one(topic: str, rounds: int, kind: str) -> dict[str, Any]:
    obs = run_cli(topic, LATENCY, extra=["--max-rounds", str(rounds)], web_kind=kind)
    result = obs.result
    totals = result.get("totals") or {}
    fetched = Counter(c.key for c in obs.log if c.kind == "fetch")
    return {
        "result": result,
        "rounds": len(result.get("rounds") or []),
        "calls": totals.get("calls", 0),
        "tokens": totals.get("input_tokens", 0) + totals.get("output_tokens", 0),
        "wall": obs.exit - obs.t0,
        "twice": sum(1 for n in fetched.values() if n > 1),
        "verdicts": Counter(c["verdict"] for c in result.get("citations") or []),
    }


def answered(run: dict[str, Any], case: Any) -> bool:
    """The answer in a cited sentence whose cited source's page states it."""
    result = run["result"]
    return bool(case.answered_in(result.get("report", ""), result.get("sources") or []))


def multihop(settings: list[int], only: str) -> dict[int, dict[int, list[bool]]]:
    """Run every case at every setting; print a row each; return answered by setting and hops."""
    from tests.support.multihop import load_cases, overlap

    cases = [c for c in load_cases() if not only or re.search(only, c.id)]
    for c in cases:  # the premise: later pages share no word with the question
        assert not any(overlap(c).values()), (c.id, overlap(c))
    print(
        "| case | lang | hops | max_rounds | answered | rounds | calls | tokens | wall s | fetched twice |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    found: dict[int, dict[int, list[bool]]] = {n: {2: [], 3: []} for n in settings}
    for c in cases:
        for n in settings:
            run = _one(c.question, n, "multihop")
            ok = answered(run, c)
            found[n][c.hops].append(ok)
            print(f"| {c.id} | {c.language} | {c.hops} | {n} | {'yes' if ok else 'no'} | "
                  f"{run['rounds']} | {run['calls']} | {run['tokens']} | {run['wall']:.2f} | "
                  f"{run['twice']} |", flush=True)  # fmt: skip
    return found


def single_hop(reps: int) -> None:
    """The default topics at max_rounds 1 and 2: what reflecting costs with nothing to follow."""
    print("\n| topic | max_rounds | rounds | calls | tokens | wall s | fetched twice | verdicts |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    extra_calls, ratios = [], []
    for topic in TOPICS:
        walls: dict[int, list[float]] = {1: [], 2: []}
        calls: dict[int, int] = {}
        for _ in range(reps):
            for n in (1, 2):
                run = _one(topic, n, "default")
                walls[n].append(run["wall"])
                calls[n] = run["calls"]
                verdicts = ", ".join(f"{k} {v}" for k, v in sorted(run["verdicts"].items()))
                print(f"| {topic[:40]} | {n} | {run['rounds']} | {run['calls']} | "
                      f"{run['tokens']} | {run['wall']:.2f} | {run['twice']} | {verdicts} |",
                      flush=True)  # fmt: skip
        extra_calls.append(calls[2] - calls[1])
        ratios.append(statistics.median(walls[2]) / statistics.median(walls[1]))
    print(f"\nsingle-hop: extra model calls per topic {extra_calls} (target ≤ 1); median wall "
          f"max_rounds=2 / max_rounds=1: {', '.join(f'{r:.2f}' for r in ratios)} (target ≤ 1.15)")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Parse the flags, run, print the tables and the targets."""
    parser = argparse.ArgumentParser(prog="python -m bench.multihop", description=__doc__)
    parser.add_argument("--rounds", default="1,2,3", help="max_rounds settings (default 1,2,3)")
    parser.add_argument("--only", default="", help="a regex: run the cases whose id matches")
    parser.add_argument("--single-hop-reps", type=int, default=2, help="runs per single-hop topic")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    settings = [int(n) for n in args.rounds.split(",")]
    found = multihop(settings, args.only)
    print()
    for n in settings:
        for hops in (2, 3):
            got = found[n][hops]
            if got:
                print(f"max_rounds={n}: {hops}-hop answered and cited {sum(got)}/{len(got)} "
                      f"({100 * sum(got) / len(got):.0f}%)")  # fmt: skip
    print("targets: 2-hop ≥ 80% at max_rounds=2, 3-hop ≥ 60% at 3, ≈ 0% at 1")
    if args.single_hop_reps:
        single_hop(args.single_hop_reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
