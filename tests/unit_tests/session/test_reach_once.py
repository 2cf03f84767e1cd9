"""A batch's session reaches each set of servers once, however many of its topics start together."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from deskresearch.config.context import Context
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

    async def __call__(self, ctx: Context, settings: Any, *, entry: Entry, new: bool) -> list[str]:
        self.asked += 1
        await self.release.wait()
        if self.fails:
            raise ConnectionError("unreachable")
        return ["a notice"]


def plan(topic: str) -> Plan:
    return Plan(thread=topic, topic=topic, context=Context(), settings={})


async def until(condition: Any) -> None:
    while not condition():
        await asyncio.sleep(0)


async def test_topics_starting_together_reach_the_servers_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    check = HeldCheck()
    monkeypatch.setattr(session_run, "reach", check)
    session = Session(entry=Entry("deskresearch batch"), engine=object(), check_once=True)  # type: ignore[arg-type]
    first = asyncio.create_task(session._reach(plan("a")))
    await until(lambda: check.asked == 1)  # the first topic's check is under way
    second = asyncio.create_task(session._reach(plan("b")))
    await until(lambda: second.done() or check.asked == 2)
    assert check.asked == 1 and second.result() == (), "the second topic does not check again"
    check.release.set()
    assert await first == ("a notice",) and check.asked == 1


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
    assert await session._reach(plan("a")) == await session._reach(plan("b")) == ("a notice",)
    assert check.asked == 2
