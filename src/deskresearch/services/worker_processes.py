"""How a worker process starts: without its parent's ``__main__``, deaf to Ctrl-C, warmed up.

Two things a spawned worker must not inherit from the process that embeds us:
- **its ``__main__``**: multiprocessing re-runs the parent's main script in every spawned child
  (as ``__mp_main__``), so an unguarded ``asyncio.run(main())`` in a user's ``example.py`` would
  run the whole research again inside each worker. Workers only run module-level functions of
  installed packages, so they are started without the main module (``WorkerContext``).
- **Ctrl-C**: the terminal sends SIGINT to the whole process group. Workers are started with
  SIGINT blocked (the mask survives exec, as the stdlib's resource tracker does it) and ignore
  it, so only the main process decides what an interrupt means and no worker prints a traceback.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing import context as mp_context
from multiprocessing import spawn as mp_spawn
from typing import Any


def _exit_with_parent(parent: int) -> None:
    """Exit when the process that started us is gone (killed with SIGKILL, it cannot say so)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


_spawning = threading.local()  # set while one of our pools starts a process in this thread
_original_preparation = mp_spawn.get_preparation_data


def _preparation_data(name: str) -> dict[str, Any]:
    """What a spawned child is told about its parent; for our workers, nothing of ``__main__``."""
    data: dict[str, Any] = _original_preparation(name)
    if getattr(_spawning, "without_main", False):
        data.pop("init_main_from_path", None)
        data.pop("init_main_from_name", None)
    return data


class _WorkerProcess(mp_context.SpawnProcess):
    """A spawned process that does not import or run the parent's ``__main__``."""

    @staticmethod
    def _Popen(process_obj: Any) -> Any:  # noqa: N802 - multiprocessing's name
        # multiprocessing reads get_preparation_data from its module at launch; the wrapper
        # is installed once and acts only in this thread, while this process starts.
        mp_spawn.get_preparation_data = _preparation_data
        _spawning.without_main = True
        # SIGINT blocked right here, whatever this thread's mask became since it was set (the
        # stdlib's resource tracker, started from the same thread, unblocks it after its own
        # start): a Ctrl-C while the child imports would otherwise print its traceback.
        blocked = hasattr(signal, "pthread_sigmask")
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if blocked else None
        try:
            return mp_context.SpawnProcess._Popen(process_obj)
        finally:
            _spawning.without_main = False
            if mask is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)


class WorkerContext(mp_context.SpawnContext):
    """The spawn start method, with processes that leave ``__main__`` alone."""

    Process = _WorkerProcess


def block_interrupts() -> None:
    """Block SIGINT in this thread; processes it starts inherit the mask (across exec)."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


WORKER_NICE = 5


def warming_thread_setup() -> None:
    """Block SIGINT and, on Linux, lower this thread's priority: processes it starts inherit both.

    On Linux the nice value belongs to the thread, so the event loop's thread keeps its own,
    while the workers' start-up (interpreter, imports) no longer competes with the run's first
    model call for the CPU. Elsewhere nice() would lower the whole process: skipped.
    """
    block_interrupts()
    if sys.platform == "linux":
        os.nice(WORKER_NICE)


WARMUPS: list[Callable[[], object]] = []


def warm_up_with(job: Callable[[], object]) -> None:
    """Have every worker started from now on run ``job`` first (imports, models loaded up front).

    ``job`` must be a module-level function: a worker imports it by name. The services that use
    the workers register theirs, so this module imports none of them.
    """
    if job not in WARMUPS:
        WARMUPS.append(job)


def start_worker(parent: int, warmups: tuple[Callable[[], object], ...]) -> None:
    """Initializer of every worker: ignore Ctrl-C, then pay the imports and tokenizer up front."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # pending interrupts are now ignored, not delivered
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()
    # Lower priority: the event loop's process is on every request's path, workers on few.
    # (Started by warm(), a worker already has it from its first instruction.)
    if hasattr(os, "nice") and os.nice(0) < WORKER_NICE:
        os.nice(WORKER_NICE - os.nice(0))
    for job in warmups:
        job()
