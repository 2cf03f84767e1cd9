import csv
import io
import json
from pathlib import Path

from rich.console import Console

from deskresearch.batch.board import Board, pick_mode
from deskresearch.batch.summary import BatchSummary, failed_row, row_for
from deskresearch.batch.topics import BadLine, Topic
from deskresearch.session.tracker import LINES

PANEL = sorted(
    (line.label for line in LINES), key=len, reverse=True
)  # "pages read" before "sources"

A = Topic(1, "EV [bold]batteries[/bold]", {}, "t-1", "ev")
B = Topic(3, "Night trains", {}, "t-3", "night")
VALUES = {
    "status": "ok",
    "report": "Cells are shredded [1]. Lithium is leached [1, 2]. A claim [9].",
    "sources": [{"id": 1}, {"id": 2}, {"id": 3}],
    "usage": [
        {"stage": "summarise_chunk", "model": "m", "input_tokens": 100, "output_tokens": 10,
         "calls": 3, "cached_calls": 2},
        {"stage": "write_report", "model": "m", "input_tokens": 50, "output_tokens": 40, "calls": 1},
    ],
    "citations": [{"verdict": "supported"}, {"verdict": "supported"}, {"verdict": "removed"}],
}  # fmt: skip


def test_a_row_counts_words_sources_citations_and_usage(tmp_path: Path) -> None:
    row = row_for(
        A, VALUES, run="new", wall_s=1.234, files=(tmp_path / "a.md", tmp_path / "a.json")
    )
    assert (row.words, row.sources, row.cited) == (8, 3, 2)  # [9] is no source; marks are no words
    assert row.citations == {"supported": 2, "removed": 1}
    assert (row.tokens_in, row.tokens_out, row.model_calls, row.cached_calls) == (150, 50, 4, 2)
    assert row.wall_s == 1.23 and row.thread_id == "t-1" and row.cost_usd is None


