"""``python -m bench --cli``: the real ``deskresearch`` command as a process, as the user waits.

Per topic: process wall (start → exit), time to the first model call, time from the last model
call to exit, from the report and JSON being written (file mtimes) to exit, the run's own
critical-path bound (bench.measure over the fake web's log) and wall / bound, peak RSS of the
command and its workers, model calls, sources cited and report words; then where the time
before the first and after the last model call goes, as far as it can be seen from outside.
"""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import time
from typing import Any

from bench.cli_process import ROOT, command, run_cli
from bench.cli_summary import by_package, import_times, phase_lines, summarise

# The latency model (#13): 300 ms a model call + 3 ms per output token, 300 ms a search,
# 200 ms a page.
LATENCY = {"call_s": 0.3, "per_in_token_s": 0.0, "per_out_token_s": 0.003,
           "search_s": 0.3, "fetch_s": 0.2}  # fmt: skip
HEADER = (
    "| topic | wall s | first model call s | last call → exit s | files written → exit s "
    "| bound s | wall / bound | peak RSS MB (main + workers) | model calls | sources cited "
    "| report words | citations supported / checked |\n" + "|---" * 12 + "|"
)
# Under -X importtime, but not its workers: spawn passes sys._xoptions on to them.
PROFILED = ["-X", "importtime", "-c",
            "import sys; sys._xoptions.pop('importtime', None); sys.argv[0] = 'deskresearch'; "
            "from deskresearch.__main__ import run; run()"]  # as the console script  # fmt: skip


def describe_latency(lat: dict[str, float]) -> str:
    """The latency model in words, as the table's caption."""
    return (
        f"{lat['call_s'] * 1000:.0f} ms a model call + {lat['per_out_token_s'] * 1000:g} ms per "
        f"output token + {lat['per_in_token_s'] * 1000:g} ms per input token, "
        f"{lat['search_s'] * 1000:.0f} ms a search, {lat['fetch_s'] * 1000:.0f} ms a page"
    )


def _f(value: float, digits: int = 2) -> str:
    return "–" if math.isnan(value) else f"{value:.{digits}f}"


def _changed(r: dict[str, Any]) -> str:
    """What the check changed, if anything: ", 1 re-cited, 2 removed"."""
    return "".join(
        f", {r[k]:g} {k.replace('_', '-')}" for k in ("re_cited", "rewritten", "removed") if r[k]
    )


def row(label: str, r: dict[str, Any]) -> str:
    """One table row."""
    return (
        f"| {label} | {_f(r['wall_s'])} | {_f(r['first_call_s'])} | {_f(r['after_last_call_s'])} "
        f"| {_f(r['written_to_exit_s'])} | {_f(r['bound_s'])} | {_f(r['ratio'])} "
        f"| {_f(r['peak_rss_mb'], 0)} + {_f(r['workers_rss_mb'], 0)} | {r['model_calls']:g} "
        f"| {r['cited']:g} of {r['sources']:g} | {r['report_words']:g} "
        f"| {r['supported']:g} / {r['checked']:g}{_changed(r)} |"
    )


