"""The ``deskresearch`` command with a timestamped stderr line at each phase it passes.

Run as ``python bench/cli_phases.py TOPIC [flags]`` (``python -m bench --cli`` does so for one
extra run). Each phase prints ``phase: <name> <time.time()>``. The hooks wrap the command's own
functions from outside, changing nothing in the package; a hook whose target no longer exists
is skipped, so the probe keeps working while the command changes (its phase is then missing).
Like the console script, it imports only the command's entry module at the top; the research
path's modules are imported where the command imports them: right after ``headstart.prepare``
(settings read, the keywords request sent), or, for a command without a head start, just before
the parser runs (then "research imports" come before "parser").
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


def _leave_marks(cli: Any) -> None:
    """Mark the exit path: ``leave`` (flush, stop workers, ``os._exit``) skips atexit hooks."""
    original = getattr(cli, "leave", None)
    if original is None:  # an older command: it returns from main() and the interpreter exits
        if register := getattr(threading, "_register_atexit", None):
            register(lambda: mark("thread-shutdown hooks started"))
        atexit.register(lambda: mark("atexit hooks done"))
        return

    def leave(code: int) -> Any:
        mark("leave started (flush, stop workers, os._exit)")
        return original(code)

    cli.leave = leave


# As the console script does, import only the command's entry module at the top; the research
# path imports the rest once the arguments are parsed (cli.main), which the hooks below follow.
if __name__ == "__main__":
    mark("interpreter up")
import deskresearch.__main__ as cli  # noqa: E402 - the console script's module


def _session_hooks() -> None:
    """Hooks on the research path's modules, imported (as cli.main would) and timed here."""
    mark("research imports started")
    research = importlib.import_module("deskresearch.cli.research")
    mark("research imports done")
    _around(research, "research", "run")
    _checkpointer(importlib.import_module("deskresearch.session.engines"))
    for module, attr, name in [
        ("deskresearch.graph", "build_graph", "graph build"),
        ("deskresearch.session.reports", "write_files", "write files"),
        ("deskresearch.nodes.start_run", "check_settings", "settings checks"),
    ]:
        try:
            _around(importlib.import_module(module), attr, name)
        except ImportError:
            pass


def _after_head_start() -> bool:
    """Install the research path's hooks once ``prepare`` returned, as the command imports it."""
    mark("head-start module import started (by this probe, before the parser)")
    try:
        headstart = importlib.import_module("deskresearch.cli.headstart")
    except ImportError:
        return False
    mark("head-start module import done (the command imports it in its head start)")
    _around(headstart, "admit", "pre-flight, local (before the head start)")
    _around(headstart, "_check_network", "pre-flight, network (on a thread; the head start waits)")
    original = headstart.prepare

    @functools.wraps(original)
    def prepare(*args: Any, **kwargs: Any) -> Any:
        mark("settings and head start started")
        prepared = original(*args, **kwargs)
        mark("settings and head start done (keywords request sent)")
        _session_hooks()
        return prepared

    setattr(headstart, "prepare", prepare)  # noqa: B010 - a module found at run time
    return True


def main() -> int:
    """Run the command as its console script does (main, then leave) with the hooks in place."""
    mark("entry module imported")
    _around(importlib.import_module("deskresearch.cli.command"), "build_parser", "parser")
    if not _after_head_start():
        _session_hooks()
    _workers_ready()
    _leave_marks(cli)
    sys.argv[0] = "deskresearch"
    entry = getattr(cli, "run", None)
    if entry is None:
        return int(cli.main())
    entry()  # main(), then leave(): never returns
    return 0


if __name__ == "__main__":
    sys.exit(main())
