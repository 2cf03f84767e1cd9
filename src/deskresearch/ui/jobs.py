"""A run of the page's process as it goes: its tracker, how it ended, and change counts.

Every task and event the session streams bumps one version number (``Changes``) that the page's
event streams wait on: a change reaches an open page as soon as the server sees it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from deskresearch.session.tracker import Tracker

RECENT = 40  # event lines a snapshot carries (the log under the panel)


class Changes:
    """A version number that waiters can wait on (bumped at each change of any run)."""

    def __init__(self) -> None:
        self.version = 0
        self._event = asyncio.Event()

    def bump(self) -> None:
        """Say something changed: every waiter wakes."""
        self.version += 1
        event, self._event = self._event, asyncio.Event()
        event.set()

    async def wait(self, seen: int, timeout: float) -> None:
        """Return once the version is past ``seen``, or after ``timeout`` seconds."""
        if self.version <= seen:
            try:
                await asyncio.wait_for(self._event.wait(), timeout)
            except TimeoutError:
                pass


class Watched(Tracker):
    """The CLI's tracker, telling the desk of every task and event it takes."""

    def __init__(self, changed: Callable[[], None]) -> None:
        super().__init__()
        self._changed = changed

    def custom(self, event: dict[str, Any]) -> None:
        """Take one progress event."""
        super().custom(event)
        self._changed()

    def task(self, payload: dict[str, Any]) -> None:
        """Take one task start or result."""
        super().task(payload)
        self._changed()


@dataclass
class Job:
    """A run of this process: running, or ended here (done, failed or cancelled)."""

    thread: str
    topic: str
    tracker: Tracker
    state: str = "running"  # running, done, failed, cancelled
    status: str = ""  # ok or insufficient_evidence once done
    reason: str = ""
    error: str = ""
    started: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    lines: deque[str] = field(default_factory=lambda: deque(maxlen=RECENT))
    version: int = 0
    at: float = 0.0  # wall-clock time of the latest change (the page measures its delay)
    elapsed: float | None = None  # frozen when the run ended
    task: asyncio.Task[None] | None = None
