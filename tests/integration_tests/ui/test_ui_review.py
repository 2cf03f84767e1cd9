"""A research that pauses for its review (``review_plan``), answered in the page.

``deskresearch ui`` is started as a user starts it, on the loopback web; the question is asked in
headless chromium with the review ticked. The run shows its queries and pages and waits; a page
left unticked is never fetched, and the report's provenance says it was dropped at review. Every
wait is for a state (a selector), never for a time.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.support import browser
from tests.support.desk import Desk, served
from tests.support.loopback import FakeWeb

pytestmark = [pytest.mark.skipif(not browser.available(), reason=browser.MISSING),
              pytest.mark.xdist_group("browser")]  # fmt: skip

TOPIC = "EV battery recycling"
RUN_MS = 120_000  # the longest a run may take on a loaded machine (a bound, not a wait)


@pytest.fixture(scope="module")
def context(chromium: Browser) -> Iterator[BrowserContext]:
    ctx = chromium.new_context(viewport={"width": 1280, "height": 1000})
    yield ctx
    ctx.close()


def test_a_review_is_answered_in_the_page_and_an_unticked_page_is_never_read(
    context: BrowserContext, desk: Desk, web: FakeWeb
) -> None:
    page = context.new_page()
    page.goto(desk.link)
    page.wait_for_selector("body[data-ready=true]")
    page.fill("#topic", TOPIC)
    page.click("#settings summary")
    page.fill("#f-max_rounds", "1")
    page.check("#f-review_plan")
    page.press("#topic", "Enter")
    page.wait_for_url("**/#run/*")
    thread = page.url.split("#run/")[1]
    page.wait_for_selector("#review:not([hidden]) #review-pages input", timeout=RUN_MS)
    assert "review" in page.inner_text("#run-status")
    queries = page.inner_text("#review-queries")
    urls = page.eval_on_selector_all("#review-pages input", "boxes => boxes.map(b => b.value)")
    assert queries.strip() and len(urls) > 1
    assert not any(c.kind == "fetch" for c in web.log), "nothing is read before the review"

    with httpx.Client(base_url=desk.base, cookies=desk.cookie) as client:
        own = {"Origin": desk.base}
        bad = client.post(f"/api/runs/{thread}/review", json={"answer": "maybe"}, headers=own)
        assert bad.status_code == 422 and "not an answer" in bad.json()["error"]
        none = client.post(f"/api/runs/{thread}/review", json={}, headers=own)
        assert none.status_code == 400 and '"answer"' in none.json()["error"]

    # The page's own request and its event stream race: an answer from before the review was
    # asked, read after the review is shown, must not hide it (the run would wait unseen).
    with httpx.Client(base_url=desk.base, cookies=desk.cookie) as client:
        now = client.get(f"/api/runs/{thread}").json()
    assert now["review"] and now["version"] > 0
    before = {**now, "review": None, "version": now["version"] - 1}
    page.evaluate("snapshot => showRun(snapshot)", before)
    assert page.is_visible("#review") and "review" in page.inner_text("#run-status")

    n = len(urls)
    assert page.inner_text("#review-go") == f"Read the ticked pages ({n} of {n})"
    for url in urls:  # with none ticked, the button says what that answer does
        page.uncheck(f"#review-pages input[value='{url}']")
    assert page.inner_text("#review-go") == "Read none of these pages"
    dropped = urls[0]
    for url in urls[1:]:
        page.check(f"#review-pages input[value='{url}']")
    assert page.inner_text("#review-go") == f"Read the ticked pages ({n - 1} of {n})"
    page.click("#review-go")
    page.wait_for_selector("#run-status[data-state=done]", timeout=RUN_MS)
    assert page.is_hidden("#review")

    saved = [json.loads(f.read_text(encoding="utf-8")) for f in desk.reports.glob("*.json")]
    [result] = [r for r in saved if r["thread_id"] == thread]
    at_review = [(p["stage"], p["subject"], p["outcome"]) for p in result["provenance"]
                 if p["reason"] == "dropped at review"]  # fmt: skip
    assert at_review == [("review_plan", dropped, "not_relevant")]
    assert urlsplit(dropped).path not in {c.key for c in web.log if c.kind == "fetch"}
    with httpx.Client(base_url=desk.base, cookies=desk.cookie) as client:
        late = client.post(f"/api/runs/{thread}/review", json={"answer": True},
                           headers={"Origin": desk.base})  # fmt: skip
        assert late.status_code == 409
    page.close()


def test_a_research_cancelled_at_its_review_asks_again_when_resumed(
    context: BrowserContext, desk: Desk, web: FakeWeb
) -> None:
    page = context.new_page()
    page.goto(desk.link)  # its own visit with the key: it does not rely on another test
    page.wait_for_selector("body[data-ready=true]")
    page.fill("#topic", "night trains in Europe")
    page.click("#settings summary")
    page.fill("#f-max_rounds", "1")
    page.check("#f-review_plan")
    page.press("#topic", "Enter")
    page.wait_for_selector("#review:not([hidden]) #review-pages input", timeout=RUN_MS)
    shown = page.eval_on_selector_all("#review-pages input", "boxes => boxes.map(b => b.value)")
    page.click("#cancel")
    page.wait_for_selector("#run-status[data-state=cancelled]")
    assert page.is_hidden("#review")
    thread = page.url.split("#run/")[1]
    with served(web, desk.store.parent) as restarted:  # another server on the same store
        other = context.new_page()
        other.goto(restarted.link)
        other.wait_for_selector("body[data-ready=true]")
        other.goto(f"{restarted.base}/#run/{thread}")
        other.wait_for_selector("#run-status[data-state=unfinished]")
        assert "Waiting for its review" in other.inner_text("#run-status")
        other.close()
    page.click("#resume")
    # The review again; a problem, a failure or an end instead: the test says which, with the log.
    review = "#review:not([hidden]) #review-pages input"
    ended = "#run-problem:not(:empty), #run-status:is([data-state=failed], [data-state=done])"
    try:
        page.wait_for_selector(f"{review}, {ended}", timeout=RUN_MS)
    except PlaywrightTimeout:
        pytest.fail(f"neither the review nor an end came back: {said(page, desk)}")
    assert page.is_visible(review), said(page, desk)
    again = page.eval_on_selector_all("#review-pages input", "boxes => boxes.map(b => b.value)")
    assert again == shown, "the same review, asked again"
    page.click("#review-go")  # every page ticked: accepted as it stands
    page.wait_for_selector("#run-status[data-state=done]", timeout=RUN_MS)
    page.close()


def said(page: Page, desk: Desk) -> str:
    """What the page and the server said: the status, the problem, the resume button, the log."""
    shown = {k: page.inner_text(k) for k in ("#run-status", "#run-problem", "#resume", "#lines")}
    thread = page.url.split("#run/")[-1]
    with httpx.Client(base_url=desk.base, cookies=desk.cookie, timeout=30) as client:
        server = client.get(f"/api/runs/{thread}").text[:2000]
    return f"{shown!r}\nthe server: {server}\n{desk.log.read_text()[-3000:]}"
