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


def wait_for_release(started: str, release: str, n: int) -> int:
    """Say the job started (a file), then run until ``release`` exists (at most two minutes)."""
    import time
    from pathlib import Path

    Path(started).touch()
    deadline = time.monotonic() + 120
    while not Path(release).exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return n * 2


def slow_double(n: int, seconds: float) -> int:
    import time

    time.sleep(seconds)
    return n * 2


def record(path: str, tag: str) -> str:
    """Append ``tag`` to the file at ``path``: the order jobs ran in."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(tag + "\n")
    return tag


def logged_wait(log: str, release: str, n: int) -> int:
    """Append a line to ``log`` at each start, then run until ``release`` exists (two minutes)."""
    import time
    from pathlib import Path

    with open(log, "a", encoding="utf-8") as f:
        f.write("started\n")
    deadline = time.monotonic() + 120
    while not Path(release).exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return n * 2
