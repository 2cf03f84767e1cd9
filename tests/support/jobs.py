"""Module-level jobs for worker-pool tests (a spawned worker imports them by name)."""

import os


def die() -> None:
    """Kill the worker process the way a segfault in lxml would."""
    os._exit(70)


def double(n: int) -> int:
    return n * 2


def hang(seconds: float = 3600.0) -> None:
    """Hold the worker the way a pathological page in a slow parser would."""
    import time

    time.sleep(seconds)


def slow_double(n: int, seconds: float) -> int:
    import time

    time.sleep(seconds)
    return n * 2
