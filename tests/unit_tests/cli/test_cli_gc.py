"""The command imports the research path without garbage collection, then collects as usual."""

from __future__ import annotations

import argparse
import gc
from collections.abc import Iterator

import pytest

from deskresearch.cli import command as cli
from deskresearch.cli import headstart
from deskresearch.cli import research as cli_research
from deskresearch.session.style import EXIT_ERROR


@pytest.fixture(autouse=True)
def _restore_gc() -> Iterator[None]:
    yield
    gc.unfreeze()  # what a test froze goes back to the collector of this long-lived process
    gc.enable()


def test_imports_run_uncollected_and_the_run_is_collected(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, bool] = {}

    def prepare(ns: argparse.Namespace) -> None:
        seen["prepare"] = gc.isenabled()

    def research(ns: argparse.Namespace, prepared: object) -> int:
        seen["research"] = gc.isenabled()
        return 0

    monkeypatch.setattr(headstart, "prepare", prepare)
    monkeypatch.setattr(cli_research, "research", research)
    frozen = gc.get_freeze_count()
    assert cli.main(["some topic"], short_lived=True) == 0
    assert seen == {"prepare": False, "research": True}
    assert gc.get_freeze_count() > frozen, "what the imports built is left out of collections"


def test_a_caller_s_own_process_keeps_its_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    """main() called in-process (not the console script) freezes nothing of its caller's."""
    seen: list[bool] = []
    monkeypatch.setattr(headstart, "prepare", lambda ns: seen.append(gc.isenabled()))
    monkeypatch.setattr(cli_research, "research", lambda ns, prepared: 0)
    frozen = gc.get_freeze_count()
    assert cli.main(["some topic"]) == 0
    assert seen == [True] and gc.get_freeze_count() == frozen


def test_a_failed_start_turns_the_collector_back_on(monkeypatch: pytest.MonkeyPatch) -> None:
    def prepare(ns: argparse.Namespace) -> None:
        raise RuntimeError("a broken install")

    monkeypatch.setattr(headstart, "prepare", prepare)
    assert cli.main(["some topic"], short_lived=True) == EXIT_ERROR
    assert gc.isenabled()
