"""The Ray task: one topic on whichever node Ray picks, resumed from PostgreSQL after a retry.

Ray imports this module by name in its worker processes (deskresearch must be installed on
every node), so no worker ever runs the driver's ``__main__``. A task retried after its node or
worker died opens the same thread: the checkpointer holds every step and every branch that
finished, so only what was in flight on the lost node runs again. The node admits the run as
every entry point does (its own keys and endpoints are checked there, before anything is saved).
"""

from __future__ import annotations

import asyncio
import resource
import time
from typing import Any

from deskresearch.batch.cluster_limits import ClusterLimiter
from deskresearch.batch.ledger import Ledger
from deskresearch.batch.runner import Job, one_line, run_job
from deskresearch.session.plan import Entry
from deskresearch.session.run import STAGE, Session

NODE = Entry("deskresearch batch (a Ray node)")


def run_topic(job: Job, coordinator: Any, max_concurrency: int) -> dict[str, Any]:
    """Run (or resume) ``job``; return its final state, or the error that ended it.

    Errors of the run itself are returned, not raised: Ray retries only lost workers and nodes.
    Progress and accounting events (each model call sent and answered) go to the driver through
    the Coordinator as they happen, so an attempt lost with its node is still counted.
    """
    return asyncio.run(_run(job, coordinator, max_concurrency))


async def _run(job: Job, coordinator: Any, max_concurrency: int) -> dict[str, Any]:
    import ray

    node = ray.get_runtime_context().get_node_id()
    thread = job.topic.thread_id
    start = time.perf_counter()
    mine = Ledger()  # this attempt's calls, returned with the result (events may lag it)

    def report(event: dict[str, Any]) -> None:
        if event.get("stage") == STAGE:  # the run starts here: say on which node
            event = {**event, "node": node}
        mine.record(thread, event)
        coordinator.report.remote(thread, event)

    out: dict[str, Any] = {"node": node}
    machine = str(ray.util.get_node_ip_address())  # type: ignore[no-untyped-call]
    limiter = ClusterLimiter(coordinator, node, machine=machine)
    session = Session(entry=NODE, store=job.settings["checkpoints"], max_concurrency=max_concurrency,
                      services={"limiter": limiter})  # fmt: skip
    try:
        async with session:
            done = await run_job(session, job, report)
        out |= {"values": done.values, "run": done.run}
    except Exception as exc:  # noqa: BLE001 - the driver records it as this topic's failure
        out["error"] = one_line(exc)
    out["attempts"] = mine.export(thread)
    out["wall_s"] = time.perf_counter() - start
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out
