"""``deskresearch ui``'s browser tests: one loopback web, one desk and one chromium per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser

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
