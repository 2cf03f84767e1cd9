"""Worker processes for the CPU-bound steps (trafilatura extraction, tiktoken splitting).

Both hold the GIL for tens of milliseconds a page, which in the event loop's process would
stall every other branch of the run. Workers are spawned (no inherited locks or lxml state),
run the warm-ups their users register (``warm_up_with``: trafilatura, the tokenizer, the
language model) when started, and are started by ``warm()`` while the first model calls are in
flight. Threads are no option for trafilatura: concurrent extractions
in threads crashed the interpreter (SIGABRT in lxml). Where processes cannot be started (no
``sem_open``, e.g. some sandboxes) or ``workers=0``, one background thread does the work.

How a worker starts (without the parent's ``__main__``, deaf to Ctrl-C, warmed up) is
``worker_processes``'s.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from functools import cache, partial
from typing import Any, TypeVar

from deskresearch.errors import ConfigError
from deskresearch.services.priority import NORMAL, URGENT, PriorityGate
from deskresearch.services.worker_processes import (
    WARMUPS,
    WorkerContext,
    block_interrupts,
    start_worker,
    warming_thread_setup,
)

T = TypeVar("T")


class WorkerCrashed(Exception):
    """A worker process died while running a job (the pool is replaced for the next job)."""


class WorkerTimeout(Exception):
    """A job ran past its deadline; its worker was killed and the pool replaced."""


class _Ticket:
    """One job's fate, shared by the awaiting coroutine and the thread that hands it over."""

    abandoned = False  # its caller gave up (deadline): never run it again
    submitted = False  # it reached a worker: a deadline past then means a stuck worker
    retried = False  # it was resubmitted once after another job's worker was killed

    def __init__(self) -> None:
        self.lock = threading.Lock()  # abandoned and submitted change together


ABANDONED_POLL_S = 0.25  # how often a hand thread waiting on a job checks its caller gave up


def _ready() -> bool:
    return True


def _result(future: Future[T], ticket: _Ticket, name: str) -> T:
    """The job's result; WorkerTimeout once its caller gave up (its place at the gate is freed).

    A thread cannot be killed: without this, a job stuck in the thread fallback (no worker
    processes) would hold the gate's one place, and every later job would wait behind it.
    """
    while True:
        try:
            return future.result(timeout=ABANDONED_POLL_S)
        except FutureTimeout:
            if ticket.abandoned:
                raise WorkerTimeout(name) from None


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
            16, thread_name_prefix="deskresearch-submit", initializer=block_interrupts
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
                    mp_context=WorkerContext(),
                    initializer=start_worker,
                    initargs=(os.getpid(), tuple(WARMUPS)),
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

        A thread of its own starts them, at a lower priority
        (``worker_processes.warming_thread_setup``).
        """
        threading.Thread(target=self._warm_in_background, daemon=True).start()

    def _warm_in_background(self) -> None:
        warming_thread_setup()
        self._warm()

    def _call(self, job: Callable[[], T], ticket: _Ticket, priority: int) -> T:
        with self._gate.passing(priority):
            return self._submit(job, ticket)

    def _submit(self, job: Callable[[], T], ticket: _Ticket) -> T:
        name = getattr(getattr(job, "func", job), "__name__", "job")
        while True:
            pool = self._executor()
            with ticket.lock:
                if ticket.abandoned:  # its caller gave up while it waited: run nothing
                    raise WorkerTimeout(name)
                future = pool.submit(job)
                ticket.submitted = True
            try:
                return _result(future, ticket, name)
            except BrokenProcessPool:
                with self._lock:
                    if self._pool is pool:
                        self._pool = None
                    killed = id(pool) in self._killed
            # A job that only shared a pool with one past its deadline runs again, once.
            if not killed or ticket.abandoned or ticket.retried:
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
            with ticket.lock:
                ticket.abandoned = True
                stuck = ticket.submitted
            if stuck:  # not on the hand threads: they may all be waiting at the gate
                await loop.run_in_executor(None, self._kill)
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
