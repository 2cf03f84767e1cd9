"""Weighed evidence as a user meets it: the CLI as a process, its files, the page in chromium.

One offline run of the command on an evidence case (a press release, its reprint that names it
as its source, and a union that counts differently) with ``--format md+html``; the result file
is checked against the published schema and scored as the benchmark scores it; then the HTML
report is opened in Debian's chromium and read as a reader would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.integration_tests.test_cli import validate
from tests.support import browser
from tests.support.evidence import evidence_web, load_cases, score
from tests.support.loopback import serve
from tests.support.runs import loopback_env

ROOT = Path(__file__).parents[2]
CASE = next(c for c in load_cases() if c.id == "en-attribution")


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], str]:
    out = tmp_path_factory.mktemp("evidence")
    with serve(evidence_web([CASE])) as web:
        proc = subprocess.run(
            [sys.executable, "-m", "deskresearch", CASE.question, "-o", str(out),
             "--format", "md+html", "--url-per-query", "6"],
            env=loopback_env(web, DESKRESEARCH_CHECKPOINTS="memory"),
            capture_output=True, text=True, timeout=180, check=False, cwd=ROOT,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    [js] = out.glob("*.json")
    [md] = out.glob("*.md")
    return js.with_suffix(".html"), validate(js), md.read_text(encoding="utf-8")


def test_the_files_carry_the_copies_and_the_disagreement(
    written: tuple[Path, dict[str, Any], str],
) -> None:
    _, data, markdown = written
    assert data["schema_version"] == "1.3"
    found = score(CASE, data)
    assert found.copies == [True] and found.surfaced == [True] and found.false == []
    assert "## Where the sources disagree" in markdown
    [d] = data["disagreements"]
    for side in d["sides"]:  # each value, cited to its own page, in the markdown as written
        assert (
            f"{side['claim'].rstrip('.')} {''.join(f'[{i}]' for i in side['cites'])}." in markdown
        )
    assert json.dumps(data["settings"]).count("weigh_evidence") == 1


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    if not browser.available():
        pytest.skip(browser.MISSING)
    with browser.chromium() as b:
        yield b


@pytest.fixture
def page(chromium: Browser, written: tuple[Path, dict[str, Any], str]) -> Iterator[Page]:
    p = chromium.new_page(viewport={"width": 1100, "height": 1400})
    requests: list[str] = []
    p.on("request", lambda r: requests.append(r.url))
    p.goto(written[0].as_uri())
    yield p
    assert requests == [written[0].as_uri()], "the page loads nothing but itself"
    p.close()


def test_the_page_sets_out_both_sides_with_their_sources_and_dates(
    page: Page, written: tuple[Path, dict[str, Any], str]
) -> None:
    data = written[1]
    panel = page.locator("#weighing")
    assert panel.is_visible()
    sides = panel.locator(".side")
    assert sides.count() == 2
    texts = [sides.nth(i).inner_text() for i in range(2)]
    assert any("230" in t for t in texts) and any("260" in t for t in texts)
    trade = next(s for s in data["sources"] if s["url"].endswith("foodtrade.html"))
    two = next(t for t in texts if "230" in t)
    assert trade["published"] in two and "1 independent origin" in two
    panel.locator(f'a[href="#ref-{trade["id"]}"]').click()
    assert page.evaluate("document.querySelector(':target')?.id") == f"ref-{trade['id']}"
    assert f"one origin with [{trade['copy_of']}]" in page.inner_text(f"#ref-{trade['id']}")


def test_a_cited_sentence_says_how_many_independent_origins_back_it(
    page: Page, written: tuple[Path, dict[str, Any], str]
) -> None:
    data = written[1]
    shown = [i for i, c in enumerate(data["citations"]) if c["sentence"]]
    i = next(i for i in shown if "230" in data["citations"][i]["sentence"])
    page.click(f"#ev-btn-{i}")
    card = page.inner_text(f"#ev-{i}")
    cite = data["citations"][i]
    assert f"{cite['origins']} independent origin" in card
    assert all(d in card for d in cite["published"] if d)
