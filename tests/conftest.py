"""Shared fixtures: env isolation, the loopback web, a graph wired to it."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.loopback import FakeWeb, serve

FIXTURES = Path(__file__).parent / "fixtures"
# Settings built at import time must not use the developer's cache either (see clean_environ).
os.environ["DESKRESEARCH_CACHE"] = "false"
# Tests press Ctrl-C on the command and its workers. A runner started in the background by a
# shell without job control ignores SIGINT, and every child inherits that: they would never stop.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


FAULT_SUMMARY = pytest.StashKey[str]()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """Under pytest-xdist: take the fault suite's line from the worker that ran it."""
    if line := getattr(node, "workeroutput", {}).get("fault_summary"):
        node.config.stash[FAULT_SUMMARY] = line


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Print the fault-injection suite's one-line summary at the end of the run."""
    if line := config.stash.get(FAULT_SUMMARY, None):
        terminalreporter.write_line(line)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees a real key, endpoint or setting from the developer's shell."""
    for name in list(os.environ):
        if name.startswith(("DESKRESEARCH_", "OPENAI_", "TAVILY_", "LANGSMITH_", "LANGCHAIN_")):
            monkeypatch.delenv(name)
    # No test reads or fills the developer's cache; cache tests turn it on with a tmp file.
    monkeypatch.setenv("DESKRESEARCH_CACHE", "false")


@pytest.fixture
def web() -> Iterator[FakeWeb]:
    """A running loopback web with the fake model, fake Tavily and the fixture pages."""
    with serve() as w:
        yield w
