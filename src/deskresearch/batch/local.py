"""A batch in this process: topics run concurrently on one graph, sharing its limits and cache.

One compiled graph serves every topic, so its Limiter bounds model calls per endpoint and fetches
in total and per host across all topics at once (a provider sees one client), and its cache
store serves every topic (a page read for one topic is not fetched again for the next).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from deskresearch.batch.board import Board
from deskresearch.batch.ledger import Ledger
from deskresearch.batch.outputs import Outputs
from deskresearch.batch.runner import Job, one_line, run_job
from deskresearch.batch.summary import BatchSummary, Row, failed_row, row_for
from deskresearch.graph import build_graph
from deskresearch.services.storage.checkpoints import open_checkpointer


async def run_local(
    jobs: list[Job],
    *,
    location: str,
    concurrency: int,
    max_concurrency: int,
    outputs: Outputs,
    board: Board,
    summary: BatchSummary,
) -> None:
    """Run every job, at most ``concurrency`` at once; each outcome lands in ``summary``."""
    async with open_checkpointer(location) as saver:
        graph = build_graph(checkpointer=saver, max_concurrency=max_concurrency)
        gate = asyncio.Semaphore(concurrency)
        ledger = Ledger()

        async def one(job: Job) -> None:
            async with gate:
                row = await run_topic(graph, job, outputs, board, ledger)
            summary.update(row)
            board.finished(row)

        await asyncio.gather(*(one(job) for job in jobs))


async def run_topic(graph: object, job: Job, outputs: Outputs, board: Board, ledger: Ledger) -> Row:
    """Run one topic and write its report; a failure becomes a failed row, never an exception."""
    topic = job.topic
    start = time.perf_counter()

    def on_event(event: dict[str, Any]) -> None:
        if not ledger.record(topic.thread_id, event):
            board.event(topic, event)

    try:
        done = await run_job(
            graph, job, on_event, lambda resumed: board.started(topic, resumed=resumed)
        )
        wall = time.perf_counter() - start if done.run != "earlier" else 0.0
        files = outputs.save(job, done.values, run=done.run, wall_s=wall)
    except Exception as exc:  # noqa: BLE001 - one topic's failure never stops the others
        return failed_row(topic, one_line(exc), wall_s=time.perf_counter() - start,
                          usage=ledger.usage(topic.thread_id, []))  # fmt: skip
    usage = ledger.usage(topic.thread_id, done.values.get("usage") or [])
    return row_for(topic, done.values, run=done.run, wall_s=wall, files=files, usage=usage)
