"""The ``deskresearch`` command with a timestamped stderr line at each phase it passes.

Run as ``python bench/cli_phases.py TOPIC [flags]`` (``python -m bench --cli`` does so for one
extra run). Each phase prints ``phase: <name> <time.time()>``. The hooks wrap the command's own
functions from outside, changing nothing in the package; a hook whose target no longer exists
is skipped, so the probe keeps working while the command changes (its phase is then missing).
Like the console script, it imports the command at the top, which spawned workers repeat.
"""

from __future__ import annotations

import atexit
import functools
import importlib
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any


def mark(name: str) -> None:
    """Print one phase line."""
    print(f"phase: {name} {time.time():.6f}", file=sys.stderr, flush=True)


def _around(owner: Any, attr: str, name: str) -> None:
    """Mark ``name started`` / ``name done`` around ``owner.attr`` (sync or async)."""
    original = getattr(owner, attr, None)
    if original is None:
        return
    if getattr(original, "__code__", None) and original.__code__.co_flags & 0x80:  # coroutine

        @functools.wraps(original)
        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            mark(f"{name} started")
            try:
                return await original(*args, **kwargs)
            finally:
                mark(f"{name} done")

        setattr(owner, attr, timed_async)
        return

    @functools.wraps(original)
    def timed(*args: Any, **kwargs: Any) -> Any:
        mark(f"{name} started")
        try:
            return original(*args, **kwargs)
        finally:
            mark(f"{name} done")

    setattr(owner, attr, timed)


def _checkpointer(cli: Any) -> None:
    original: Callable[[str], Any] | None = getattr(cli, "open_checkpointer", None)
    if original is None:
        return

    @asynccontextmanager
    async def timed(location: str) -> AsyncIterator[Any]:
        mark("checkpointer open started")
        async with original(location) as saver:
            mark("checkpointer open done")
            yield saver
            mark("checkpointer close started")
        mark("checkpointer close done")

    cli.open_checkpointer = timed


def _workers_ready() -> None:
    """Mark when the first worker process has started and answered (its imports done)."""
    try:
        from deskresearch.services import workers
    except ImportError:
        return
    original = getattr(workers.WorkerPool, "_warm", None)
    if original is None:
        return
    lock, started = threading.Lock(), [False]

    def warm(self: Any) -> None:
        before = time.time()
        original(self)
        if getattr(self, "_warmed", None) is None:
            return
        with lock:  # every run, and each service sharing the pool, asks; the first starts it
            if started[0]:
                return
            started[0] = True
        print(f"phase: worker pool start started {before:.6f}", file=sys.stderr, flush=True)
        mark("worker pool start done")
        try:
            self._executor().submit(workers._ready).result()
            mark("first worker ready")
        except Exception:  # noqa: BLE001 - a probe must not change the run's outcome
            return

    setattr(workers.WorkerPool, "_warm", warm)  # noqa: B010 - mypy forbids assigning a method


def _first_hooks() -> None:
    """Stamp the start, and register the hooks that run last at exit (newest run first)."""
    mark("interpreter up")
    if register := getattr(threading, "_register_atexit", None):
        register(lambda: mark("thread-shutdown hooks done"))
    atexit.register(lambda: mark("atexit hooks done"))


# As the console script does, import the command at the top: spawned workers run this file
# again (as __mp_main__), so they pay for these imports just as the console script's do.
if __name__ == "__main__":
    _first_hooks()
from deskresearch import cli  # noqa: E402


def main() -> int:
    """Run the command's main with the hooks in place; return its exit code."""
    mark("imports done")
    for owner, attr, name in [
        (cli, "build_parser", "parser"),
        (cli, "build_graph", "graph build"),
        (cli, "_session", "run"),
        (cli, "write_outputs", "write files"),
    ]:
        _around(owner, attr, name)
    _checkpointer(cli)
    try:  # the module: the package's ``start_run`` name is the node function
        start_run = importlib.import_module("deskresearch.nodes.start_run")
    except ImportError:
        pass
    else:
        _around(start_run, "_check", "settings checks")
    _workers_ready()
    sys.argv[0] = "deskresearch"
    code = cli.main()
    mark("main returned")
    if register := getattr(threading, "_register_atexit", None):
        register(lambda: mark("thread-shutdown hooks started"))
    atexit.register(lambda: mark("atexit hooks started"))
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