def test_the_summary_files_are_rewritten_as_topics_end(tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = BatchSummary(out, {"batch_id": "b"}, [A, B], [BadLine(2, "{oops", "malformed JSON")])
    summary.update(row_for(A, VALUES, run="new", wall_s=2.0, files=(out / "a.md", out / "a.json")))
    data = json.loads((out / "batch.json").read_text(encoding="utf-8"))
    assert data["batch_id"] == "b" and data["counts"] == {"ok": 1, "bad_line": 1, "pending": 1}
    assert [r["status"] for r in data["topics"]] == ["ok", "bad_line", "pending"]
    summary.update(failed_row(B, "ModelCallError: 500", wall_s=0.5))
    rows = list(csv.DictReader(io.StringIO((out / "batch.csv").read_text(encoding="utf-8"))))
    assert [r["status"] for r in rows] == ["ok", "bad_line", "failed"]
    assert rows[0]["citations"] == "supported=2 removed=1" and rows[0]["cost_usd"] == ""
    assert rows[0]["files"] == f"{out / 'a.md'} {out / 'a.json'}"
    assert rows[2]["error"] == "ModelCallError: 500" and rows[2]["thread_id"] == "t-3"
    assert not list(out.glob(".*tmp"))  # written by replacing, no leftovers

    # A later run of the same batch keeps the time a topic took when it ran.
    again = BatchSummary(out, {}, [A, B], [])
    again.update(
        row_for(A, VALUES, run="earlier", wall_s=0.0, files=(out / "a.md", out / "a.json"))
    )
    assert again.rows[1].wall_s == 2.0


def test_the_summary_files_mask_credentials_in_the_server_url_and_errors(tmp_path: Path) -> None:
    out = tmp_path / "out"
    where = "http://batch:hunter2@research.example:2024"
    summary = BatchSummary(out, {"batch_id": "b", "where": where}, [A], [])
    row = failed_row(A, f"ConnectError: {where}/threads refused", wall_s=0.1)
    row.node = where
    summary.update(row)
    written = (out / "batch.json").read_text("utf-8") + (out / "batch.csv").read_text("utf-8")
    assert "hunter2" not in written
    data = json.loads((out / "batch.json").read_text(encoding="utf-8"))
    assert data["where"] == data["topics"][0]["node"] == "http://batch:***@research.example:2024"
    assert data["topics"][0]["thread_id"] == "t-1"  # what a re-run matches rows by is kept


def test_plain_mode_prints_a_line_per_start_and_end() -> None:
    stream = io.StringIO()
    board = Board([A, B], "plain", stream)
    with board:
        board.started(A, node="abcdef0123456789", resumed=True)
        board.finished(
            row_for(A, VALUES, run="resumed", wall_s=3.0, files=(Path("a.md"), Path("a.json")))
        )
        board.finished(failed_row(B, "boom", wall_s=1.0))
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("line 1: resuming on node abcdef012345: EV [bold]batteries")
    assert lines[1] == f"line 1: ok: {A.topic}: 8 words, 3 sources, 2 cited, 3.0 s → a.md"
    assert lines[2] == "line 3: failed: Night trains: boom"


def test_a_run_s_own_pre_flight_notice_is_left_to_the_batch_s() -> None:
    """The batch says its notices once, for all its topics' searches (batch.cli)."""
    stream = io.StringIO()
    board = Board([A, B], "plain", stream)
    with board:
        board.started(B)
        board.event(B, {"stage": "preflight", "event": "notice", "message": "5 credits left"})
    assert "credits" not in stream.getvalue() and len(stream.getvalue().splitlines()) == 1


def test_the_live_table_shows_stage_pages_and_status_without_reading_markup() -> None:
    board = Board([A, B], "quiet")
    board.started(A)
    board.event(A, {"stage": "claim_pages", "event": "finished", "pages": 2})
    board.event(A, {"stage": "claim_pages", "event": "finished", "pages": 1})
    board.event(A, {"stage": "reduce_page", "event": "finished", "url": "u"})
    board.event(A, {"stage": "read_page", "event": "rejected", "url": "v"})
    board.event(A, {"stage": "read_page", "event": "fallback", "url": "w"})
    board.event(A, {"stage": "summarise_chunk", "event": "finished"})
    text = shown(board)
    assert "EV [bold]batteries[/bold]" in text  # a topic is text, not rich markup
    assert "chunks summarised" in text and "2/3" in text and "running" in text
    assert "waiting" in text  # B has not started


def shown(board: Board) -> str:
    console = Console(record=True, width=160, file=io.StringIO())
    console.print(board.table())
    return console.export_text()


def test_the_live_table_names_stages_in_the_single_run_panels_words() -> None:
    board = Board([A], "quiet")
    board.started(A)
    seen = []
    for node in ("start_run", "generate_keywords", "search_keyword", "plan_queries",
                 "rank_urls", "claim_pages", "dedup_urls", "read_page", "summarise_chunk",
                 "reduce_page", "collect_sources", "plan_report", "write_section",
                 "assemble_report", "check_citations", "judge_citations", "settle_citations",
                 "finish_report"):  # fmt: skip
        board.event(A, {"stage": node, "event": "finished"})
        text = shown(board)
        assert node not in text, f"{node}: a graph node's name shown to the user"
        seen.append(next((label for label in PANEL if label in text), ""))
    # The words of session.tracker.LINES, in the order a run meets them; a node the panel has no
    # line for (start_run, claim_pages, dedup_urls, assemble_report) keeps the stage before it.
    assert seen == ["", "keywords", "searches", "queries planned", "results ranked",
                    "results ranked", "results ranked", "pages read", "chunks summarised",
                    "pages merged", "sources", "report outline", "report sections",
                    "report sections", "citations checked", "citations checked",
                    "citations checked", "citations checked"]  # fmt: skip


def test_auto_mode_is_live_only_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert pick_mode("auto", False, Tty()) == "live"
    assert pick_mode("auto", False, io.StringIO()) == "plain"
    assert pick_mode("live", True, Tty()) == "quiet"
