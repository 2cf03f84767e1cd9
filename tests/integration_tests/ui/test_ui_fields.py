"""``deskresearch ui``'s form checks, in headless chromium: a problem is named at its field.

Bad input (no question, a setting out of bounds, one the pre-flight refuses) is named at the
field it came from, in the command line's words for its flag, with no model call, no run saved
and no file written. Checks answered out of order leave the page to the newest one: an older
check's answer, or an ask's, does not overwrite what a newer check showed; a check lost on
the way is named until the next one answers.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, Page, Request, Route

from tests.support import browser
from tests.support.desk import Desk
from tests.support.desk_page import TOPIC, model_calls, opened, threads
from tests.support.loopback import FakeWeb

pytestmark = [pytest.mark.skipif(not browser.available(), reason=browser.MISSING),
              pytest.mark.xdist_group("browser")]  # fmt: skip


def holding(page: Page, pattern: str, when: Callable[[Request], bool]) -> list[Route]:
    """Hold the requests to ``pattern`` that ``when`` picks: each is answered when the test says."""
    held: list[Route] = []
    page.route(
        pattern, lambda route: held.append(route) if when(route.request) else route.continue_()
    )
    return held


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
    held = holding(page, "**/api/check", lambda r: '"max_rounds":"1"' in (r.post_data or ""))
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
    held = holding(page, "**/api/runs", lambda r: r.method == "POST")
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


def test_a_check_that_failed_is_cleared_by_the_next_one_answered(
    context: BrowserContext, desk: Desk
) -> None:
    """A check lost on the way (the server restarting, a dropped connection) says so, then goes."""
    page = opened(context, desk).page
    page.route("**/api/check", lambda route: route.abort("connectionreset"))
    page.click("#settings summary")
    page.fill("#f-max_rounds", "3")
    page.press("#f-max_rounds", "Tab")
    page.wait_for_selector("body[data-checked~='1']")
    failure = page.inner_text("#problem-")
    assert failure.strip(), "the failed check is named in the general problem line"
    page.unroute("**/api/check")
    page.fill("#f-max_rounds", "1")
    page.press("#f-max_rounds", "Tab")
    page.wait_for_selector("body[data-checked~='2']")
    assert page.inner_text("#problem-").strip() == "", f"{failure!r} stayed"
    page.close()


def test_an_ask_lost_on_the_way_says_so(context: BrowserContext, desk: Desk) -> None:
    """The server down when Research is pressed: the form names it, keeps the question."""
    page = opened(context, desk).page
    page.route("**/api/runs", lambda route: route.abort("connectionreset"))
    page.fill("#topic", TOPIC)
    page.press("#topic", "Enter")
    page.wait_for_selector("#problem-:not(:empty)")
    assert page.input_value("#topic") == TOPIC and "#run/" not in page.url
    assert page.inner_text("#go") == "Research" and page.is_enabled("#go")
    page.close()
