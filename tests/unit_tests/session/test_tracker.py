"""The progress tracker: counts per line from task starts and ends, tokens, timings."""

from typing import Any

from deskresearch.config.pricing import estimate, price
from deskresearch.records import Usage
from deskresearch.session.tracker import LINES, Line, Tracker


def start(name: str, task: str) -> dict[str, Any]:
    return {"id": task, "name": name, "input": {}, "triggers": ()}


def end(name: str, task: str, **result: Any) -> dict[str, Any]:
    return {"id": task, "name": name, "error": None, "result": result, "interrupts": []}


def usage(stage: str, tokens_in: int, tokens_out: int) -> dict[str, Any]:
    return {"stage": stage, "model": "gpt-4o-mini", "input_tokens": tokens_in,
            "output_tokens": tokens_out, "calls": 1}  # fmt: skip


def test_pages_count_tasks_finished_of_started_with_failures_noted() -> None:
    t = Tracker(subgraphs=["process_page"])
    for i in range(3):
        t.task(start("read_page", f"r{i}"))
    t.task(end("read_page", "r0", chunks=["a"]))
    t.custom({"stage": "read_page", "event": "fallback", "url": "u1", "reason": "timeout"})
    t.task(end("read_page", "r1"))
    st = t.state["pages read"]
    assert (st.finished, st.started, dict(st.notes)) == (2, 3, {"failed": 1})
    assert t.status("pages read") == "running"
    t.task(end("read_page", "r2"))
    assert t.status("pages read") == "done"


def test_a_line_stays_running_while_a_line_above_it_is() -> None:
    t = Tracker()
    t.task(start("read_page", "r0"))
    t.task(start("summarise_chunk", "c0"))
    t.task(end("summarise_chunk", "c0"))
    assert t.status("chunks summarised") == "running"  # more chunks may come from r0


def test_tokens_are_counted_where_spent_not_again_by_the_subgraph() -> None:
    t = Tracker(subgraphs=["process_page"])
    t.task(start("summarise_chunk", "c0"))
    t.task(end("summarise_chunk", "c0", usage=[usage("summarise_chunk", 100, 10)]))
    t.task(end("process_page", "p0", usage=[usage("summarise_chunk", 100, 10)]))
    t.task(end("start_run", "s0", usage=object()))  # a reset (Overwrite), not rows
    assert t.tokens() == (100, 10)
    assert t.cost() == "≈ $0.0000"


def test_stage_timings_cover_every_task_of_a_node() -> None:
    t = Tracker()
    t.task(start("rank_urls", "a"))
    t.task(start("rank_urls", "b"))
    t.task(end("rank_urls", "a"))
    t.task(end("rank_urls", "b"))
    clock = t.stage_timings()["rank_urls"]
    assert clock.tasks == 2 and clock.first is not None and clock.last is not None
    assert clock.first <= clock.last and clock.busy >= 0


def test_a_new_stage_is_one_line_in_the_table() -> None:
    t = Tracker(lines=[*LINES, Line("figures checked", ("check_figures",))])
    t.task(start("check_figures", "f0"))
    t.task(end("check_figures", "f0"))
    assert t.state["figures checked"].finished == 1
    assert t.summary() == "1 figures checked"


def test_uncounted_lines_show_the_latest_event_detail() -> None:
    t = Tracker()
    t.custom({"stage": "generate_keywords", "event": "finished", "keywords": ["a", "b"]})
    assert t.state["keywords"].detail == "a, b" and t.status("keywords") == "done"


def test_prices_follow_the_longest_model_name_and_leave_unknown_models_unpriced() -> None:
    assert price("gpt-4o-mini-2024-07-18") == price("gpt-4o-mini") != price("gpt-4o")
    row = Usage(
        stage="write_report", model="llama3.1", input_tokens=10**6, output_tokens=0, calls=1
    )
    usd, unpriced = estimate([row])
    assert usd == 0 and unpriced == ["llama3.1"]


def test_the_judge_s_batches_show_as_one_step_with_the_draft_s_total() -> None:
    t = Tracker()
    label = "citations checked"
    t.custom({"stage": "check_citations", "event": "finished", "sentences": 12, "pending": 7})
    for i, n in enumerate((3, 2, 2)):
        t.task(start("judge_citations", f"j{i}"))
        t.custom({"stage": "judge_citations", "event": "started", "sentences": n,
                  "batch": i + 1, "batches": 3, "pending": 7})  # fmt: skip
    assert t.state[label].detail == "judging 7 sentences in 3 calls"
    t.custom({"stage": "judge_citations", "event": "finished", "batch": 1, "supported": 3})
    t.task(end("judge_citations", "j0"))
    assert t.status(label) == "running", "two batches are still out"
    for i in (1, 2):
        t.task(end("judge_citations", f"j{i}"))
    assert t.status(label) == "done"
    one = Tracker()
    one.custom({"stage": "judge_citations", "event": "started", "sentences": 2, "batch": 1,
                "batches": 1, "pending": 2})  # fmt: skip
    assert one.state[label].detail == "judging 2 sentences"


def test_the_panel_says_how_many_origins_the_sources_are_and_what_weighing_found() -> None:
    t = Tracker()
    t.custom({"stage": "collect_sources", "event": "finished", "sources": 5, "origins": 3})
    assert t.state["sources"].detail == "5 numbered, 3 independent origins"
    t.custom({"stage": "collect_sources", "event": "finished", "sources": 2, "origins": 2})
    assert t.state["sources"].detail == "2 numbered"
    t.custom({"stage": "weigh_evidence", "event": "finished", "pairs": 0})
    assert t.state["evidence weighed"].detail == "nothing to weigh"
    t.custom({"stage": "weigh_evidence", "event": "finished", "pairs": 3, "disagreements": 1,
              "changes": 0})  # fmt: skip
    assert (
        t.state["evidence weighed"].detail
        == "3 pairs compared: 1 disagreement, 0 changes over time"
    )


def test_rows_show_the_lines_reached_with_counts_notes_and_details_in_panel_order() -> None:
    t = Tracker()
    t.custom({"stage": "generate_keywords", "event": "finished", "keywords": ["a", "b"]})
    t.task(start("read_page", "r0"))
    t.task(start("read_page", "r1"))
    t.custom({"stage": "read_page", "event": "fallback", "url": "u", "reason": "timeout"})
    t.task(end("read_page", "r0"))
    rows = t.rows()
    assert [r.label for r in rows] == ["keywords", "pages read"]  # nothing else reached yet
    keywords, pages = rows
    assert (keywords.done, keywords.counted, keywords.extra) == (True, False, "a, b")
    assert (pages.done, pages.finished, pages.started, pages.extra) == (False, 1, 2, "1 failed")
    t.ended = True
    assert all(r.done for r in t.rows())
