"""A batch's session reaches each set of servers once, however many of its topics start together.

The topics that need the same servers wait for that one check and take the window it found.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from deskresearch.config.context import Context
from deskresearch.services.local_window import Window
from deskresearch.services.servers import Reached
from deskresearch.session import run as session_run
from deskresearch.session.plan import Entry, Plan
from deskresearch.session.run import Session

pytestmark = pytest.mark.anyio


class HeldCheck:
    """The network pre-flight, held open until released; counts who asked."""

    def __init__(self, fails: bool = False) -> None:
        self.asked = 0
        self.fails = fails
        self.release = asyncio.Event()

    async def __call__(self, ctx: Context, settings: Any, *, entry: Entry, new: bool) -> Reached:
        self.asked += 1
        await self.release.wait()
        if self.fails:
            raise ConnectionError("unreachable")
        return Reached(("a notice",), Window(8192, "its /api/ps"))


def plan(topic: str) -> Plan:
    return Plan(thread=topic, topic=topic, context=Context(), settings={})


async def until(condition: Any) -> None:
    while not condition():
        await asyncio.sleep(0)


async def test_topics_starting_together_reach_the_servers_once_and_share_its_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    check = HeldCheck()
    monkeypatch.setattr(session_run, "reach", check)
    session = Session(entry=Entry("deskresearch batch"), engine=object(), check_once=True)  # type: ignore[arg-type]
    first = asyncio.create_task(session._reach(plan("a")))
    await until(lambda: check.asked == 1)  # the first topic's check is under way
    second = asyncio.create_task(session._reach(plan("b")))
    for _ in range(20):  # loop turns enough to check again, or to answer without waiting
        await asyncio.sleep(0)
    assert check.asked == 1 and not second.done(), "the second topic waits for the first check"
    check.release.set()
    a, b = await first, await second
    assert check.asked == 1
    assert a.notices == ("a notice",) and b.notices == (), "the notices are said once"
    assert a.context.summary_context_window == b.context.summary_context_window == 8192
    assert b.settings["summary_context_window"].origin == "the summary model's server (its /api/ps)"


async def test_a_check_that_failed_is_made_again_by_the_next_topic(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    check = HeldCheck(fails=True)
    check.release.set()
    monkeypatch.setattr(session_run, "reach", check)
    session = Session(entry=Entry("deskresearch batch"), engine=object(), check_once=True)  # type: ignore[arg-type]
    with pytest.raises(ConnectionError):
        await session._reach(plan("a"))
    with pytest.raises(ConnectionError):
        await session._reach(plan("b"))
    assert check.asked == 2


async def test_without_check_once_every_run_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    check = HeldCheck()
    check.release.set()
    monkeypatch.setattr(session_run, "reach", check)
    session = Session(entry=Entry(), engine=object())  # type: ignore[arg-type]
    a, b = await session._reach(plan("a")), await session._reach(plan("b"))
    assert a.notices == b.notices == ("a notice",) and check.asked == 2
