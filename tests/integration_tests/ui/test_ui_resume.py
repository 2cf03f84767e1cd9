"""A research cancelled, resumed and deleted in ``deskresearch ui``, in headless chromium.

A run cancelled from the page mid-run stays listed as unfinished and resumes, in the page or on
the command line (same store); one interrupted on the command line (Ctrl-C) resumes in the
page; deleting asks first, then removes the run from the store and its files from the report
folder. Every wait is for a state (a selector, a request in the web's log), never for a time.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from tests.support import browser
from tests.support.desk import Desk, served
from tests.support.desk_page import RUN_S, ask, opened, page_read_since, threads, until
from tests.support.loopback import FakeWeb
from tests.support.server import free_port

pytestmark = [pytest.mark.skipif(not browser.available(), reason=browser.MISSING),
              pytest.mark.xdist_group("browser")]  # fmt: skip


def _cancelled(context: BrowserContext, desk: Desk, web: FakeWeb, question: str) -> Page:
    """A research started, then cancelled from the page mid-run (the web held meanwhile)."""
    page = opened(context, desk).page
    seen = len(web.log)
    thread = ask(page, question)
    until(page_read_since(web, seen), "a page of the research was read")
    web.hold()
    try:
        page.click("#cancel")
        page.wait_for_selector("#run-status[data-state=cancelled]")
    finally:
        web.release()
    page.wait_for_selector(f'#runs a[data-thread="{thread}"][data-status="unfinished"]')
    assert page.is_visible("#resume") and thread in page.inner_text("#resume-command")
    return page


def test_a_cancelled_research_stays_resumable_and_resumes_in_the_page(
    context: BrowserContext, desk: Desk, web: FakeWeb
) -> None:
    page = _cancelled(context, desk, web, "Night trains in Europe")
    page.click("#resume")
    page.wait_for_selector("#run-status[data-state=done]", timeout=RUN_S)
    page.frame_locator("#report").locator("#report").wait_for()
    thread = page.url.split("#run/")[1]
    page.wait_for_selector(f'#runs a[data-thread="{thread}"][data-status="ok"]')
    page.close()


def test_a_research_cancelled_in_the_page_resumes_on_the_command_line(
    context: BrowserContext, desk: Desk, web: FakeWeb
) -> None:
    page = _cancelled(context, desk, web, "Heat pumps in old houses")
    thread = page.url.split("#run/")[1]
    proc = subprocess.run(
        [sys.executable, "-m", "deskresearch", "--resume", thread, "-o", str(desk.reports), "-q"],
        env=desk.cli_env(web), capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    page.reload()
    page.wait_for_selector(f'#runs a[data-thread="{thread}"][data-status="ok"]')
    page.frame_locator("#report").locator("#report").wait_for()
    assert page.inner_text("#run-status").startswith("Report ready")
    page.close()


def test_a_research_interrupted_on_the_command_line_resumes_in_the_page(
    context: BrowserContext, desk: Desk, web: FakeWeb
) -> None:
    command = [sys.executable, "-m", "deskresearch", "Solar panels on balconies",
               "-o", str(desk.reports), "--progress", "plain"]  # fmt: skip
    with subprocess.Popen(command, env=desk.cli_env(web), stderr=subprocess.PIPE,
                          stdout=subprocess.DEVNULL, text=True) as cli:  # fmt: skip
        assert cli.stderr is not None
        said = ""
        for line in cli.stderr:
            said += line
            if "[read_page] finished" in line:  # a state: a page of the run is saved
                web.hold()  # nothing answers now: the signal lands mid-run
                cli.send_signal(signal.SIGINT)
                break
        said += cli.stderr.read()
        code = cli.wait(timeout=60)
        web.release()
    thread = re.search(r"--resume ([\w-]+)", said)
    assert code == 130 and thread, said
    page = opened(context, desk, f"#run/{thread[1]}").page
    page.wait_for_selector("#resume:not([hidden])")
    assert page.get_attribute("#run-status", "data-state") == "unfinished"
    page.click("#resume")
    page.wait_for_selector("#run-status[data-state=done]", timeout=RUN_S)
    page.wait_for_selector(f'#runs a[data-thread="{thread[1]}"][data-status="ok"]')
    page.close()


def test_deleting_asks_first_then_removes_the_run_and_its_files(
    context: BrowserContext, desk: Desk
) -> None:
    page = opened(context, desk).page
    thread = ask(page, "Rainwater harvesting in cities")
    page.wait_for_selector("#run-status[data-state=done]", timeout=RUN_S)
    [result] = [p for p in desk.reports.glob("*.json")
                if json.loads(p.read_text(encoding="utf-8"))["thread_id"] == thread]  # fmt: skip
    own = sorted(desk.reports.glob(f"{result.stem}.*"))
    assert [f.suffix for f in own] == [".html", ".json", ".md"]
    page.click("#delete")
    assert page.is_visible("#confirm") and "cannot be undone" in page.inner_text("#confirm")
    page.click("#confirm-keep")  # changed their mind
    assert not page.is_visible("#confirm") and thread in threads(desk.store)
    page.click("#delete")
    page.click("#confirm-delete")
    page.wait_for_url(f"{desk.base}/#")
    page.wait_for_selector(f'#runs a[data-thread="{thread}"]', state="detached")
    assert thread not in threads(desk.store) and not any(f.exists() for f in own)
    page.close()


def test_the_page_says_when_it_loses_its_desk_and_what_to_do_once_it_was_restarted(
    chromium: Browser, web: FakeWeb, tmp_path: Path
) -> None:
    """A dropped stream is said and, when back, the run shown is fetched again; a restarted desk
    (a new key: this page's cookie is stale) is said with what to do."""
    port = free_port()
    ctx = chromium.new_context()
    with served(web, tmp_path, "--port", str(port)) as first:
        page = ctx.new_page()
        page.goto(first.link)
        page.goto(f"{first.base}/#run/no-such-run")  # a run shown: its GET answers 404
        page.wait_for_selector("body[data-ready=true]")
        page.wait_for_selector("#run-problem:not(:empty)")
        page.wait_for_function("source !== null && source.readyState === EventSource.OPEN")
        page.route("**/api/events*", lambda route: route.abort())  # the network drops
        page.evaluate("connect()")
        page.wait_for_selector("#connection[data-state=reconnecting]")
        assert "reconnecting" in page.inner_text("#connection")
        with page.expect_request(lambda r: r.url.endswith("/api/runs/no-such-run")):
            page.unroute("**/api/events*")  # back: the browser's next try gets through
            page.wait_for_selector("#connection[data-state=open]", state="attached",
                                   timeout=30_000)  # fmt: skip
        assert page.inner_text("#connection") == ""
        # A hidden tab holds no stream; shown again, it fetches the run shown as after a loss.
        hide = "h => { Object.defineProperty(document, 'hidden', {value: h, configurable: true});" \
               " document.dispatchEvent(new Event('visibilitychange')); }"  # fmt: skip
        page.evaluate(hide, True)
        assert page.evaluate("source") is None
        with page.expect_request(lambda r: r.url.endswith("/api/runs/no-such-run")):
            page.evaluate(hide, False)
        page.wait_for_function("source !== null && source.readyState === EventSource.OPEN")
    page.wait_for_selector("#connection[data-state=reconnecting]")  # the desk stopped (Ctrl-C)
    with served(web, tmp_path, "--port", str(port)) as second:
        page.wait_for_selector("#connection[data-state=refused]", timeout=30_000)
        assert "open the new link" in page.inner_text("#connection")
        page.goto(second.link)  # as the message says
        page.wait_for_selector("body[data-ready=true]")
        page.wait_for_function("source !== null && source.readyState === EventSource.OPEN")
        assert page.inner_text("#connection") == ""
    ctx.close()
