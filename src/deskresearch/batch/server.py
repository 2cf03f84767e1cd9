"""``--server URL``: the batch submitted to a LangGraph API server through langgraph-sdk.

Each topic gets its own thread on the server, created with the topic's stable thread id, so
running the batch again finds it: a finished thread is not run again, a run still going on the
server (this process died, the server did not) is joined, and a thread whose run failed is
continued from its last checkpoint. Runs are started with ``on_disconnect="continue"``: a
batch killed half-way leaves the server's runs going. The server runs the topics with its own
keys and environment; only the settings given by a flag or the batch line are sent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx

from deskresearch.batch.board import Board
from deskresearch.batch.outputs import Outputs
from deskresearch.batch.runner import Job, one_line
from deskresearch.batch.summary import BatchSummary, Row, failed_row, row_for
from deskresearch.errors import ConfigError
from deskresearch.report.outcome import check, finished

ACTIVE = ("pending", "running")


async def run_server(
    jobs: list[Job],
    *,
    url: str,
    assistant: str,
    concurrency: int,
    outputs: Outputs,
    board: Board,
    summary: BatchSummary,
) -> None:
    """Run every job on the server at ``url``, at most ``concurrency`` at once.

    Raises:
        ConfigError: langgraph-sdk is missing, or no server answers at ``url``.
    """
    try:
        from langgraph_sdk import get_client
    except ImportError:
        raise ConfigError("--server needs langgraph-sdk: pip install langgraph-sdk") from None
    async with get_client(url=url) as client:
        try:
            await client.assistants.search(limit=1)
        except httpx.HTTPError as exc:
            raise ConfigError(
                f"no LangGraph server answers at {url} ({type(exc).__name__}): start one "
                "(langgraph dev) or check the URL"
            ) from None
        gate = asyncio.Semaphore(concurrency)

        async def one(job: Job) -> None:
            async with gate:
                row = await _topic(client, job, assistant, outputs, board)
            row.node = url
            summary.update(row)
            board.finished(row)

        await asyncio.gather(*(one(job) for job in jobs))


async def _topic(client: Any, job: Job, assistant: str, outputs: Outputs, board: Board) -> Row:
    t = job.topic
    start = time.perf_counter()
    try:
        values, run = await _run(client, job, assistant, board)
        wall = time.perf_counter() - start if run != "earlier" else 0.0
        files = outputs.save(job, values, run=run, wall_s=wall)
    except Exception as exc:  # noqa: BLE001 - one topic's failure never stops the others
        return failed_row(t, one_line(exc), wall_s=time.perf_counter() - start)
    return row_for(t, values, run=run, wall_s=wall, files=files)


async def _run(client: Any, job: Job, assistant: str, board: Board) -> tuple[dict[str, Any], str]:
    """Reuse, join, resume or start the topic's run; return its final values and how."""
    t, tid = job.topic, job.topic.thread_id
    meta = {"deskresearch_batch_line": t.line, "topic": t.topic}
    await client.threads.create(thread_id=tid, if_exists="do_nothing", metadata=meta)
    state = await client.threads.get_state(tid)
    values = state.get("values") or {}
    if isinstance(values, dict) and finished(values):
        return dict(values), "earlier"
    active = [r for r in await client.runs.list(tid, limit=5) if r["status"] in ACTIVE]
    resumed = bool(active or values)
    board.started(t, resumed=resumed)
    if active:
        parts = client.runs.join_stream(tid, active[0]["run_id"])
    else:
        parts = client.runs.stream(
            tid, assistant, input=None if resumed else {"topic": t.topic}, context=job.explicit,
            stream_mode=["custom"], stream_subgraphs=True, on_disconnect="continue",
            multitask_strategy="reject",
        )  # fmt: skip
    await _follow(parts, job, board)
    state = await client.threads.get_state(tid)
    values = state.get("values") or {}
    if not isinstance(values, dict):
        raise RuntimeError("the server's run ended without a result")
    if not finished(values) and state.get("next"):
        raise ConfigError("the run paused for a review, which a batch cannot give")
    check(values)  # a finished run, never "ok" with nothing
    return dict(values), "resumed" if resumed else "new"


async def _follow(parts: AsyncIterator[Any], job: Job, board: Board) -> None:
    """Pass progress events to the board; raise the run's error."""
    async for part in parts:
        kind = part.event.split("|")[0]
        if kind == "custom" and isinstance(part.data, dict):
            board.event(job.topic, part.data)
        elif kind == "error":
            data = part.data if isinstance(part.data, dict) else {"message": str(part.data)}
            raise RuntimeError(f"{data.get('error', 'error')}: {data.get('message', '')}")
