"""The run session as a web UI uses it ([3/5]): a form's settings, events, cancel, resume, list, delete.

In this process, against the loopback web: what the page needs from ``deskresearch.session``
before the page exists. A form's values come in with their origin ("the page"); every bad field
is named before anything is spent; a run streams its events, stops when its task is cancelled
(with every finished step saved), continues by thread id, shows in the store's list with its
files, and goes away whole when deleted.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from deskresearch.session.plan import Entry
from deskresearch.session.reports import ReportFiles
from deskresearch.session.run import Session
from deskresearch.session.settings import Given, Sources, gather, problems
from tests.support.loopback import FakeWeb, Latency, serve
from tests.support.runs import loopback_env, services_for

pytestmark = pytest.mark.anyio
PAGE = Entry("the page", reviewer=True)


def page_sources(form: dict[str, Any]) -> Sources:
    """The page's form over the deployment's environment (the loopback web's)."""
    return Sources(caller=form, caller_name="the page", environ=os.environ)


def test_every_bad_field_of_a_form_is_named_with_its_origin_before_anything_is_spent(
    tmp_path: Path,
) -> None:
    found = problems(gather(page_sources({"url_per_query": 99, "max_rounds": "many"})), topic="  ")
    by_field = {p.name: p for p in found}
    assert set(by_field) == {"url_per_query", "max_rounds", "topic"}
    assert by_field["url_per_query"].origin == "the page's url_per_query"
    assert "less than or equal to 20" in by_field["url_per_query"].message
    assert "topic is empty" in by_field["topic"].message
    assert not list(tmp_path.iterdir())  # nothing made, nothing sent


async def test_a_run_from_the_page_is_cancelled_resumed_listed_and_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve(FakeWeb(latency=Latency(call_s=0.05))) as web:
        for name, value in loopback_env(web).items():
            monkeypatch.setenv(name, value)
        sources = page_sources({"url_per_query": 2, "max_rounds": 1})
        settings = gather(sources)
        assert settings["url_per_query"].kind == "caller" and not problems(settings)
        out = Given(str(tmp_path / "reports"), "the page's folder", "choose another", "caller")
        session = Session(entry=PAGE, store=Given(str(tmp_path / "runs.sqlite"), "the page", ""),
                          files=ReportFiles(out, "md+html"), services=services_for(web))  # fmt: skip
        async with session:
            plan = await session.start("EV battery recycling", settings)
            events: list[dict[str, Any]] = []
            task = asyncio.create_task(session.run(plan, on_event=events.append))
            while not any(e.get("stage") == "read_page" for e in events):  # a state, not a time
                await asyncio.sleep(0.01)
            web.hold()  # the run cannot finish before the cancel lands
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            web.release()
            assert events[0] == {"stage": "research", "event": "started", "thread_id": plan.thread}
            [row] = await session.runs()
            assert (row.thread_id, row.status, row.files) == (plan.thread, "unfinished", [])

            again = await session.resume(plan.thread, sources)
            assert again.resumed and again.context.url_per_query == 2  # the saved run's
            outcome = await session.run(again)
            assert (outcome.run, outcome.values["status"]) == ("resumed", "ok")
            assert [f.suffix for f in outcome.files] == [".md", ".html", ".json"]
            [row] = await session.runs()
            assert row.status == "ok" and row.files == [str(f) for f in outcome.files]

            gone = await session.delete(plan.thread)
            assert sorted(gone) == sorted(str(f) for f in outcome.files)
            assert not any(f.exists() for f in outcome.files) and await session.runs() == []


async def test_the_pre_flight_s_notice_is_the_run_s_first_event_after_its_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tavily's own API (the loopback as its proxy) shows 3 credits left for 6 searches."""
    with serve(FakeWeb(key_credits={"tvly-low": (997, 1000)})) as web:
        env = loopback_env(web, TAVILY_API_KEY="tvly-low", TAVILY_HTTP_PROXY=web.base,
                           DESKRESEARCH_TAVILY_BASE_URL="http://api.tavily.com")  # fmt: skip
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        settings = gather(page_sources({"max_rounds": 1}))
        llm = services_for(web)["llm"]  # the searches: the real chain, through that proxy
        session = Session(entry=PAGE, store=Given(str(tmp_path / "runs.sqlite"), "the page", ""),
                          services={"llm": llm})  # fmt: skip
        async with session:
            plan = await session.start("EV battery recycling", settings)
            events: list[dict[str, Any]] = []
            outcome = await session.run(plan, on_event=events.append)
    notice = (
        "the search engine tavily at http://api.tavily.com has 3 credits left (this key: 997 of "
        "1,000 used); this run makes up to 6 searches, and those past its credits fail (the run "
        "goes on with what the others found). Add credits at app.tavily.com, or name another "
        "engine with --search"
    )
    assert plan.notices == (notice,)
    assert events[1] == {"stage": "preflight", "event": "notice", "message": notice}
    assert outcome.values["status"] == "ok" and web.usage_keys == ["tvly-low"]
