"""Seeded faults that do not depend on scheduling: a draw is a hash of what is asked.

A shared ``random.Random`` hands its next number to whichever request arrives first, so which
request fails depends on the order concurrent branches reach the server: a test using it is
flaky. Here a draw is a pure function of the seed, the request's content (loopback ports
removed, as they change every run) and how many times that same request came before.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")
_LOOPBACK_PORT = re.compile(r"(127\.0\.0\.\d+|localhost):\d+")


def stable(text: str) -> str:
    """``text`` without loopback ports (a fresh free port each run must not change a draw)."""
    return _LOOPBACK_PORT.sub(r"\1", text)


def draw(seed: int | str, *parts: object) -> float:
    """A number in [0, 1) fixed by the seed and the parts."""
    key = "\x1f".join([str(seed), *(stable(str(p)) for p in parts)])
    digest = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def pick(options: Sequence[T], seed: int | str, *parts: object) -> T:
    """One of ``options``, fixed by the seed and the parts."""
    return options[int(draw(seed, "pick", *parts) * len(options))]
