"""A topic's attempt dies mid-run and a retry resumes it: the batch counts every call the model
server saw, where the checkpointed state alone counts fewer.

The batch's own code runs a topic (``runner.run_job``) on the real graph against the loopback
web, as a Ray task does; the first attempt dies as a killed node does: from that instant it sends
nothing, neither a call nor an event, and its in-flight calls never come back. The retry then
resumes the same thread from the checkpoints. (tests/ray_tests does the same with a real node.)
"""

from __future__ import annotations

import asyncio
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

import pytest

from deskresearch.batch.ledger import Ledger
from deskresearch.batch.runner import build_job, run_job
from deskresearch.batch.summary import row_for
from deskresearch.batch.topics import Topic
from deskresearch.session.plan import Entry
from deskresearch.session.run import Session
from deskresearch.session.settings import Sources
from tests.support.loopback import Call, FakeWeb, Latency, serve
from tests.support.runs import LOOPBACK, services_for

pytestmark = pytest.mark.anyio
TID = "t-accounting"


@dataclass
class CountingWeb(FakeWeb):
    """The loopback web, also counting model calls as they arrive (the log has them at the end)."""

    arrived: int = 0

    def record(self, call: Call) -> None:
        if call.kind == "model":
            with self._lock:
                self.arrived += 1
        super().record(call)


class Process:
    """One attempt's side of the wire: events to the ledger until it dies, then nothing."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger, self.dead, self.sent, self.chunks = ledger, False, 0, 0

    def on_event(self, event: dict[str, Any]) -> None:
        if self.dead:  # a dead process makes no call and tells nobody anything
            raise asyncio.CancelledError
        self.ledger.record(TID, event)
        self.sent += event.get("event") == "sent"
        self.chunks += event.get("event") == "answered" and event["call_stage"] == "summarise_chunk"


async def test_a_lost_attempts_calls_are_counted_with_its_retrys() -> None:
    web = CountingWeb(latency=Latency(call_s=0.3))
    with serve(web):
        flags = {"allow_hosts": LOOPBACK, "search": "tavily", "tavily_base_url": web.base,
                 "retry_backoff_s": 0.05, "cache": False, "checkpoints": "memory"}  # fmt: skip
        entry = Entry("batch", providers=False)  # the services are the test's own
        job = build_job(Topic(1, "EV battery recycling", {}, TID, "ev"),
                        Sources(flags=flags, environ={}), entry)  # fmt: skip
        session = Session(
            entry=entry, store=job.settings["checkpoints"], services=services_for(web)
        )
        ledger = Ledger()
        first = Process(ledger)
        attempt = asyncio.create_task(run_job(session, job, first.on_event))
        # Kill it once some chunks were summarised and calls are in flight, at an instant when
        # every call it sent has reached the server (none is half-way: the count is exact).
        for _ in range(3000):
            await asyncio.sleep(0.005)
            in_flight = first.sent - len([c for c in web.log if c.kind == "model"])
            if first.chunks >= 2 and in_flight > 0 and web.arrived == first.sent:
                break
        else:
            pytest.fail("the run never reached a point to kill it")
        first.dead = True
        attempt.cancel()
        with suppress(asyncio.CancelledError):
            await attempt
        await asyncio.sleep(0.6)  # what was in flight ends server-side, unheard
        second = Process(ledger)
        done = await run_job(session, job, second.on_event)
    assert done.run == "resumed" and done.values["status"] == "ok"
    seen = len([c for c in web.log if c.kind == "model"])
    state = done.values["usage"]
    usage = ledger.usage(TID, state)
    # The state counts each saved step once; the calls redone after the loss are missing there.
    assert sum(u["calls"] for u in state) < seen
    assert sum(u["calls"] for u in usage) == seen
    assert ledger.attempts(TID) == 2
    row = row_for(job.topic, done.values, run=done.run, wall_s=1.0, files=[], usage=usage)
    assert row.model_calls == seen and row.cost_usd is not None and row.cost_usd > 0
