"""What a batch shows while it runs: a live table in a terminal, one line per change otherwise.

The table has a row per topic (stage, pages read, sources cited, status, time); without a
terminal (a pipe, a log file, CI) each topic prints a line when it starts and when it ends.
A stage is named as the single run's panel names it (``session.tracker.LINES``: "searches",
"pages read", "citations checked"), never by its graph node.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal, TextIO

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from deskresearch.batch.summary import Row
from deskresearch.batch.topics import Topic
from deskresearch.session.tracker import LINES
from deskresearch.text.plural import plural

Mode = Literal["live", "plain", "quiet"]
TOPIC_CHARS = 48
_STYLE = {"ok": "green", "failed": "red", "insufficient_evidence": "yellow"}
# A node the panel has no line for (claim_pages, dedup_urls, ...) keeps the stage shown before it.
LABELS = {stage: line.label for line in LINES for stage in line.stages}


@dataclass
class _State:
    topic: Topic
    status: str = "waiting"
    stage: str = ""
    pages: int = 0
    planned: int = 0
    started: float = 0.0
    ended: float = 0.0
    node: str = ""
    row: Row | None = None


def pick_mode(choice: str, quiet: bool, stream: TextIO) -> Mode:
    """``auto`` is the live table on a terminal, plain lines otherwise; -q shows neither."""
    if quiet:
        return "quiet"
    if choice == "auto":
        return "live" if stream.isatty() else "plain"
    return "live" if choice == "live" else "plain"


class Board:
    """The batch's progress, shown as ``mode`` says; a context manager (the live table)."""

    def __init__(self, topics: list[Topic], mode: Mode, stream: TextIO | None = None) -> None:
        self.mode = mode
        self.stream = stream or sys.stderr
        self._states = {t.thread_id: _State(t) for t in topics}
        self._live: Live | None = None

    def __enter__(self) -> Board:
        """Start the live table (in live mode)."""
        if self.mode == "live":
            console = Console(file=self.stream)
            self._live = Live(get_renderable=self.table, console=console, refresh_per_second=4)
            self._live.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Draw the table once more, as it ends, and stop it."""
        if self._live is not None:
            self._live.refresh()
            self._live.stop()

    def started(self, topic: Topic, *, node: str = "", resumed: bool = False) -> None:
        """A topic began (or began again, on another node)."""
        s = self._states[topic.thread_id]
        s.status, s.started, s.node = ("resuming" if resumed else "running"), time.time(), node
        where = f" on node {node[:12]}" if node else ""
        how = "resuming" if resumed else "started"
        self._line(f"line {topic.line}: {how}{where}: {topic.topic} (thread {topic.thread_id})")

    def event(self, topic: Topic, event: dict[str, Any]) -> None:
        """A progress event of a topic's run (the graph's custom stream)."""
        s = self._states[topic.thread_id]
        stage, what = event.get("stage"), event.get("event")
        if stage == "preflight":  # a run's own notice: the batch said its own, for all topics
            return
        s.stage = LABELS.get(str(stage), s.stage)
        if stage == "claim_pages" and "pages" in event:  # a query's pages, read at once
            s.planned += int(event["pages"])
        elif stage in ("dedup_urls", "review_plan") and "pages" in event:  # the whole plan
            s.planned = int(event["pages"])
        elif stage == "reduce_page" or (stage == "read_page" and what == "rejected"):
            s.pages += 1  # a page is done: summarised, found empty, or rejected

    def finished(self, row: Row) -> None:
        """A topic ended: ``row`` says how."""
        s = self._states[row.thread_id] if row.thread_id in self._states else None
        if s is None:
            return
        s.status, s.row, s.ended = row.status, row, time.time()
        if row.status == "failed":
            self._line(f"line {row.line}: failed: {row.topic}: {row.error}")
            return
        earlier = " (finished earlier)" if row.run == "earlier" else ""
        self._line(
            f"line {row.line}: {row.status}{earlier}: {row.topic}: {plural(row.words, 'word')}, "
            f"{plural(row.sources, 'source')}, {row.cited} cited, {row.wall_s:.1f} s → "
            f"{row.files[0] if row.files else '-'}"
        )

    def _line(self, text: str) -> None:
        if self.mode == "plain":
            print(text, file=self.stream, flush=True)  # noqa: T201 - the plain progress output

    def table(self) -> Table:
        """The live table as it stands."""
        table = Table(expand=False, header_style="bold")
        for name in ("line", "topic", "stage", "pages", "cited", "status", "time"):
            table.add_column(name, justify="right" if name in ("line", "time") else "left")
        now = time.time()
        for s in self._states.values():
            topic = s.topic.topic
            topic = topic if len(topic) <= TOPIC_CHARS else topic[: TOPIC_CHARS - 1] + "…"
            pages = f"{s.pages}/{s.planned}" if s.planned else (str(s.pages) if s.pages else "")
            cited = str(s.row.cited) if s.row and s.row.status != "failed" else ""
            if s.row and s.row.run == "earlier":
                seconds = "earlier"
            elif s.started:
                seconds = f"{(s.ended or now) - s.started:.0f} s"
            else:
                seconds = ""
            style = _STYLE.get(s.status, "")
            status = f"[{style}]{s.status}[/]" if style else s.status
            table.add_row(str(s.topic.line), Text(topic), s.stage, pages, cited, status, seconds)
        return table
