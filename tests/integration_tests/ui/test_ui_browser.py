"""``deskresearch ui`` in a real headless browser (Debian's chromium), against the loopback web.

One ``deskresearch ui`` process (started as a user starts it, stopped with Ctrl-C) and one
browser serve the whole module: a question asked and watched while the web is held mid-run,
its report read with its evidence and its downloads, compared with the command line's for the
same question, every request the page makes kept on its own server, and the list reopened.
The other browser tests of the page sit next to this module: ``test_ui_resume`` (cancel, resume,
delete), ``test_ui_fields`` (bad input, checks answered out of order), ``test_ui_security``
(requests from elsewhere), ``test_ui_review`` and ``test_ui_key``.
Every wait is for a state (a selector, a request in the web's log), never for a time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from tests.support import browser
from tests.support.browser import Watched
from tests.support.desk import Desk
from tests.support.desk_page import RUN_S, TOPIC, ask, opened, page_read_since, until
from tests.support.loopback import FakeWeb
from tests.support.runs import loopback_env

pytestmark = [pytest.mark.skipif(not browser.available(), reason=browser.MISSING),
              pytest.mark.xdist_group("browser")]  # fmt: skip

ROOT = Path(__file__).parents[3]


def link(page: Page, selector: str) -> str:
    """Where a link of the page leads, as an absolute URL."""
    return str(page.eval_on_selector(selector, "a => a.href"))


def panel_shows(page: Page, line: str) -> None:
    """Wait until the progress panel has ``line`` (a state of the page)."""
    page.wait_for_function("line => document.querySelector('#panel').innerText.includes(line)",
                           arg=line)  # fmt: skip


@dataclass
class Asked:
    """A research asked in the page: what the page showed while the web was held, and after."""

    watched: Watched
    thread: str
    held_state: str
    held_panel: str


@pytest.fixture(scope="module")
def asked(context: BrowserContext, desk: Desk, web: FakeWeb) -> Asked:
    watched = opened(context, desk)
    page, seen = watched.page, len(web.log)
    thread = ask(page, TOPIC)
    until(page_read_since(web, seen), "a page of the research was read")
    web.hold()  # the run cannot end: whatever the page shows now came while it ran
    try:
        page.wait_for_selector("#panel tr.running")
        panel_shows(page, "pages read")
        held = (str(page.get_attribute("#run-status", "data-state")), page.inner_text("#panel"))
    finally:
        web.release()
    page.wait_for_selector("#run-status[data-state=done]", timeout=RUN_S)
    page.frame_locator("#report").locator("#report").wait_for()
    return Asked(watched, thread, *held)


def test_asking_streams_the_panel_then_shows_the_report_with_its_evidence(
    asked: Asked, desk: Desk
) -> None:
    page = asked.watched.page
    assert asked.held_state == "running"
    assert "searches" in asked.held_panel and "pages read" in asked.held_panel  # the CLI's lines
    assert page.inner_text("#run-status").startswith("Report ready")
    assert "tokens" in page.inner_text("#totals") and "$" in page.inner_text("#totals")
    report = page.frame_locator("#report")
    report.locator("#claim-0").click(position={"x": 4, "y": 6})
    assert report.locator("#ev-0").is_visible()
    assert "SUPPORTED" in report.locator("#ev-0").inner_text().upper()
    sources = report.locator("#references a[href^='http']")
    assert sources.count() > 0 and sources.first.get_attribute("target") == "_blank"
    assert "How this report was made" in report.locator("#provenance").inner_text()
    row = page.locator(f'#runs a[data-thread="{asked.thread}"]')
    assert row.get_attribute("data-status") == "ok" and "≈ $" in row.inner_text()


def test_downloads_are_the_run_s_own_files(asked: Asked, desk: Desk) -> None:
    page = asked.watched.page
    for fmt in ("md", "html", "json"):
        response = page.request.get(link(page, f"#dl-{fmt}"))
        assert response.ok and "attachment" in response.headers["content-disposition"]
        [own] = [p for p in desk.reports.glob(f"*.{fmt}")]
        assert response.text() == own.read_text(encoding="utf-8")
    assert json.loads(own.read_text(encoding="utf-8"))["thread_id"] == asked.thread


def test_the_page_requests_nothing_outside_its_own_server(asked: Asked, desk: Desk) -> None:
    assert asked.watched.requests, "the requests were recorded"
    outside = [u for u in asked.watched.requests if not u.startswith(desk.base + "/")]
    assert outside == []
    assert asked.watched.errors == [], "no script error, no refused load (CSP)"


def test_the_report_is_the_command_line_s_for_the_same_question(
    asked: Asked, desk: Desk, web: FakeWeb, chromium: Browser, tmp_path: Path
) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "deskresearch", TOPIC, "-o", str(tmp_path), "-q",
         "--format", "md+html"],
        env=loopback_env(web, DESKRESEARCH_CHECKPOINTS="memory"),
        capture_output=True, text=True, timeout=180, check=False, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    cli_md = (tmp_path / "ev-battery-recycling.md").read_text(encoding="utf-8")
    page = asked.watched.page
    assert page.request.get(link(page, "#dl-md")).text() == cli_md
    body = "#report > :not(section)"  # the report's sentences, marks and evidence, shown or not
    shown = page.frame_locator("#report").locator(body).all_text_contents()
    cli = chromium.new_page()
    cli.goto((tmp_path / "ev-battery-recycling.html").as_uri())
    assert shown == cli.locator(body).all_text_contents() and shown
    cli.close()


def test_the_list_reopens_a_finished_research_in_a_new_tab(
    asked: Asked, context: BrowserContext, desk: Desk
) -> None:
    page = opened(context, desk).page
    entry = page.locator(f'#runs a[data-thread="{asked.thread}"]')
    assert TOPIC in entry.inner_text() and entry.get_attribute("data-status") == "ok"
    entry.click()
    page.frame_locator("#report").locator("#claim-0").wait_for()
    assert page.inner_text("#run-topic") == TOPIC
    assert (
        page.is_visible("#dl-md") and page.is_visible("#delete") and not page.is_visible("#resume")
    )
    page.close()
