"""Module-level jobs for worker-pool tests (a spawned worker imports them by name)."""

import os


def die() -> None:
    """Kill the worker process the way a segfault in lxml would."""
    os._exit(70)


def double(n: int) -> int:
    return n * 2
