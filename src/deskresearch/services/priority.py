"""A gate that lets at most ``width`` threads through at once, the most urgent first.

The worker pool's hand threads pass it before they give a job to a worker process. A process
pool takes jobs in the order they come; this gate lets a job that finishes a page already
started (its split, after its extraction) pass the extractions of pages that came after it, so
the page whose text is ready first is summarised first.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager

URGENT = 0  # a job that finishes work already started
NORMAL = 1


class PriorityGate:
    """At most ``width`` holders at once; waiters enter by priority, then in arrival order."""

    def __init__(self, width: int) -> None:
        self._width = max(width, 1)
        self._busy = 0
        self._waiting: list[tuple[int, int]] = []
        self._order = itertools.count()
        self._changed = threading.Condition()

    @contextmanager
    def passing(self, priority: int = NORMAL) -> Iterator[None]:
        """Hold one of the gate's places for the ``with`` block (blocks until one is free)."""
        with self._changed:
            me = (priority, next(self._order))
            heapq.heappush(self._waiting, me)
            while self._waiting[0] != me or self._busy >= self._width:
                self._changed.wait()
            heapq.heappop(self._waiting)
            self._busy += 1
            self._changed.notify_all()  # the next waiter may pass too, if a place is free
        try:
            yield
        finally:
            with self._changed:
                self._busy -= 1
                self._changed.notify_all()

    def waiting(self) -> int:
        """How many threads wait for a place (tests wait for this state)."""
        with self._changed:
            return len(self._waiting)
