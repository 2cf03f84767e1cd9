"""The HTML report in a real headless browser (Debian's chromium), written by the CLI process.

One offline run (`deskresearch ... --format md+html`) against the loopback web, its report
planted with an invented sentence the citation check removes, and its judge wrong both ways on
two sentences (the check overrules it); then the page is loaded over file:// and used as a
reader would: links followed, sentences clicked, evidence read, printed.
A screenshot is kept in ``test-artifacts/`` (ignored by git).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from tests.support import browser
from tests.support.browser import Watched
from tests.support.fake_model import REPORT
from tests.support.loopback import serve
from tests.support.runs import loopback_env

# One worker holds the browser (under pytest-xdist).
pytestmark = [pytest.mark.skipif(not browser.available(), reason=browser.MISSING),
              pytest.mark.xdist_group("browser")]  # fmt: skip

ROOT = Path(__file__).parents[2]
ARTIFACTS = ROOT / "test-artifacts"
TOPIC = "EV battery recycling"
OVERRULED = "Die Ökobilanz von Elektroautos"  # its source states it; the judge will say not


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The CLI's HTML report and its JSON, from one offline run."""
    out = tmp_path_factory.mktemp("report")
    with serve() as web:
        web.model.fail(REPORT, "unknown_citation")  # an invented sentence for the check to remove
        web.model.judge_says = {OVERRULED: "unsupported", "An invented claim": "supported"}
        proc = subprocess.run(
            [sys.executable, "-m", "deskresearch", TOPIC, "-o", str(out), "-q",
             "--format", "md+html", "--report-mode", "single"],
            env=loopback_env(web, DESKRESEARCH_CHECKPOINTS="memory"),
            capture_output=True, text=True, timeout=180, check=False, cwd=ROOT,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    html = out / "ev-battery-recycling.html"
    assert f"{html}" in proc.stderr
    data = json.loads((out / "ev-battery-recycling.json").read_text(encoding="utf-8"))
    assert {c["verdict"] for c in data["citations"]} >= {"supported", "removed"}
    return html, data


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    with browser.chromium() as b:
        yield b


@pytest.fixture
def opened(chromium: Browser, written: tuple[Path, dict[str, Any]]) -> Iterator[Watched]:
    page = chromium.new_page(viewport={"width": 1100, "height": 1400})
    watched = Watched(page)
    page.goto(written[0].as_uri())
    yield watched
    page.close()


def test_the_page_loads_nothing_but_itself_and_its_script_runs(
    opened: Watched, written: tuple[Path, dict[str, Any]]
) -> None:
    assert opened.requests == [written[0].as_uri()]
    assert opened.errors == [], "no CSP violation, no script error"
    assert opened.page.is_visible("#toggle-all"), "the inline script ran (allowed by its hash)"


def test_every_citation_link_resolves_and_every_sentence_carries_its_verdict(
    opened: Watched, written: tuple[Path, dict[str, Any]]
) -> None:
    page, data = opened.page, written[1]
    dangling = page.eval_on_selector_all(
        'a[href^="#"]',
        "links => links.filter(a => !document.getElementById(a.hash.slice(1))).map(a => a.href)",
    )
    assert dangling == []
    cites = page.eval_on_selector_all(".cites a", "links => links.map(a => a.hash)")
    ids = {f"#ref-{s['id']}" for s in data["sources"]}
    assert cites and set(cites) <= ids
    shown = page.eval_on_selector_all(
        ".claim", "els => els.map(e => [Number(e.dataset.claim), e.dataset.verdict])"
    )
    expected = [[i, c["verdict"]] for i, c in enumerate(data["citations"]) if c["sentence"]]
    assert shown == expected
    removed = [c["original"] for c in data["citations"] if c["verdict"] == "removed"]
    assert removed and removed[0].split(" [")[0] in page.inner_text("#citation-check")
    body = page.eval_on_selector_all(
        "#report > :not(section)", "els => els.map(e => e.innerText).join(' ')"
    )
    assert removed[0].split(" [")[0] not in body and expected and "[" in body


def test_clicking_a_sentence_or_pressing_its_button_shows_its_evidence(
    opened: Watched, written: tuple[Path, dict[str, Any]]
) -> None:
    page, first = opened.page, written[1]["citations"][0]
    assert not page.is_visible("#ev-0")
    page.click("#claim-0", position={"x": 4, "y": 6})  # the sentence's words, not its link
    assert page.is_visible("#ev-0")
    evidence = page.inner_text("#ev-0")
    assert first["verdict"].upper() in evidence and " ".join(first["quote"].split()) in evidence
    assert page.get_attribute("#ev-btn-0", "aria-expanded") == "true"
    page.click("#claim-0", position={"x": 4, "y": 6})
    assert not page.is_visible("#ev-0")

    page.focus("#ev-btn-1")
    page.keyboard.press("Enter")
    assert page.is_visible("#ev-1")
    page.keyboard.press("Escape")
    assert not page.is_visible("#ev-1")
    assert page.evaluate("document.activeElement.id") == "ev-btn-1"

    page.click("#claim-1 .cites a")
    target = page.evaluate("document.querySelector(':target')?.id")
    assert target == f"ref-{written[1]['citations'][1]['sources'][0]}"
    assert not page.is_visible("#ev-1"), "following a citation link does not toggle evidence"


def test_the_question_asked_is_the_first_thing_a_reader_sees(opened: Watched) -> None:
    page = opened.page
    assert page.is_visible("#question")
    assert TOPIC in page.inner_text("#question")
    asked = page.locator("#question").bounding_box()
    title = page.locator("#report h1").first.bounding_box()
    assert asked and title and asked["y"] + asked["height"] <= title["y"], "above the report"


def test_each_evidence_card_names_its_verdict_once(
    opened: Watched, written: tuple[Path, dict[str, Any]]
) -> None:
    page, data = opened.page, written[1]
    page.click("#toggle-all")  # every card open, as a reader who wants them all
    cards = page.eval_on_selector_all(
        ".evidence", "els => els.map(e => [Number(e.id.slice(3)), e.innerText])"
    )
    shown = [i for i, c in enumerate(data["citations"]) if c["sentence"]]
    assert [i for i, _ in cards] == shown and cards
    for i, text in cards:
        verdict = data["citations"][i]["verdict"]
        assert text.lower().count(verdict) == 1, f"card {i} says {verdict!r} more than once: {text}"


def test_a_verdict_the_evidence_overruled_shows_on_its_card(
    opened: Watched, written: tuple[Path, dict[str, Any]]
) -> None:
    page, data = opened.page, written[1]
    [i] = [i for i, c in enumerate(data["citations"]) if c["original"].startswith(OVERRULED)]
    cited = data["citations"][i]
    assert cited["verdict"] == "supported" and cited["dispute"]["overruled"]
    assert "overruled" in (page.get_attribute(f"#ev-btn-{i}", "class") or "").split()
    assert not page.is_visible(f"#ev-{i} .dispute")
    page.click(f"#ev-btn-{i}")
    assert page.is_visible(f"#ev-{i} .dispute")
    card = page.inner_text(f"#ev-{i} .dispute")
    assert card.startswith("The judge model's verdict was overruled: it said “not stated by any")
    assert "asked again, differently: stated (judge model)" in card
    appendix = page.inner_text("#citation-check")
    assert "overruled" in appendix and "An invented claim" in appendix, "the other way too"


def test_print_hides_the_controls_and_shows_where_links_go(opened: Watched) -> None:
    page = opened.page
    page.emulate_media(media="print")
    assert not page.is_visible("#ev-btn-0")
    after = page.eval_on_selector(
        "#references a[href^='http']", "a => getComputedStyle(a, '::after').content"
    )
    href = page.get_attribute("#references a[href^='http']", "href")
    assert href and href in after


def test_screenshot_is_kept_as_an_artefact(
    opened: Watched, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = opened.page
    page.click("#ev-btn-0")
    shot = tmp_path / "html-report.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    ARTIFACTS.mkdir(exist_ok=True)
    kept = shutil.copy(shot, ARTIFACTS / "html-report.png")
    with capsys.disabled():
        print(f"\nHTML report screenshot: {kept}")  # noqa: T201 - where the artefact is