def medians(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Median of every numeric field over the runs (a run's missing value, NaN, left out)."""
    out: dict[str, Any] = {}
    for key, value in results[0].items():
        if isinstance(value, int | float):
            seen = [r[key] for r in results if not math.isnan(r[key])]
            out[key] = statistics.median(seen) if seen else math.nan
    return out


def breakdown(m: dict[str, Any]) -> list[str]:
    """Where the time goes before the first and after the last model call (from outside)."""
    starts = sorted([
        (m["banner_s"], "first stderr line (imports, checkpointer, graph, start_run's checks)"),
        (m["first_call_s"], "first model call on the wire"),
    ])  # fmt: skip
    (t1, first), (t2, second) = starts
    return [
        "Where the time goes (medians; seconds after process start, Δ from the line before):",
        f"  {first} +{_f(t1)}",
        f"  {second} +{_f(t2)} (Δ {_f(t2 - t1)})",
        f"  worker processes ({m['workers']:g}) started at +{_f(m['workers_start_s'])}; CPU "
        f"seconds: command {_f(m['main_cpu_s'])}, workers {_f(m['workers_cpu_s'])}",
        f"  pages: fetched → first summary call Δ {_f(m['read_gap_median_s'])} (median), "
        f"{_f(m['read_gap_max_s'])} (slowest): extraction, or waiting for the workers",
        f"  last model call ends +{_f(m['last_call_end_s'])}",
        f"  the graph's last progress line +{_f(m['graph_done_s'])} "
        f"(Δ {_f(m['graph_done_s'] - m['last_call_end_s'])})",
        f"  report and JSON written +{_f(m['written_s'])} (Δ "
        f"{_f(m['written_s'] - m['graph_done_s'])}: last checkpoint, state read, close, write)",
        f"  'ok: <files>' line +{_f(m['output_line_s'])} "
        f"(Δ {_f(m['output_line_s'] - m['written_s'])})",
        f"  process exit +{_f(m['wall_s'])} (Δ {_f(m['wall_s'] - m['output_line_s'])}: the exit "
        f"path; workers last seen {_f(m['workers_gone_before_exit_s'])} s before exit)",
    ]


def _timed(args: list[str], env: dict[str, str] | None = None) -> tuple[float, int, str]:
    start = time.time()
    proc = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    return time.time() - start, proc.returncode, proc.stderr


def startup(base: list[str], python: str) -> list[str]:
    """How long the command takes to do nothing: the interpreter, --help, --version, imports."""
    lines = ["Start-up alone (median of 3):"]
    for label, args in [
        ("python -c pass", [python, "-c", "pass"]),
        ("deskresearch --help", [*base, "--help"]),
        ("deskresearch --version", [*base, "--version"]),
    ]:
        runs = [_timed(args) for _ in range(3)]
        code = runs[0][1]
        note = "" if code == 0 else f" (exit {code}: {runs[0][2].strip().splitlines()[-1][:60]})"
        lines.append(f"  {label}: {statistics.median(r[0] for r in runs):.2f} s{note}")
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    _, _, err = _timed([*base, "--help"], env)
    imports = import_times([(0.0, line) for line in err.splitlines()])
    top = ", ".join(f"{name} {s:.2f}" for name, s in by_package(imports))
    lines.append(
        f"  imports of `deskresearch --help` (-X importtime): {sum(i[2] for i in imports):.2f} s "
        f"in {len(imports)} modules; by package (s): {top}"
    )
    return lines


# What the command imports before its first model call, and what the second one (plan_queries,
# through the model client) needs on top: timed as processes that import them and exit, with
# the garbage collector off as the command has it then (deskresearch.cli.command).
_HEAD_IMPORTS = "import gc; gc.disable(); import deskresearch.cli.headstart"
_PLAN_IMPORTS = "import gc; gc.disable(); import deskresearch.cli.research, deskresearch.graph, langchain_openai"


def floor(m: dict[str, Any], python: str) -> list[str]:
    """The wall this machine allows at best: the imports plan_queries needs are CPU no network
    wait can hide beyond the bound's own wait for it (the keywords and their searches)."""
    timed = {}
    for code in (_HEAD_IMPORTS, _PLAN_IMPORTS):
        runs = [_timed([python, "-c", code]) for _ in range(3)]
        if runs[0][1]:  # e.g. a version of the package without a head start
            return [f"Floor: not measured (`python -c '{code}'` exited {runs[0][1]})"]
        timed[code] = statistics.median(r[0] for r in runs)
    after_first = timed[_PLAN_IMPORTS] - timed[_HEAD_IMPORTS]
    earliest = m["first_call_s"] + after_first
    gap = max(0.0, earliest - m["plan_bound_s"])
    return [
        "The floor this machine sets (imports timed as processes, median of 3):",
        f"  `python -c '{_HEAD_IMPORTS}'` {_f(timed[_HEAD_IMPORTS])} s; "
        f"`python -c '{_PLAN_IMPORTS}'` {_f(timed[_PLAN_IMPORTS])} s",
        f"  plan_queries (the second model call) needs them all: after the first call is sent "
        f"(+{_f(m['first_call_s'])}), {_f(after_first)} s of imports remain, so it can leave "
        f"at +{_f(earliest)} at the earliest (this table's median: +{_f(m['plan_sent_s'])}); "
        f"the bound lets it leave at +{_f(m['plan_bound_s'])}",
        f"  so wall ≥ bound + {_f(gap)} = {_f(m['bound_s'] + gap)} s "
        f"({_f((m['bound_s'] + gap) / m['bound_s'])} × the bound) on this machine",
    ]


def imports_in_run(
    topic: str, latency: dict[str, float], extra: list[str], python: str
) -> list[str]:
    """One more run under -X importtime (the command only): which imports come when."""
    obs = run_cli(topic, latency, base=[python, *PROFILED], extra=extra)
    r = summarise(obs)
    imports = [(t - obs.t0, name, s) for t, name, s in import_times(obs.stderr)]

    def within(lo: float, hi: float, top: int = 0) -> str:
        chosen = [i for i in imports if lo <= i[0] < hi]
        most = ", ".join(f"{n} {s:.2f}" for n, s in by_package(chosen, top)) if top else ""
        return (
            f"{sum(i[2] for i in chosen):.2f} s ({len(chosen)} modules{': ' if most else ''}{most})"
        )

    (t1, first), (t2, second) = sorted(
        [(r["banner_s"], "the first stderr line"), (r["first_call_s"], "the first model call")]
    )
    return [
        "Imports during a real run (one more run of the first topic under -X importtime, "
        "the command's own process; slower than the table's):",
        f"  before {first} (+{_f(t1)}): {within(0, t1, 8)}",
        f"  then until {second} (+{_f(t2)}): {within(t1, t2, 8)}",
        f"  later: {within(t2, 1e9, 5)}",
    ]


def phases_in_run(
    topic: str, latency: dict[str, float], extra: list[str], python: str
) -> list[str]:
    """One more run through bench/cli_phases.py: the command's phases, stamped from inside."""
    probe = [python, str(ROOT / "bench" / "cli_phases.py")]
    obs = run_cli(topic, latency, base=probe, extra=extra)
    r = summarise(obs)
    events = [(float(t) - obs.t0, name) for name, t in phase_lines(obs.stderr)]
    events += [(r["banner_s"], "first stderr line (start_run's event)")]
    events += [(r["first_call_s"], "first model call arrives"), (r["wall_s"], "process exit")]
    events += [(r["last_call_end_s"], "last model call ends")]
    if not math.isnan(r["workers_start_s"]):
        events.append((r["workers_start_s"], "worker processes exist"))
    lines = [
        "Phases (one more run of the first topic through bench/cli_phases.py, which stamps "
        "the command's own functions; seconds after process start, Δ from the line before):"
    ]
    last = 0.0
    for t, name in sorted(e for e in events if not math.isnan(e[0])):
        lines.append(f"  +{t:6.2f} (Δ {t - last:5.2f})  {name}")
        last = t
    return lines


def cli_main(
    latency: dict[str, float],
    topics: list[str],
    profile: bool = True,
    module: bool = False,
    extra: list[str] | None = None,
    python: str = sys.executable,
) -> int:
    """Run the command on each topic, print the table, medians and the time breakdown.

    ``module``: run ``python -m deskresearch`` instead of the installed ``deskresearch`` script.
    ``extra``: flags passed to every research run (e.g. ``--report-mode single``).
    ``python``: the interpreter of the install to time (its ``deskresearch`` script, its imports).
    """
    extra = list(extra or [])
    base = [python, "-m", "deskresearch"] if module else command(python)
    shown = " ".join([*base, "TOPIC", "-o", "TMP", "--checkpoints", "TMP/cp.sqlite", *extra])
    print(f"latency model: {describe_latency(latency)}; cache off; command: {shown}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print(HEADER)
    results = []
    for topic in topics:
        r = summarise(run_cli(topic, latency, base=base, extra=extra))
        results.append(r)
        print(row(topic[:40], r), flush=True)
    m = medians(results)
    print(row("**median**", m))
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("\n" + "\n".join(breakdown(m)))
    print("\n" + "\n".join(startup(base, python)))
    print("\n" + "\n".join(floor(m, python)))
    if profile:
        print("\n" + "\n".join(phases_in_run(topics[0], latency, extra, python)))
        print("\n" + "\n".join(imports_in_run(topics[0], latency, extra, python)))
    return 0
