"""The desk's page driven in a browser, and the states its tests wait for.

``opened`` is a new tab on a running ``deskresearch ui``, ready; ``ask`` asks a question in it.
``until`` and ``page_read_since`` wait for a state of the loopback web, never for a time;
``threads`` and ``model_calls`` read what a run saved and spent, to show that nothing was.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import BrowserContext, Page

from tests.support.browser import Watched
from tests.support.desk import Desk
from tests.support.loopback import FakeWeb

TOPIC = "EV battery recycling"
RUN_S = 120_000  # ms: the longest a run may take on a loaded machine (a bound, not a wait)


def until(condition: Callable[[], bool], what: str, bound_s: float = 60.0) -> None:
    """Return once ``condition`` holds (a state of the loopback web); fail after ``bound_s``."""
    deadline = time.monotonic() + bound_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.01)


def threads(store: Path) -> set[str]:
    """The runs saved in the store (read from the SQLite file itself)."""
    if not store.exists():
        return set()
    with sqlite3.connect(store) as db:
        return {row[0] for row in db.execute("SELECT DISTINCT thread_id FROM checkpoints")}


def model_calls(web: FakeWeb) -> int:
    return sum(1 for call in web.log if call.kind == "model")


SUMMARIES = {"PageFacts", "ChunkSummary"}  # the model calls that come after a page was read


def page_read_since(web: FakeWeb, seen: int) -> Callable[[], bool]:
    """A page of the research was read and handed to the model.

    Its read is over, not only its fetch: pages are fetched ahead while their query is ranked.
    """
    return lambda: any(c.kind == "model" and c.key in SUMMARIES for c in web.log[seen:])


def opened(context: BrowserContext, desk: Desk, where: str = "") -> Watched:
    """A new tab on the desk, ready (its form and its list loaded)."""
    watched = Watched(context.new_page())
    watched.page.goto(f"{desk.base}/{where}")
    watched.page.wait_for_selector("body[data-ready=true]")
    return watched


def ask(page: Page, question: str) -> str:
    """Type the question, press Enter; the thread id of the research it started."""
    page.fill("#topic", question)
    page.press("#topic", "Enter")
    page.wait_for_url("**/#run/*")
    return page.url.split("#run/")[1]
