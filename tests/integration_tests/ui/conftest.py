"""``deskresearch ui``'s browser tests: one loopback web, one desk and one chromium per module.

``context`` is a browser that opened the desk's printed link once, so it holds the key's cookie.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext

from tests.support import browser
from tests.support.desk import Desk, served
from tests.support.loopback import FakeWeb, serve


@pytest.fixture(scope="module")
def web() -> Iterator[FakeWeb]:
    """The loopback web the module's desk and runs use."""
    with serve() as w:
        yield w


@pytest.fixture(scope="module")
def desk(web: FakeWeb, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desk]:
    """``deskresearch ui`` started as a user starts it, on its own store and report folder."""
    with served(web, tmp_path_factory.mktemp("desk")) as d:
        yield d


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    """Debian's chromium, headless."""
    with browser.chromium() as b:
        yield b


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
