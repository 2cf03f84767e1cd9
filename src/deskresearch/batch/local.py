"""A batch in this process: topics run concurrently in one session, sharing its limits and cache.

One session (one compiled graph) serves every topic, so its Limiter bounds model calls per
endpoint and fetches in total and per host across all topics at once (a provider sees one
client), and its cache store serves every topic (a page read for one topic is not fetched again
for the next). The same function runs a batch on a LangGraph server: the session's engine is
then the server's graph.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from deskresearch.batch.board import Board
from deskresearch.batch.ledger import Ledger
from deskresearch.batch.runner import Job, one_line, run_job
from deskresearch.batch.summary import BatchSummary, Row, failed_row, row_for
from deskresearch.session.run import STAGE, Session


async def run_all(
    session: Session, jobs: list[Job], *, concurrency: int, board: Board, summary: BatchSummary,
    node: str = "",
) -> None:  # fmt: skip
    """Run every job, at most ``concurrency`` at once; each outcome lands in ``summary``."""
    gate = asyncio.Semaphore(concurrency)
    ledger = Ledger()

    async def one(job: Job) -> None:
        async with gate:
            row = await run_topic(session, job, board, ledger)
        row.node = node
        summary.update(row)
        board.finished(row)

    async with session:
        await asyncio.gather(*(one(job) for job in jobs))


async def run_topic(session: Session, job: Job, board: Board, ledger: Ledger) -> Row:
    """Run one topic and write its report; a failure becomes a failed row, never an exception."""
    topic = job.topic
    start = time.perf_counter()

    def on_event(event: dict[str, Any]) -> None:
        if event.get("stage") == STAGE:
            board.started(topic, resumed=bool(event.get("resumed")))
        elif not ledger.record(topic.thread_id, event):
            board.event(topic, event)

    try:
        done = await run_job(session, job, on_event)
    except Exception as exc:  # noqa: BLE001 - one topic's failure never stops the others
        return failed_row(topic, one_line(exc), wall_s=time.perf_counter() - start,
                          usage=ledger.usage(topic.thread_id, []))  # fmt: skip
    wall = time.perf_counter() - start if done.run != "earlier" else 0.0
    usage = ledger.usage(topic.thread_id, done.values.get("usage") or [])
    return row_for(topic, done.values, run=done.run, wall_s=wall, files=done.files, usage=usage)
