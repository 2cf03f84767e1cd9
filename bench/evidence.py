"""Benchmark: weighing the evidence — copies counted once, disagreements shown, dates known.

``python -m bench.evidence`` runs ``deskresearch QUESTION`` as a process for every case of
``bench/evidence_cases.json`` against the loopback web in its own process (the cases' written
pages among the real fixture pages, found by a search that ranks pages by the words they share
with the query). The cases are fictional (invented names, so nothing can come from a model's
memory): a press release and two reprints beside an independent page that agrees; two
independent pages giving different figures, founding years, and a yes and a no; a 2018 and a
2025 figure; and controls with nothing to weigh (the same figure rounded, in other units, a
figure of another scope). Every case runs with ``--url-per-query 6``, so every written page is
read: the benchmark measures weighing, not ranking.

Printed per case and in total, against the issue's targets: copies grouped (100%),
disagreements surfaced with both sides cited (≥ 90%), false disagreements on the controls (0),
the current figure presented as current (100%). Then the cost where there is nothing to weigh:
the single-hop default topics (``bench.run``) with weighing on and off (``--no-weigh-evidence``),
and, with ``--baseline PYTHON``, against another install (an earlier version) run the same way.

The model is the test suite's fake. Its weighing answer follows a generic rule (two facts are
about the same thing when their words, figures aside, mostly agree: tests/support/fake_model.py
``compare``); rounding, units and dates are the product's code. So the figures measure the
pipeline, not a real model's judgement of scope.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path
from typing import Any

from bench.cli_mode import LATENCY
from bench.cli_process import command, run_cli
from bench.run import TOPICS

ROOT = Path(__file__).resolve().parents[1]
READ_ALL = ["--url-per-query", "6"]


def _cost(obs: Any) -> dict[str, float]:
    totals = obs.result.get("totals") or {}
    return {
        "calls": totals.get("calls", 0),
        "tokens": totals.get("input_tokens", 0) + totals.get("output_tokens", 0),
        "wall": obs.exit - obs.t0,
    }


def cases(only: str) -> dict[str, list[Any]]:
    """Run every case; print a row each; return the scores' parts pooled."""
    from tests.support.evidence import load_cases, score

    pooled: dict[str, list[Any]] = {"copies": [], "surfaced": [], "false": [], "current": []}
    print("| case | copies grouped | disagreements surfaced, both sides cited | false "
          "disagreements | current presented as current | pages not read | calls | tokens "
          "| wall s |")  # fmt: skip
    print("|---" * 9 + "|")
    for c in load_cases():
        if only and not re.search(only, c.id):
            continue
        obs = run_cli(c.question, LATENCY, extra=[*READ_ALL, "--language", c.language],
                      web_kind="evidence")  # fmt: skip
        s = score(c, obs.result)
        for key in pooled:
            pooled[key] += getattr(s, key)
        cost = _cost(obs)

        def frac(xs: list[bool]) -> str:
            return f"{sum(xs)}/{len(xs)}" if xs else "–"

        print(f"| {c.id} | {frac(s.copies)} | {frac(s.surfaced)} | {len(s.false)} | "
              f"{frac(s.current)} | {len(s.missing_sources)} | {cost['calls']:.0f} | "
              f"{cost['tokens']:.0f} | {cost['wall']:.2f} |", flush=True)  # fmt: skip
    return pooled


def nothing_to_weigh(reps: int, baseline: str) -> None:
    """The single-hop topics: weighing on against off (and against ``baseline``'s install)."""
    variants: dict[str, tuple[list[str] | None, list[str]]] = {
        "weighing on": (None, []),
        "weighing off": (None, ["--no-weigh-evidence"]),
    }
    if baseline:
        variants["baseline install"] = (command(baseline), [])
    print("\n| topic | variant | calls | tokens | wall s (median) |")
    print("|---" * 5 + "|")
    ratios: dict[str, list[tuple[float, float, float]]] = {v: [] for v in variants}
    for topic in TOPICS:
        med: dict[str, dict[str, float]] = {}
        for name, (base, extra) in variants.items():
            runs = [_cost(run_cli(topic, LATENCY, base=base, extra=extra)) for _ in range(reps)]
            med[name] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            m = med[name]
            print(f"| {topic[:40]} | {name} | {m['calls']:.0f} | {m['tokens']:.0f} | "
                  f"{m['wall']:.2f} |", flush=True)  # fmt: skip
        ref = med["baseline install" if baseline else "weighing off"]
        for name in variants:
            m = med[name]
            ratios[name].append((m["calls"] - ref["calls"], m["tokens"] / ref["tokens"],
                                 m["wall"] / ref["wall"]))  # fmt: skip
    against = "the baseline install" if baseline else "weighing off"
    for name, rows in ratios.items():
        calls = ", ".join(f"{r[0]:+.0f}" for r in rows)
        tokens = ", ".join(f"{r[1]:.3f}" for r in rows)
        walls = ", ".join(f"{r[2]:.3f}" for r in rows)
        print(f"{name} against {against}: extra calls {calls}; tokens × {tokens}; "
              f"wall × {walls}")  # fmt: skip
    print("targets: at most 1 extra call, tokens and wall at most × 1.10")


def main(argv: list[str] | None = None) -> int:
    """Parse the flags, run, print the tables and the targets."""
    parser = argparse.ArgumentParser(prog="python -m bench.evidence", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--only", default="", help="a regex: run the cases whose id matches")
    parser.add_argument("--reps", type=int, default=3, help="runs per topic for the cost part")
    parser.add_argument("--no-cost", action="store_true", help="skip the cost part")
    parser.add_argument("--baseline", default="", metavar="PYTHON",
                        help="the Python of another install (an earlier version) to compare "
                        "the cost with")  # fmt: skip
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    pooled = cases(args.only)

    def pct(xs: list[bool]) -> str:
        return f"{sum(xs)}/{len(xs)} ({100 * sum(xs) / len(xs):.0f}%)" if xs else "–"

    print(f"\ncopies grouped: {pct(pooled['copies'])} (target 100%)")
    print(f"disagreements surfaced with both sides cited: {pct(pooled['surfaced'])} "
          "(target ≥ 90%)")  # fmt: skip
    print(f"false disagreements: {len(pooled['false'])} {pooled['false'] or ''} (target 0)")
    print(f"current figure presented as current: {pct(pooled['current'])} (target 100%)")
    if not args.no_cost:
        nothing_to_weigh(args.reps, args.baseline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
