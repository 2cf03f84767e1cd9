"""``--ray ADDRESS``: each topic a Ray task, checkpoints in PostgreSQL, limits cluster-wide.

The driver (this process) reads the batch, skips topics the checkpoints say are finished,
submits the rest as tasks (spread over the nodes, each reserving ``--ray-cpus``), shows their
progress, and writes each report here as its result arrives. Ray re-runs a task whose worker
or node died (``--ray-retries``); the new attempt resumes the topic's thread from PostgreSQL.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from deskresearch.batch.board import Board
from deskresearch.batch.coordinator import Coordinator
from deskresearch.batch.ledger import Ledger
from deskresearch.batch.ray_task import run_topic
from deskresearch.batch.runner import Job, one_line, start
from deskresearch.batch.summary import BatchSummary, Row, failed_row, row_for
from deskresearch.errors import ConfigError, DeskResearchError, RunFailed
from deskresearch.services.servers import check_ray_address
from deskresearch.services.storage.checkpoints import POSTGRES_SCHEMES
from deskresearch.session.plan import Plan
from deskresearch.session.run import STAGE, Session
from deskresearch.session.settings import Given
from deskresearch.text.plural import plural

ENDPOINTS = ("OPENAI_BASE_URL", "SEARXNG_URL")  # not secret: sent to the nodes
KEYS = ("OPENAI_API_KEY", "TAVILY_API_KEY")  # secret: sent only with --forward-keys
POLL_S = 0.5
# Ray collects usage statistics unless told not to (this variable wins over ~/.ray/config.json).
USAGE_STATS = "RAY_USAGE_STATS_ENABLED"


@dataclass(frozen=True)
class RayOptions:
    """How the batch uses the cluster."""

    address: str
    concurrency: int | None  # topics submitted at once (None: all; Ray queues by CPUs)
    cpus: float
    retries: int
    forward_keys: bool
    max_concurrency: int


def node_env(forward_keys: bool) -> dict[str, str]:
    """The variables the tasks get: endpoints, keys if asked, extraction in-process by default.

    One topic per worker process: extraction runs in one thread of it (DESKRESEARCH_WORKERS=0)
    unless the driver's environment says otherwise, so a node holds no idle extraction pools.
    """
    names = ENDPOINTS + (KEYS if forward_keys else ())
    env = {n: os.environ[n] for n in names if os.environ.get(n)}
    env["DESKRESEARCH_WORKERS"] = os.environ.get("DESKRESEARCH_WORKERS", "0")
    env[USAGE_STATS] = os.environ.get(USAGE_STATS, "0")
    return env


def import_ray() -> Any:
    """Import Ray with its usage statistics off, unless the user's environment turns them on.

    Nothing leaves the machine that the user did not ask for. Ray reads the setting from the
    environment whenever it checks, so it is set here, before anything of Ray runs in this
    process; the tasks get it through their runtime environment (``node_env``).

    Raises:
        ConfigError: Ray is not installed.
    """
    os.environ.setdefault(USAGE_STATS, "0")
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "--ray needs Ray: pip install '.[ray]' in deskresearch's folder"
        ) from None
    return ray


def check_location(store: Given) -> None:
    """Refuse checkpoints that not every node can reach.

    Raises:
        ConfigError: the store is not a PostgreSQL URL (named with where it came from).
    """
    if not str(store.value).startswith(POSTGRES_SCHEMES):
        raise ConfigError(
            f"--ray needs checkpoints every node reaches, not {store.value!r} (from "
            f"{store.origin}): give --checkpoints postgresql://user:password@host/db (a topic "
            "retried on another node resumes from there; a SQLite file or memory lives on one "
            "machine)"
        )


async def _skip_finished(
    session: Session, jobs: list[Job], board: Board, summary: BatchSummary
) -> list[tuple[Job, Plan]]:
    """Record the topics whose threads have finished; return the others, admitted."""
    left = []
    async with session:
        for job in jobs:
            plan = await start(session, job)
            if not plan.finished:
                left.append((job, plan))
                continue
            try:
                done = await session.run(plan, stem=job.topic.name)
            except ConfigError as exc:  # its files cannot be written: the batch goes on
                _done(failed_row(job.topic, one_line(exc), wall_s=0.0), board, summary)
                continue
            _done(row_for(job.topic, done.values, run="earlier", wall_s=0.0, files=done.files),
                  board, summary)  # fmt: skip
    return left


def _done(row: Row, board: Board, summary: BatchSummary) -> None:
    summary.update(row)
    board.finished(row)


def run_ray(
    session: Session, jobs: list[Job], opts: RayOptions, *, board: Board, summary: BatchSummary
) -> None:
    """Run the batch on the Ray cluster at ``opts.address``; the driver writes every report.

    Raises:
        ConfigError: checkpoints are not PostgreSQL, Ray is not installed, or no cluster answers.
    """
    assert session.store is not None  # a Ray batch's session is on its shared store
    check_location(session.store)
    check_ray_address(opts.address)  # ray.init would retry for minutes where nothing listens
    ray = import_ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    left = asyncio.run(_skip_finished(session, jobs, board, summary))
    if not left:
        return
    try:
        ray.init(address=opts.address, runtime_env={"env_vars": node_env(opts.forward_keys)},
                 logging_level=logging.WARNING, log_to_driver=False)  # fmt: skip
    except ConnectionError as exc:
        raise ConfigError(
            f"no Ray cluster at {opts.address!r} ({exc}): start one with `ray start --head`, "
            "or give its address (host:6379)"
        ) from None
    try:
        here = ray.get_runtime_context().get_node_id()
        coordinator = (
            ray.remote(Coordinator)
            .options(num_cpus=0, max_restarts=-1, max_task_retries=-1,
                     scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False))
            .remote()
        )  # fmt: skip
        task = ray.remote(run_topic).options(
            num_cpus=opts.cpus, max_retries=opts.retries, retry_exceptions=False,
            scheduling_strategy="SPREAD",
        )  # fmt: skip
        _drive(ray, task, coordinator, left, opts, session, board, summary)
    finally:
        ray.shutdown()


def _drive(
    ray: Any,
    task: Any,
    coordinator: Any,
    jobs: list[tuple[Job, Plan]],
    opts: RayOptions,
    session: Session,
    board: Board,
    summary: BatchSummary,
) -> None:
    """Submit (bounded by --concurrency), follow progress, collect results as they come."""
    by_thread = {j.topic.thread_id: j for j, _ in jobs}
    first_start: dict[str, float] = {}
    ledger = Ledger()  # every attempt's calls, a lost one's included
    queue, in_flight = deque(jobs), dict[Any, tuple[Job, Plan]]()
    limit = opts.concurrency or len(jobs)
    while queue or in_flight:
        while queue and len(in_flight) < limit:
            job, plan = queue.popleft()
            in_flight[task.remote(job, coordinator, opts.max_concurrency)] = (job, plan)
        ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=POLL_S)
        for thread, event in ray.get(coordinator.drain.remote()):
            job = by_thread[thread]
            if event.get("stage") == STAGE and event.get("event") == "started":
                first_start.setdefault(thread, time.time())
                board.started(job.topic, node=event["node"], resumed=bool(event.get("resumed")))
            elif not ledger.record(thread, event):
                board.event(job.topic, event)
        for ref in ready:
            job, plan = in_flight.pop(ref)
            wall = time.time() - first_start.get(job.topic.thread_id, time.time())
            _done(_result(ray, ref, job, plan, wall, ledger, session), board, summary)


def _result(
    ray: Any, ref: Any, job: Job, plan: Plan, wall: float, ledger: Ledger, session: Session
) -> Row:
    t = job.topic
    try:
        out = ray.get(ref)
    except ray.exceptions.RayTaskError as exc:  # the task's own code raised, outside the run
        return failed_row(t, f"its Ray task failed: {one_line(exc.cause)}", wall_s=wall,
                          usage=ledger.usage(t.thread_id, []))  # fmt: skip
    except ray.exceptions.RayError as exc:  # its worker or node died, every retry too
        tries = plural(ledger.attempts(t.thread_id), "attempt")
        return failed_row(t, f"its Ray task was lost ({tries} began; {type(exc).__name__}): "
                          "run the batch again to resume it", wall_s=wall,
                          usage=ledger.usage(t.thread_id, []))  # fmt: skip
    ledger.settle(t.thread_id, out.get("attempts") or {})
    try:
        if "error" in out:
            raise RunFailed(out["error"])
        values = {**out["values"], "topic": t.topic}
        files = session.save(values, plan, earlier=out["run"] == "earlier", stem=t.name).paths
    except DeskResearchError as exc:  # the run failed, or its files cannot be written
        row = failed_row(t, one_line(exc), wall_s=wall, usage=ledger.usage(t.thread_id, []))
    else:
        usage = ledger.usage(t.thread_id, out["values"].get("usage") or [])
        row = row_for(t, out["values"], run=out["run"], wall_s=wall, files=files, usage=usage)
    row.node, row.rss_mb = out["node"], round(out["rss_mb"], 1)
    return row
