"""A real headless browser for the HTML report: Debian's chromium driven by Playwright.

Playwright's own browser download needs the internet, so it is pointed at the system chromium
(``.ci/run`` installs it with apt). Tests skip with ``MISSING`` where it is absent.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, ConsoleMessage, Page, Request, sync_playwright

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
MISSING = (
    "Debian's chromium is not installed (.ci/run installs it: apt-get install -y chromium); "
    "the HTML report's browser test needs it"
)
# No network of its own: no component updates, sync, first-run or background fetches.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def available() -> bool:
    """Whether a chromium binary is there to drive."""
    return Path(CHROMIUM).is_file()


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless chromium (a fresh temporary profile, closed on exit)."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()


class Watched:
    """A page with every request it (and its frames) made, and every console error."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.requests: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda r: self._request(r))
        page.on("console", lambda m: self._console(m))
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _request(self, request: Request) -> None:
        self.requests.append(request.url)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(message.text)
