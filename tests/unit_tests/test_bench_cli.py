"""The benchmark's CLI mode: its flags and its arithmetic over a fabricated run (nothing timed)."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import run
from bench.cli_mode import LATENCY, describe_latency, medians, row
from bench.cli_process import TICK, Observed, Proc, command
from bench.cli_summary import by_package, cited_sources, import_times, report_words, summarise
from tests.support.loopback import Call

T0 = 1000.0
REPORT = (
    "# Batteries\n\nShredded cells yield black mass [1]. Hydrometallurgy recovers lithium [2, 3].\n"
    "Again [1].\n\n## References\n\n[1] Heise. <http://x/1>\n[2] Zeit. <http://x/2>\n"
    "[3] FAZ. <http://x/3>\n[4] Unused. <http://x/4>\n"
)


def _model(stage: str, started: float, seconds: float, text: str = "") -> Call:
    body = {"messages": [{"role": "user", "content": text}]}
    return Call("model", stage, seconds, body, started=T0 + started)


def _observed() -> Observed:
    page = '<page url="http://127.0.0.2:8000/pages/a.html">'
    log = [
        _model("Keywords", 1.0, 0.5),
        Call("search", "kw one", 0.3, {}, started=T0 + 1.6),
        Call("search", "kw two", 0.4, {}, started=T0 + 1.6),
        _model("QueryPlan", 2.1, 0.8),
        Call("search", "q1", 0.3, {}, started=T0 + 3.0),
        Call("search", "q2", 0.3, {}, started=T0 + 3.0),
        _model("Ranking", 3.4, 0.3, "Query:\n<queries>\nq1\n</queries>\n<results>"),
        _model("Ranking", 3.4, 0.6, "Query:\n<queries>\nq2\n</queries>\n<results>"),
        Call("fetch", "/pages/a.html", 0.2, {}, started=T0 + 4.1),
        _model("ChunkSummary", 4.4, 0.7, f"{page}\nchunk 1"),
        _model("ChunkSummary", 4.4, 0.9, f"{page}\nchunk 2"),
        _model("report", 5.5, 1.2),
        _model("Judgements", 6.8, 1.5),
    ]
    procs = {  # started 0, 1, 2 and 3 s after the command; workers last seen 1 s, 0.5 s before exit
        10: Proc("main", 5000, hwm_mb=150.0, cpu_s=3.0, last_seen=T0 + 9.9),
        11: Proc("tracker", 5000 + TICK, hwm_mb=12.0, cpu_s=0.1, last_seen=T0 + 9.9),
        12: Proc("worker", 5000 + 2 * TICK, hwm_mb=170.0, cpu_s=2.0, last_seen=T0 + 9.0),
        13: Proc("worker", 5000 + 3 * TICK, hwm_mb=160.0, cpu_s=1.0, last_seen=T0 + 9.5),
    }
    stderr = [
        (T0 + 0.8, "deskresearch: thread abc in /tmp/cp.sqlite (after a crash: ...)"),
        (T0 + 0.8, "   0.0s [start_run] started topic=x"),
        (T0 + 8.4, "   7.6s [finish_report] finished citations=3 checked"),
        (T0 + 8.7, "ok: /tmp/out/x.md /tmp/out/x.json"),
        (T0 + 8.7, "sources: 4, tokens: 1 in / 1 out, model calls: 8 (0 from the cache)"),
    ]
    files = {"x.md": T0 + 8.5, "x.json": T0 + 8.6}
    verdicts = ["supported", "supported", "re-cited", "unchecked"]
    citations = [{"sentence": f"s{i}", "verdict": v} for i, v in enumerate(verdicts)]
    result = {"queries": ["q1", "q2"], "report": REPORT, "sources": [{}, {}, {}, {}],
              "citations": citations}  # fmt: skip
    return Observed(T0, T0 + 10.0, 0, stderr, files, result, log, procs, main_pid=10)


def test_summary_measures_each_landmark_from_process_start() -> None:
    r = summarise(_observed())
    assert r["wall_s"] == pytest.approx(10.0)
    assert r["first_call_s"] == pytest.approx(1.0)
    assert r["last_call_end_s"] == pytest.approx(8.3)  # Judgements: 6.8 + 1.5
    assert r["after_last_call_s"] == pytest.approx(1.7)
    assert r["written_to_exit_s"] == pytest.approx(1.4)  # the JSON, the later file, at 8.6
    assert r["banner_s"] == pytest.approx(0.8) and r["output_line_s"] == pytest.approx(8.7)
    assert r["graph_done_s"] == pytest.approx(8.4)
    obs = _observed()
    obs.stderr[3] = (T0 + 8.9, "insufficient_evidence: /o/x.md /o/x.html /o/x.json")
    assert summarise(obs)["output_line_s"] == pytest.approx(8.9)


def test_summary_bound_is_the_longest_dependent_chain() -> None:
    r = summarise(_observed())
    # keywords 0.5 + slowest keyword search 0.4 + plan 0.8 + slowest query (0.3 + 0.6)
    # + page (fetch 0.2 + slowest chunk 0.9) + report 1.2 + judging 1.5
    assert r["bound_s"] == pytest.approx(6.4)
    assert r["ratio"] == pytest.approx(10.0 / 6.4)


def test_a_page_waits_only_for_the_quickest_query_that_listed_it() -> None:
    obs = _observed()
    listing = "<queries>\nq1\n</queries>\n<results>\n[0] A <http://127.0.0.2:8000/pages/a.html>\n</results>"
    obs.log[6] = _model("Ranking", 3.4, 0.3, listing)
    # q1 (0.3 + 0.3) → page (0.2 + 0.9) = 1.7 outlasts q2's 0.9, which the report still waits for
    assert summarise(obs)["bound_s"] == pytest.approx(0.5 + 0.4 + 0.8 + 1.7 + 2.7)


def test_report_sections_count_as_their_slowest_and_the_outline_in_series() -> None:
    obs = _observed()
    sections = [_model("report", 6.0, 0.9, '<section number="1" heading="Overview">'),
                _model("report", 6.0, 1.4, '<section number="2" heading="Aspect 1">')]  # fmt: skip
    obs.log[11:12] = [_model("Outline", 5.5, 0.4), *sections]
    # ... + page 1.1 + outline 0.4 + slowest section 1.4 (not 0.9 + 1.4) + judging 1.5
    assert summarise(obs)["bound_s"] == pytest.approx(2.6 + 1.1 + 0.4 + 1.4 + 1.5)


def test_judge_batches_count_as_their_slowest_and_the_rewrite_in_series() -> None:
    obs = _observed()
    obs.log[12:13] = [_model("Judgements", 6.8, 0.6), _model("Judgements", 6.8, 0.7),
                      _model("Judgements", 6.8, 0.5), _model("Fixes", 7.6, 0.9)]  # fmt: skip
    # ... + report 1.2 + slowest judge batch 0.7 (not 0.6 + 0.7 + 0.5) + rewrite 0.9
    assert summarise(obs)["bound_s"] == pytest.approx(2.6 + 1.1 + 1.2 + 0.7 + 0.9)


def test_a_page_reduce_call_is_on_its_page_chain_not_after_the_report() -> None:
    obs = _observed()
    page = '<page url="http://127.0.0.3:8000/pages/b.html">'
    obs.log[11:11] = [
        Call("fetch", "/pages/b.html", 0.2, {}, started=T0 + 4.1),
        _model("ChunkSummary", 4.4, 0.3, f"{page}\nchunk 1"),
        _model("PageFacts", 4.8, 0.5, f"Facts ...\n{page}\nnotes"),
    ]
    # page b: 0.9 + 0.2 + 0.3 + 0.5 = 1.9 stays under page a's 2.0; not a step after the pages
    assert summarise(obs)["bound_s"] == pytest.approx(6.4)


def test_summary_counts_memory_workers_calls_and_the_report() -> None:
    r = summarise(_observed())
    assert r["peak_rss_mb"] == 150.0 and r["workers_rss_mb"] == pytest.approx(342.0)
    assert r["workers"] == 2 and r["workers_start_s"] == pytest.approx(2.0)
    assert r["workers_gone_before_exit_s"] == pytest.approx(0.5)
    assert r["model_calls"] == 8 and r["searches"] == 4 and r["fetches"] == 1
    assert r["read_gap_median_s"] == pytest.approx(0.1)  # fetched by 4.3, first chunk call 4.4
    assert r["sources"] == 4 and r["cited"] == 3
    assert (r["checked"], r["supported"], r["re_cited"], r["removed"]) == (3, 2, 1, 0)
    assert row("x", r).endswith(f"| {r['report_words']} | 2 / 3, 1 re-cited |")


def test_a_run_without_files_or_calls_reports_nan_not_a_crash() -> None:
    obs = _observed()
    obs.files, obs.log, obs.result = {}, [], {}
    r = summarise(obs)
    assert math.isnan(r["first_call_s"]) and math.isnan(r["written_to_exit_s"])
    assert r["bound_s"] == 0.0 and math.isnan(r["ratio"])
    assert medians([r, summarise(_observed())])["first_call_s"] == pytest.approx(1.0)


def test_cited_sources_and_words_leave_the_reference_list_out() -> None:
    assert cited_sources(REPORT) == 3
    assert cited_sources("No citations here.\n[1] A reference line only.") == 0
    assert report_words("One two [1].\n[1] Ref words here") == 3


def test_import_lines_are_parsed_and_summed_per_package() -> None:
    lines = [
        (1.0, "import time: self [us] | cumulative | imported package"),
        (1.1, "import time:       120 |        120 |   openai.types"),
        (1.2, "import time:      1000 |       1120 | openai"),
        (1.3, "import time:       500 |        500 |     langgraph.graph.state"),
        (1.4, "[start_run] started topic=x"),
    ]
    found = import_times(lines)
    assert [name for _, name, _ in found] == ["openai.types", "openai", "langgraph.graph.state"]
    assert by_package(found) == [("openai", pytest.approx(0.00112)), ("langgraph", 0.0005)]


def test_cli_mode_defaults_to_the_issue_latency_model_and_flags_change_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[dict[str, Any]] = []
    passed: list[list[str] | None] = []
    pythons: list[str] = []

    def cli_main(latency: dict[str, float], topics: list[str], **flags: Any) -> int:
        seen.append(latency)
        passed.append(flags.get("extra"))
        pythons.append(flags["python"])
        return 0

    monkeypatch.setattr(run, "cli_main", cli_main)
    assert run.main(["--cli"]) == 0
    assert run.main(["--cli", "--search-s", "0.5", "--per-out-token-s", "0.01"]) == 0
    assert run.main(["--cli", "--topics", "1", "--", "--report-mode", "single", "-q"]) == 0
    assert passed == [[], [], ["--report-mode", "single", "-q"]]
    assert run.main(["--cli", "--python", "/u/bin/python"]) == 0
    assert pythons == [sys.executable] * 3 + ["/u/bin/python"]
    with pytest.raises(SystemExit):  # flags for the command make no sense in-process
        run.main(["--", "--report-mode", "single"])
    assert seen[0] == LATENCY == {
        "call_s": 0.3, "per_in_token_s": 0.0, "per_out_token_s": 0.003,
        "search_s": 0.3, "fetch_s": 0.2,
    }  # fmt: skip
    assert seen[1] == {**LATENCY, "search_s": 0.5, "per_out_token_s": 0.01}
    assert describe_latency(LATENCY) == (
        "300 ms a model call + 3 ms per output token + 0 ms per input token, "
        "300 ms a search, 200 ms a page"
    )


def test_the_command_is_the_chosen_installs_script_else_its_module(tmp_path: Path) -> None:
    python = tmp_path / "bin" / "python"
    python.parent.mkdir()
    assert command(str(python)) == [str(python), "-m", "deskresearch"]
    (tmp_path / "bin" / "deskresearch").write_text("#!/bin/sh\n")
    assert command(str(python)) == [str(tmp_path / "bin" / "deskresearch")]
