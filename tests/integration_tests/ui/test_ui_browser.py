"""``deskresearch ui`` in a real headless browser (Debian's chromium), against the loopback web.

One ``deskresearch ui`` process (started as a user starts it, stopped with Ctrl-C) and one
browser serve the whole module: a question asked and watched while the web is held mid-run,
its report read with its evidence and compared with the command line's for the same question,
the list reopened, a run cancelled and resumed (in the page, and on the command line), one
interrupted on the command line resumed in the page, one deleted after a confirmation, bad
input named at its field with nothing spent or saved, and requests from elsewhere refused.
Every wait is for a state (a selector, a request in the web's log), never for a time.
"""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Route

from tests.support import browser
from tests.support.browser import Watched
from tests.support.desk import Desk
from tests.support.loopback import FakeWeb
from tests.support.runs import loopback_env

pytestmark = [pytest.mark.skipif(not browser.available(), reason=browser.MISSING),
              pytest.mark.xdist_group("browser")]  # fmt: skip

ROOT = Path(__file__).parents[3]
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


def link(page: Page, selector: str) -> str:
    """Where a link of the page leads, as an absolute URL."""
    return str(page.eval_on_selector(selector, "a => a.href"))


def model_calls(web: FakeWeb) -> int:
    return sum(1 for call in web.log if call.kind == "model")


SUMMARIES = {"PageFacts", "ChunkSummary"}  # the model calls that come after a page was read


def page_read_since(web: FakeWeb, seen: int) -> Callable[[], bool]:
    """A page of the research was read and handed to the model.

    Its read is over, not only its fetch: pages are fetched ahead while their query is ranked.
    """
    return lambda: any(c.kind == "model" and c.key in SUMMARIES for c in web.log[seen:])


def panel_shows(page: Page, line: str) -> None:
    """Wait until the progress panel has ``line`` (a state of the page)."""
    page.wait_for_function("line => document.querySelector('#panel').innerText.includes(line)",
                           arg=line)  # fmt: skip


@pytest.fixture(scope="module")
def context(chromium: Browser, desk: Desk) -> Iterator[BrowserContext]:
    """A browser that opened the printed link once: it holds the key's cookie."""
    ctx = chromium.new_context(viewport={"width": 1280, "height": 1000})
    page = ctx.new_page()
    page.goto(desk.link)
    assert page.url == desk.base + "/", "the key leaves the address bar"
    page.close()
    yield ctx
    ctx.close()


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


