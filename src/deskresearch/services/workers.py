"""Worker processes for the CPU-bound steps (trafilatura extraction, tiktoken splitting).

Both hold the GIL for tens of milliseconds a page, which in the event loop's process would
stall every other branch of the run. Workers are spawned (no inherited locks or lxml state),
run the warm-ups their users register (``warm_up_with``: trafilatura, the tokenizer, the
language model) when started, and are started by ``warm()`` while the first model calls are in
flight. Threads are no option for trafilatura: concurrent extractions
in threads crashed the interpreter (SIGABRT in lxml). Where processes cannot be started (no
``sem_open``, e.g. some sandboxes) or ``workers=0``, one background thread does the work.

Two things a spawned worker must not inherit from the process that embeds us:
- **its ``__main__``**: multiprocessing re-runs the parent's main script in every spawned child
  (as ``__mp_main__``), so an unguarded ``asyncio.run(main())`` in a user's ``example.py`` would
  run the whole research again inside each worker. Workers only run module-level functions of
  installed packages, so they are started without the main module (``_without_main``).
- **Ctrl-C**: the terminal sends SIGINT to the whole process group. Workers are started with
  SIGINT blocked (the mask survives exec, as the stdlib's resource tracker does it) and ignore
  it, so only the main process decides what an interrupt means and no worker prints a traceback.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import cache, partial
from multiprocessing import context as mp_context
from multiprocessing import spawn as mp_spawn
from typing import Any, TypeVar

from deskresearch.errors import ConfigError
from deskresearch.services.priority import NORMAL, URGENT, PriorityGate

T = TypeVar("T")


class WorkerCrashed(Exception):
    """A worker process died while running a job (the pool is replaced for the next job)."""


class WorkerTimeout(Exception):
    """A job ran past its deadline; its worker was killed and the pool replaced."""


class _Ticket:
    """One job's fate, shared by the awaiting coroutine and the thread that hands it over."""

    abandoned = False  # its caller gave up (deadline): never run it again
    retried = False  # it was resubmitted once after another job's worker was killed


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


class _WorkerContext(mp_context.SpawnContext):
    """The spawn start method, with processes that leave ``__main__`` alone."""

    Process = _WorkerProcess


