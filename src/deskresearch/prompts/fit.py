"""A prompt's data fitted to a window: each group (a source's facts, a page's) keeps its first items.

The report's own prompts carry every source's facts. A local server gives its model a small
window (4,096 tokens unless started with more) and Ollama cuts a longer prompt without a word,
instructions first, so the facts are cut here instead, where it can be said: every group keeps
as many of its first items as lets the prompt fit, the longest groups losing items first, and at
least ``least`` each (a source without facts could not be cited or planned for).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Fitted(Generic[T]):
    """Groups as they fit: ``cap`` items a group at most (None: nothing was cut)."""

    groups: list[list[T]]
    kept: int
    total: int
    cap: int | None


def capped(groups: Sequence[Sequence[T]], cap: int) -> list[list[T]]:
    """Each group's first ``cap`` items."""
    return [list(g[:cap]) for g in groups]


def fit_groups(
    groups: Sequence[Sequence[T]], fits: Callable[[list[list[T]]], bool], *, least: int = 1
) -> Fitted[T]:
    """The largest cap on each group's items (at least ``least``) whose rendering ``fits``.

    ``fits`` is asked O(log n) times (binary search on the cap; fewer items never fit worse).
    When even ``least`` items a group do not fit, that is what is kept: what is left over is
    the server's to refuse or the cut check's to tell.
    """
    whole = [list(g) for g in groups]
    total = sum(len(g) for g in whole)
    if fits(whole):
        return Fitted(whole, total, total, None)
    low, high = least, max((len(g) for g in whole), default=0) - 1
    best = least
    while low <= high:
        mid = (low + high) // 2
        if fits(capped(whole, mid)):
            best, low = mid, mid + 1
        else:
            high = mid - 1
    kept = capped(whole, best)
    return Fitted(kept, sum(len(g) for g in kept), total, best)
