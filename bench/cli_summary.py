"""The numbers of one CLI run, from what was seen outside it (pure: no process, no clock)."""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from typing import Any

from bench.cli_process import TICK, Observed
from bench.measure import critical_path, plan_start, read_gaps

NAN = float("nan")
_REFERENCE_LINE = re.compile(r"^\s*\[\d+\]\s")  # "[3] Title. <url>" in the reference list
_CITATION = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")  # [3], [1, 2], [1; 4]
_OUTPUT_LINE = re.compile(r"^\w+: (\S+\.(md|html) )+\S+\.json$")  # "ok: <md> [<html>] <json>"
_PROGRESS_LINE = re.compile(r"^\s*(\d+\.\d+s )?\[\w+\] ")  # "  8.4s [finish_report] finished"
_PHASE_LINE = re.compile(r"^phase: (.+) (\d+\.\d+)$")  # from bench/cli_phases.py
_IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)$")


def _body_lines(report: str) -> list[str]:
    return [line for line in report.splitlines() if not _REFERENCE_LINE.match(line)]


def cited_sources(report: str) -> int:
    """Distinct source numbers cited in the report's text (the reference list not counted)."""
    numbers = set()
    for line in _body_lines(report):
        for group in _CITATION.findall(line):
            numbers |= {int(n) for n in re.split(r"\s*[,;]\s*", group)}
    return len(numbers)


def report_words(report: str) -> int:
    """Words of the report outside its reference list."""
    return sum(len(line.split()) for line in _body_lines(report))


def citation_counts(citations: list[dict[str, Any]]) -> dict[str, int]:
    """The citation check's verdicts: sentences checked, supported, and changed by the check."""
    verdicts = [str(c.get("verdict", "")) for c in citations]
    checked = [v for v in verdicts if v != "unchecked"]
    return {
        "checked": len(checked),
        "supported": checked.count("supported"),
        "re_cited": checked.count("re-cited"),
        "rewritten": checked.count("rewritten"),
        "removed": checked.count("removed"),
    }


def _first(lines: list[tuple[float, str]], test: Any, last: bool = False) -> float:
    hits = [t for t, line in lines if test(line)]
    return (hits[-1] if last else hits[0]) if hits else NAN


def summarise(obs: Observed) -> dict[str, Any]:
    """Seconds from process start (t0) to each landmark, the bound, memory and the report."""
    t0, wall = obs.t0, obs.exit - obs.t0
    model = [c for c in obs.log if c.kind == "model"]
    first_call = min((c.started for c in model), default=NAN) - t0
    last_end = max((c.started + c.seconds for c in model), default=NAN) - t0
    written = max(obs.files.values(), default=NAN) - t0
    queries = list(obs.result.get("queries") or [])
    bound = critical_path(obs.log, queries)
    main = obs.procs.get(obs.main_pid)
    others = [p for pid, p in obs.procs.items() if pid != obs.main_pid]
    workers = [p for p in others if p.kind == "worker"]
    start_ticks = main.start_ticks if main else 0
    report = str(obs.result.get("report") or "")
    err = obs.stderr
    return {
        "wall_s": wall,
        "first_call_s": first_call,
        "last_call_end_s": last_end,
        "after_last_call_s": wall - last_end,
        "written_s": written,
        "written_to_exit_s": wall - written,
        "bound_s": bound,
        "ratio": wall / bound if bound else NAN,
        "plan_sent_s": min((c.started for c in model if c.key == "QueryPlan"), default=NAN) - t0,
        "plan_bound_s": plan_start(obs.log, queries),
        "peak_rss_mb": main.hwm_mb if main else NAN,
        "workers_rss_mb": sum(p.hwm_mb for p in others),
        "model_calls": len(model),
        "searches": sum(1 for c in obs.log if c.kind == "search"),
        "fetches": sum(1 for c in obs.log if c.kind == "fetch"),
        "sources": len(obs.result.get("sources") or []),
        "cited": cited_sources(report),
        "report_words": report_words(report),
        **citation_counts(obs.result.get("citations") or []),
        "status": str(obs.result.get("status", f"exit {obs.returncode}")),
        # landmarks seen on stderr (seconds after t0)
        "banner_s": _first(err, lambda s: s.startswith("deskresearch: thread")) - t0,
        "graph_done_s": _first(err, _PROGRESS_LINE.match, last=True) - t0,  # its last event
        "output_line_s": _first(err, _OUTPUT_LINE.match) - t0,
        # the worker processes
        "workers": len(workers),
        "workers_start_s": min(
            ((p.start_ticks - start_ticks) / TICK for p in workers), default=NAN
        ),
        "workers_gone_before_exit_s": obs.exit - max((p.last_seen for p in workers), default=NAN),
        "read_gap_median_s": statistics.median(gaps) if (gaps := read_gaps(obs.log)) else NAN,
        "read_gap_max_s": max(gaps, default=NAN),
        "main_cpu_s": main.cpu_s if main else NAN,
        "workers_cpu_s": sum(p.cpu_s for p in others),
    }


def import_times(lines: list[tuple[float, str]]) -> list[tuple[float, str, float]]:
    """``-X importtime`` lines → (arrival time, module, self seconds), in import order."""
    found = []
    for t, line in lines:
        if m := _IMPORT_LINE.match(line):
            found.append((t, m.group(4), int(m.group(1)) / 1e6))
    return found


def by_package(imports: list[tuple[float, str, float]], top: int = 8) -> list[tuple[str, float]]:
    """Self import time summed per top-level package, largest first."""
    totals: dict[str, float] = defaultdict(float)
    for _, module, seconds in imports:
        totals[module.split(".")[0]] += seconds
    return sorted(totals.items(), key=lambda kv: -kv[1])[:top]


def phase_lines(lines: list[tuple[float, str]]) -> list[tuple[str, float]]:
    """``phase: <name> <time>`` lines of bench/cli_phases.py → (name, time.time() value)."""
    return [(m.group(1), float(m.group(2))) for _, line in lines if (m := _PHASE_LINE.match(line))]
