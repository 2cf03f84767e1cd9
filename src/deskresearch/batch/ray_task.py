"""The Ray task: one topic on whichever node Ray picks, resumed from PostgreSQL after a retry.

Ray imports this module by name in its worker processes (deskresearch must be installed on
every node), so no worker ever runs the driver's ``__main__``. A task retried after its node or
worker died opens the same thread: the checkpointer holds every step and every branch that
finished, so only what was in flight on the lost node runs again.
"""

from __future__ import annotations

import asyncio
import resource
import time
from typing import Any

from deskresearch.batch.cluster_limits import ClusterLimiter
from deskresearch.batch.ledger import Ledger
from deskresearch.batch.runner import Job, one_line, run_job
from deskresearch.graph import build_graph
from deskresearch.services.storage.checkpoints import open_checkpointer


def run_topic(job: Job, location: str, coordinator: Any, max_concurrency: int) -> dict[str, Any]:
    """Run (or resume) ``job``; return its final state, or the error that ended it.

    Errors of the run itself are returned, not raised: Ray retries only lost workers and nodes.
    Progress and accounting events (each model call sent and answered) go to the driver through
    the Coordinator as they happen, so an attempt lost with its node is still counted.
    """
    return asyncio.run(_run(job, location, coordinator, max_concurrency))


async def _run(job: Job, location: str, coordinator: Any, max_concurrency: int) -> dict[str, Any]:
    import ray

    node = ray.get_runtime_context().get_node_id()
    thread = job.topic.thread_id
    start = time.perf_counter()

    mine = Ledger()  # this attempt's calls, returned with the result (events may lag it)

    def report(event: dict[str, Any]) -> None:
        mine.record(thread, event)
        coordinator.report.remote(thread, event)

    def started(resumed: bool) -> None:
        report({"stage": "batch", "event": "started", "node": node, "resumed": resumed})

    out: dict[str, Any] = {"node": node}
    try:
        async with open_checkpointer(location) as saver:
            limiter = ClusterLimiter(coordinator, node)
            graph = build_graph(
                checkpointer=saver, limiter=limiter, max_concurrency=max_concurrency
            )
            done = await run_job(graph, job, report, started)
        out |= {"values": done.values, "run": done.run}
    except Exception as exc:  # noqa: BLE001 - the driver records it as this topic's failure
        out["error"] = one_line(exc)
    out["attempts"] = mine.export(thread)
    out["wall_s"] = time.perf_counter() - start
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out