def _block_interrupts() -> None:
    """Block SIGINT in this thread; processes it starts inherit the mask (across exec)."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


WORKER_NICE = 5


def _warming_thread_setup() -> None:
    """Block SIGINT and, on Linux, lower this thread's priority: processes it starts inherit both.

    On Linux the nice value belongs to the thread, so the event loop's thread keeps its own,
    while the workers' start-up (interpreter, imports) no longer competes with the run's first
    model call for the CPU. Elsewhere nice() would lower the whole process: skipped.
    """
    _block_interrupts()
    if sys.platform == "linux":
        os.nice(WORKER_NICE)


_WARMUPS: list[Callable[[], object]] = []


def warm_up_with(job: Callable[[], object]) -> None:
    """Have every worker started from now on run ``job`` first (imports, models loaded up front).

    ``job`` must be a module-level function: a worker imports it by name. The services that use
    the workers register theirs, so this module imports none of them.
    """
    if job not in _WARMUPS:
        _WARMUPS.append(job)


def _start_worker(parent: int, warmups: tuple[Callable[[], object], ...]) -> None:
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


def _ready() -> bool:
    return True


class WorkerPool:
    """A lazily started pool of ``workers`` processes (0: one thread)."""

    def __init__(self, workers: int | None = None) -> None:
        """``workers``: processes to use (default: min(2, CPUs)); 0 runs jobs in one thread."""
        self.workers = min(2, os.cpu_count() or 1) if workers is None else workers
        self._pool: Executor | None = None
        self._warmed: Executor | None = None
        self._killed: set[int] = set()  # ids of pools killed on purpose (a job's deadline)
        self._lock = threading.Lock()
        # Starting processes and handing them jobs writes to pipes: blocking calls that must
        # not run on the event loop (`langgraph dev` rejects them). These threads do it.
        # They block SIGINT, so the workers they start do too.
        self._hands = ThreadPoolExecutor(
            16, thread_name_prefix="deskresearch-submit", initializer=_block_interrupts
        )
        # A job goes to a worker only when one is free, so an urgent job waits for the jobs
        # running, never for those queued before it.
        self._gate = PriorityGate(max(self.workers, 1))

    def _executor(self) -> Executor:
        with self._lock:
            if self._pool is None:
                self._pool = self._start()
            return self._pool

    def _start(self) -> Executor:
        if self.workers > 0:
            try:
                return ProcessPoolExecutor(
                    self.workers,
                    mp_context=_WorkerContext(),
                    initializer=_start_worker,
                    initargs=(os.getpid(), tuple(_WARMUPS)),
                )
            except (OSError, NotImplementedError, ImportError):
                pass  # no process support here: fall through to a thread
        return ThreadPoolExecutor(1, thread_name_prefix="deskresearch-worker")

    def _warm(self) -> None:
        pool = self._executor()
        if pool is self._warmed:  # every run, and both services sharing this pool, call warm()
            return
        self._warmed = pool
        for _ in range(max(self.workers, 1)):
            pool.submit(_ready)

    def warm(self) -> None:
        """Start the workers now, so the first page does not wait for them; returns at once.

        A thread of its own starts them, at a lower priority (``_warming_thread_setup``).
        """
        threading.Thread(target=self._warm_in_background, daemon=True).start()

    def _warm_in_background(self) -> None:
        _warming_thread_setup()
        self._warm()

    def _call(self, job: Callable[[], T], ticket: _Ticket, priority: int) -> T:
        with self._gate.passing(priority):
            return self._submit(job, ticket)

    def _submit(self, job: Callable[[], T], ticket: _Ticket) -> T:
        while True:
            pool = self._executor()
            try:
                return pool.submit(job).result()
            except BrokenProcessPool:
                with self._lock:
                    if self._pool is pool:
                        self._pool = None
                    killed = id(pool) in self._killed
            # A job that only shared a pool with one past its deadline runs again, once.
            if not killed or ticket.abandoned or ticket.retried:
                name = getattr(getattr(job, "func", job), "__name__", "job")
                raise WorkerCrashed(name) from None
            ticket.retried = True

    def _kill(self) -> None:
        """Kill the current pool's workers (a job is stuck in one); the next job starts anew."""
        with self._lock:
            pool, self._pool = self._pool, None
            if pool is not None:
                self._killed.add(id(pool))
        if isinstance(pool, ProcessPoolExecutor):
            # Python 3.14 has pool.kill_workers(); before it, the processes are only reachable
            # through this private dict.
            for proc in list((getattr(pool, "_processes", None) or {}).values()):
                proc.kill()
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)  # a stuck thread cannot be killed

    async def run(
        self,
        fn: Callable[..., T],
        *args: Any,
        deadline_s: float | None = None,
        urgent: bool = False,
        **kwargs: Any,
    ) -> T:
        """Run ``fn(*args, **kwargs)`` in a worker (``fn`` must be a module-level function).

        An ``urgent`` job (one that finishes work already started) goes to the next free
        worker before the jobs that are waiting.

        Raises:
            WorkerCrashed: the worker died on this job.
            WorkerTimeout: the job ran past ``deadline_s``; its worker was killed.
        """
        job, ticket = partial(fn, *args, **kwargs), _Ticket()
        loop = asyncio.get_running_loop()
        priority = URGENT if urgent else NORMAL
        handed = loop.run_in_executor(self._hands, self._call, job, ticket, priority)
        try:
            return await asyncio.wait_for(handed, deadline_s)
        except TimeoutError:
            ticket.abandoned = True
            await loop.run_in_executor(self._hands, self._kill)
            raise WorkerTimeout(getattr(fn, "__name__", "job")) from None

    def close(self) -> None:
        """Stop the workers (they also stop when this process exits)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def terminate(self) -> None:
        """Stop the workers now, without waiting for them: for a process about to exit.

        Idle workers hold nothing worth saving; a job still running is abandoned.
        """
        with self._lock:
            pool, self._pool = self._pool, None
        if isinstance(pool, ProcessPoolExecutor):
            for proc in list((getattr(pool, "_processes", None) or {}).values()):
                proc.terminate()
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


WORKERS_ENV = "DESKRESEARCH_WORKERS"


@cache
def shared_pool() -> WorkerPool:
    """The process-wide default pool: every graph built in one process shares its workers.

    ``DESKRESEARCH_WORKERS`` sets its size (0: one thread, no processes; each process holds
    trafilatura and the tokenizer, about 165 MB).

    Raises:
        ConfigError: the variable is not a whole number from 0 to 64.
    """
    size = pool_size(os.environ)
    return WorkerPool() if size is None else WorkerPool(size)


def pool_size(environ: Mapping[str, str]) -> int | None:
    """The worker count ``DESKRESEARCH_WORKERS`` asks for (None: the default).

    Raises:
        ConfigError: the variable is not a whole number from 0 to 64.
    """
    raw = environ.get(WORKERS_ENV, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) > 64:
        raise ConfigError(
            f"{WORKERS_ENV}={raw!r} in the environment: give a whole number of worker "
            f"processes from 0 to 64 (change or unset {WORKERS_ENV})"
        )
    return int(raw)


def terminate_shared_pool() -> None:
    """Stop the shared pool's workers at once, if it was ever started (for a fast exit)."""
    if shared_pool.cache_info().currsize:
        shared_pool().terminate()
