"""How the CLI shows progress on stderr: a live panel (rich), plain lines, or nothing.

``auto`` draws the panel when stderr is a terminal (and TERM is not ``dumb``), else prints one
line per event, which is what a log file or CI wants. rich honours ``NO_COLOR`` (and
``FORCE_COLOR``) itself. The same events reach SDK users on LangGraph's ``custom`` stream.
"""

from __future__ import annotations

import os
import sys
from types import TracebackType
from typing import Any, Protocol, TextIO

from deskresearch.session.tracker import Tracker, event_line


class View(Protocol):
    """Shows a run's progress while it streams (a context manager around the stream)."""

    def __enter__(self) -> View:
        """Start showing."""

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Stop showing (the last state stays on screen)."""

    def event(self, event: dict[str, Any]) -> None:
        """Show one progress event (the tracker has already taken it)."""


class QuietView:
    """Shows nothing."""

    def __enter__(self) -> QuietView:
        """Start (nothing to do)."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop (nothing to do)."""

    def event(self, event: dict[str, Any]) -> None:
        """Ignore the event."""


class PlainView(QuietView):
    """One line per event: ``  3.2s [read_page] finished url=... chunks=3``."""

    def __init__(self, tracker: Tracker, out: TextIO | None = None) -> None:
        self.tracker = tracker
        self.out = out or sys.stderr

    def event(self, event: dict[str, Any]) -> None:
        """Print the event with its scalar fields."""
        print(f"{self.tracker.elapsed():6.1f}s {event_line(event)}", file=self.out, flush=True)


class LiveView(QuietView):
    """A panel redrawn in place: a line per stage with counts, bars and times; tokens, cost."""

    def __init__(self, tracker: Tracker, title: str, *, force: bool = False) -> None:
        from rich.console import Console
        from rich.live import Live

        self.tracker = tracker
        self.title = title
        self.console = Console(stderr=True, force_terminal=True if force else None)
        self.live = Live(
            console=self.console, get_renderable=self.render, refresh_per_second=8, transient=False
        )

    def __enter__(self) -> LiveView:
        """Start redrawing the panel."""
        self.live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        """Draw the panel one last time and leave it on screen."""
        self.live.stop()

    def render(self) -> Any:
        """Return the panel for the tracker's current state."""
        from rich.console import Group
        from rich.panel import Panel
        from rich.progress_bar import ProgressBar
        from rich.spinner import Spinner
        from rich.table import Table
        from rich.text import Text

        t = self.tracker
        table = Table.grid(padding=(0, 1), expand=True)
        for justify in ("left", "left", "right", "left"):
            table.add_column(justify=justify, no_wrap=True)
        table.add_column(no_wrap=True, overflow="ellipsis", ratio=1)  # details: one line each
        table.add_column(justify="right", no_wrap=True)
        for row in t.rows():
            mark: Any = Text("✓", style="green") if row.done else Spinner("dots")
            count = f"{row.finished}/{row.started}" if row.counted else ""
            bar: Any = (
                ProgressBar(total=max(row.started, 1), completed=row.finished, width=16)
                if row.counted
                else ""
            )
            took = f"{row.seconds:.1f}s"
            table.add_row(mark, row.label, count, bar, Text(row.extra, style="dim"), took)
        tokens_in, tokens_out = t.tokens()
        footer = Text(
            f"elapsed {t.elapsed():.1f}s · tokens {tokens_in:,} in / {tokens_out:,} out · {t.cost()}",
            style="bold",
        )
        return Panel(Group(table, footer), title=self.title, title_align="left")


def make_view(mode: str, *, quiet: bool, tracker: Tracker, title: str) -> View:
    """Pick the view: nothing (quiet), plain lines, or the live panel."""
    if quiet:
        return QuietView()
    terminal = sys.stderr.isatty() and os.environ.get("TERM") != "dumb"
    if mode == "live" or (mode == "auto" and terminal):
        return LiveView(tracker, title, force=mode == "live")
    return PlainView(tracker)
