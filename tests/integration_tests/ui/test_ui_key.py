"""``deskresearch ui``'s browser link: the key the command hands a browser opens the page once.

A browser's command line, link included, shows in ``ps`` to every local user for as long as the
browser runs. The command is started as a user starts it, on a desktop (``DISPLAY``) whose
browser (``$BROWSER``) is a script that records the link it was given; the link is then opened
in Debian's headless chromium.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from tests.support import browser
from tests.support.desk import served
from tests.support.loopback import FakeWeb

pytestmark = [pytest.mark.skipif(not browser.available(), reason=browser.MISSING),
              pytest.mark.xdist_group("browser")]  # fmt: skip

RECORDER = """#!{python}
import sys
from pathlib import Path

part = Path({out!r} + ".part")
part.write_text(sys.argv[1])
part.rename({out!r})
"""


def recorded(path: Path, bound_s: float = 60.0) -> str:
    """The link the command handed its browser, once the recorder has written it."""
    deadline = time.monotonic() + bound_s
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError("the command never opened its page in the browser")
        time.sleep(0.01)
    return path.read_text()


def test_the_browser_it_opens_gets_a_link_that_opens_the_page_once(
    chromium: Browser, web: FakeWeb, tmp_path: Path
) -> None:
    handed_to = tmp_path / "opened-with.txt"
    program = tmp_path / "browser"
    program.write_text(RECORDER.format(python=sys.executable, out=str(handed_to)))
    program.chmod(0o700)
    with served(web, tmp_path, browser=str(program)) as desk:
        handed = recorded(handed_to)
        assert handed.startswith(desk.base + "/?token=") and desk.token not in handed
        visits = [chromium.new_context() for _ in range(3)]  # three browsers, no cookie yet
        try:
            first, again, printed = (ctx.new_page() for ctx in visits)
            first.goto(handed)
            first.wait_for_selector("body[data-ready=true]")
            assert first.url == desk.base + "/"
            [cookie] = visits[0].cookies()
            assert cookie["value"] == desk.token, "the cookie carries the lasting key"
            answer = again.goto(handed)
            assert answer is not None and answer.status == 401
            assert "printed" in again.inner_text("body")
            printed.goto(desk.link)  # the printed link lasts
            printed.wait_for_selector("body[data-ready=true]")
        finally:
            for ctx in visits:
                ctx.close()
