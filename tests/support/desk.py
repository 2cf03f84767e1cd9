"""``deskresearch ui`` as a user starts it: a process on a free loopback port, on the loopback web.

``served(web, folder)`` starts the command (``--no-browser --port 0``), reads the link it prints,
and stops it with Ctrl-C (SIGINT) at the end, as a user would; ``Desk`` knows its link, its key,
its store and its report folder. Its stderr goes to a file, shown when it fails to start.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from tests.support.loopback import FakeWeb
from tests.support.runs import loopback_env

ROOT = Path(__file__).parents[2]


@dataclass(frozen=True)
class Desk:
    """A running ``deskresearch ui``."""

    link: str  # as printed, with its key
    store: Path
    reports: Path
    process: subprocess.Popen[str]
    log: Path  # its stderr

    @property
    def base(self) -> str:
        """http://127.0.0.1:<port>"""
        parts = urlsplit(self.link)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def token(self) -> str:
        """The key in the link."""
        return parse_qs(urlsplit(self.link).query)["token"][0]

    @property
    def cookie(self) -> dict[str, str]:
        """The cookie the page holds after its first visit."""
        return {f"deskresearch-ui-{urlsplit(self.link).port}": self.token}

    def cli_env(self, web: FakeWeb) -> dict[str, str]:
        """The environment for the command line on the same store (and the same loopback web)."""
        return loopback_env(web, DESKRESEARCH_CHECKPOINTS=str(self.store))


@contextmanager
def served(
    web: FakeWeb, folder: Path, *args: str, python: str = "", browser: str = ""
) -> Iterator[Desk]:
    """Run ``deskresearch ui`` on ``folder``'s store and reports until the block ends.

    ``python``: the interpreter to run it with (another install's; default this one).
    ``browser``: a program the command opens its page with (``$BROWSER``, on a desktop that
    ``DISPLAY`` says is there); by default it opens none (``--no-browser``).
    """
    store, reports = folder / "runs.sqlite", folder / "reports"
    # Its own log: a second server on the same folder must not truncate the first one's.
    log = next(
        folder / f"ui{n or ''}.log"
        for n in range(100)
        if not (folder / f"ui{n or ''}.log").exists()
    )
    env = loopback_env(web, DESKRESEARCH_CHECKPOINTS=str(store))
    if browser:
        env |= {"BROWSER": browser, "DISPLAY": ":99"}  # no such display: nothing else opens
    with log.open("w") as errors:
        process = subprocess.Popen(
            [python or sys.executable, "-m", "deskresearch", "ui",
             *([] if browser else ["--no-browser"]), "--port", "0", "-o", str(reports), *args],
            env=env, stdout=subprocess.PIPE, stderr=errors, text=True, cwd=folder,
        )  # fmt: skip
    try:
        assert process.stdout is not None
        link = process.stdout.readline().strip()  # printed once it listens
        if not link.startswith("http://"):
            process.wait(timeout=30)
            raise RuntimeError(f"deskresearch ui did not start: {log.read_text()}")
        yield Desk(link, store, reports, process, log)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stdout is not None:
            process.stdout.close()