def test_bad_input_is_named_at_its_field_and_nothing_is_spent_or_saved(
    context: BrowserContext, desk: Desk, web: FakeWeb
) -> None:
    page = opened(context, desk).page
    calls, saved = model_calls(web), threads(desk.store)
    files = sorted(desk.reports.glob("*")) if desk.reports.exists() else []

    page.press("#topic", "Enter")  # no question
    page.wait_for_selector("#problem-topic:not(:empty)")
    assert "empty" in page.inner_text("#problem-topic")
    page.fill("#topic", TOPIC)
    page.click("#settings summary")
    page.fill("#f-report_words", "5")
    page.press("#f-report_words", "Tab")  # checked as soon as it is left
    page.wait_for_selector("#problem-report_words:not(:empty)")
    page.fill("#f-report_words", "2000")
    page.fill("#f-max_rounds", "9")
    page.press("#topic", "Enter")
    page.wait_for_selector("#problem-max_rounds:not(:empty)")
    assert page.get_attribute("#f-max_rounds", "aria-invalid") == "true"
    page.fill("#f-max_rounds", "1")
    page.fill("#f-language", "Elvish")  # fails the pre-flight, not the bounds
    page.press("#topic", "Enter")
    page.wait_for_selector("#problem-language:not(:empty)")

    assert "#run/" not in page.url
    assert (model_calls(web), threads(desk.store)) == (calls, saved)
    assert (sorted(desk.reports.glob("*")) if desk.reports.exists() else []) == files
    said = {f: page.inner_text(f"#problem-{f}") for f in ("max_rounds", "language")}
    for flag, field, value in (
        ("--max-rounds", "max_rounds", "9"),
        ("--language", "language", "Elvish"),
    ):
        cli = subprocess.run(
            [sys.executable, "-m", "deskresearch", TOPIC, flag, value],
            env=desk.cli_env(web), capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert cli.returncode == 3
        words = said[field].replace(f"the page's {field}", f"the flag {flag}")
        assert words in " ".join(cli.stderr.split()), (words, cli.stderr)
    page.close()


def test_an_older_check_s_answer_does_not_clear_the_problem_a_newer_one_showed(
    context: BrowserContext, desk: Desk
) -> None:
    """Field checks can be answered out of order: the page shows the newest one's problems."""
    page = opened(context, desk).page
    held: list[Route] = []

    def hold_the_good_value(route: Route) -> None:
        if '"max_rounds":"1"' in (route.request.post_data or ""):
            held.append(route)
        else:
            route.continue_()

    page.route("**/api/check", hold_the_good_value)
    page.click("#settings summary")
    page.fill("#f-max_rounds", "1")
    page.press("#f-max_rounds", "Tab")  # left with a good value: this check's answer is held
    page.fill("#f-max_rounds", "9")
    page.press("#f-max_rounds", "Tab")  # then with a bad one: answered at once
    page.wait_for_selector("body[data-checked~='2']")
    assert page.get_attribute("#f-max_rounds", "aria-invalid") == "true" and held
    held[0].continue_()  # the older answer ("nothing wrong") comes last
    page.wait_for_selector("body[data-checked~='1']")
    assert page.inner_text("#problem-max_rounds").strip()
    assert page.get_attribute("#f-max_rounds", "aria-invalid") == "true"
    page.close()


def test_an_ask_answered_after_a_newer_check_leaves_the_settings_to_that_check(
    context: BrowserContext, desk: Desk
) -> None:
    page = opened(context, desk).page
    held: list[Route] = []
    page.route(
        "**/api/runs", lambda r: held.append(r) if r.request.method == "POST" else r.continue_()
    )
    page.fill("#topic", TOPIC)
    page.click("#settings summary")
    page.fill("#f-max_rounds", "9")
    page.press("#topic", "Enter")  # asked with 9 rounds: its answer is held
    page.wait_for_selector("#go[disabled]")
    page.fill("#f-max_rounds", "1")
    page.press("#f-max_rounds", "Tab")  # corrected while the ask is on its way, and checked
    page.wait_for_selector("body[data-checked~='3']")
    assert held, "the ask was sent"
    held[0].continue_()  # the ask's answer (too many rounds) comes last
    page.wait_for_selector("#go:not([disabled])")
    assert page.inner_text("#problem-max_rounds").strip() == ""
    assert page.get_attribute("#f-max_rounds", "aria-invalid") is None
    page.close()


ATTACK = """<!DOCTYPE html><html><body>
<form id="f" method="post" action="{desk}/api/runs" enctype="text/plain">
<input name='{{"topic": "spend their keys", "x": "' value='"}}'></form>
<script>
const desk = "{desk}";
Promise.allSettled([
  fetch(desk + "/api/runs", {{method: "POST", mode: "no-cors", credentials: "include",
    headers: {{"Content-Type": "text/plain"}}, body: JSON.stringify({{topic: "spend their keys"}})}}),
  fetch(desk + "/api/runs", {{mode: "no-cors", credentials: "include"}}),
]).then(() => document.getElementById("f").submit());
</script></body></html>"""


def test_a_page_elsewhere_can_neither_start_a_run_nor_read_one(
    context: BrowserContext, desk: Desk, web: FakeWeb
) -> None:
    web.written["/attack.html"] = ATTACK.format(desk=desk.base).encode()
    calls, saved = model_calls(web), threads(desk.store)
    page = context.new_page()  # the same browser: it holds the desk's cookie
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.method) if r.url.startswith(desk.base) else None)
    page.goto(web.url("/attack.html"))
    page.wait_for_url(f"{desk.base}/api/runs")  # the form was sent, its answer shown
    assert sorted(sent[:3]) == ["GET", "POST", "POST"]  # both fetches and the form went out
    assert "refused: a request from another site" in page.inner_text("body")
    assert (model_calls(web), threads(desk.store)) == (calls, saved)
    page.close()


def test_a_rebound_name_gets_nothing(chromium: Browser, desk: Desk) -> None:
    """DNS rebinding: a name of the attacker's that resolves to 127.0.0.1, in a real browser."""
    port = desk.base.rsplit(":", 1)[1]
    rules = "--host-resolver-rules=MAP rebound.test 127.0.0.1"
    rebinding = chromium.browser_type.launch(
        executable_path=browser.CHROMIUM, headless=True, args=[*browser.FLAGS, rules]
    )
    try:
        page = rebinding.new_page()
        answer = page.goto(f"http://rebound.test:{port}/?token={desk.token}")
        assert answer is not None and answer.status == 403
        assert "is not this server's" in page.inner_text("body")
    finally:
        rebinding.close()


def test_requests_from_elsewhere_or_without_the_key_are_refused(desk: Desk) -> None:
    own = {"Origin": desk.base}
    body = {"topic": TOPIC, "settings": {}}
    with httpx.Client(base_url=desk.base, cookies=desk.cookie) as client:
        assert client.post("/api/check", json=body, headers=own).status_code == 200  # the page's
        refused = [
            client.post("/api/runs", json=body, headers={"Origin": "http://evil.example"}),
            client.post("/api/runs", json=body),  # a change with no Origin at all
            client.post(
                "/api/runs",
                json=body,
                headers={**own, "Host": f"evil.example:{client.base_url.port}"},
            ),
            client.get("/api/runs", headers={"Sec-Fetch-Site": "cross-site"}),
            client.get("/api/runs", headers={"Sec-Fetch-Site": "same-site"}),  # another port
        ]
        assert [r.status_code for r in refused] == [403] * 5
    with httpx.Client(base_url=desk.base) as stranger:
        assert stranger.get("/api/runs").status_code == 401
        assert stranger.get("/", params={"token": "guessed"}).status_code == 401
        assert "printed" in stranger.get("/").text
