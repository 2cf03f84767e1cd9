"""A run of the page's process as it goes: its tracker, how it ended, and change counts.

Every task and event the session streams bumps one version number (``Changes``) that the page's
event streams wait on: a change reaches an open page as soon as the server sees it.
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import sys
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
    review: Any = None  # what the run shows its reviewer while it waits (None: not waiting)
    answer: asyncio.Future[Any] | None = None  # the page's answer to that review, once given


def give_back() -> None:
    """Return the memory the runs freed to the system (an idle server keeps only what it uses).

    The allocators keep freed memory for later use; glibc's ``malloc_trim`` hands back what it
    can (about 5-8 MB after three runs: the research path's imports stay, as they must).
    """
    gc.collect()
    if sys.platform == "linux":
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):  # not glibc (musl): nothing to trim
            pass


async def reviewed(job: Job, review: Any, changed: Callable[[], None]) -> Any:
    """Show ``review`` with ``job`` (its snapshot carries it) until the page answers it."""
    job.review, job.answer = review, asyncio.get_running_loop().create_future()
    changed()
    try:
        return await job.answer
    finally:  # answered, or cancelled: the run stays paused at its review, resumable
        job.review, job.answer = None, None
        changed()
