"""The Ray driver without a cluster: Ray's usage statistics off, lost tasks named and counted."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from deskresearch.batch.ledger import Ledger
from deskresearch.batch.ray_driver import USAGE_STATS, _result, node_env
from deskresearch.batch.runner import Job, build_job
from deskresearch.batch.topics import Topic
from deskresearch.session.plan import Entry, Plan, prepare
from deskresearch.session.reports import ReportFiles
from deskresearch.session.run import Session
from deskresearch.session.settings import Given, Sources

ROOT = Path(__file__).parents[3]
ASK = (
    "from deskresearch.batch.ray_driver import import_ray\n"
    "import_ray()\n"
    "from ray._common.usage import usage_lib\n"
    "print(usage_lib.usage_stats_enabled())\n"
)


def rays_own_answer(tmp_path: Path, **env: str) -> str:
    """Whether Ray, imported by the driver in a fresh process, says it collects usage stats."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    clean["RAY_USAGE_STATS_CONFIG_PATH"] = str(tmp_path / "absent.json")  # not ~/.ray's
    proc = subprocess.run([sys.executable, "-c", ASK], env=clean | env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    return proc.stdout.strip()


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs Ray")
def test_rays_usage_statistics_are_off_in_the_driver_and_its_tasks_unless_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert rays_own_answer(tmp_path) == "False"
    assert rays_own_answer(tmp_path, RAY_USAGE_STATS_ENABLED="1") == "True"  # the user's choice
    monkeypatch.delenv(USAGE_STATS, raising=False)
    assert node_env(forward_keys=False)[USAGE_STATS] == "0"  # the tasks' runtime environment


class RayError(Exception):
    pass


class WorkerCrashedError(RayError):
    pass


class RayTaskError(RayError):
    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def fake_ray(exc: BaseException) -> Any:
    def get(ref: object) -> Any:
        raise exc

    errors = SimpleNamespace(RayError=RayError, RayTaskError=RayTaskError)
    return SimpleNamespace(get=get, exceptions=errors)


def lost_after(attempts: int) -> Ledger:
    ledger = Ledger()
    for n in range(attempts):
        base = {"stage": "batch", "attempt": str(n)}
        ledger.record("t-1", base | {"event": "attempt", "at": float(n), "before": []})
        ledger.record("t-1", base | {"event": "sent", "call_stage": "write_report", "model": "m"})
    return ledger


def topic_job(tmp_path: Path) -> tuple[Job, Plan, Session]:
    """A topic of a Ray batch as the driver holds it: its job, its admitted plan, the session."""
    entry = Entry("batch", providers=False)
    sources = Sources(flags={"checkpoints": "memory", "output_dir": str(tmp_path)}, environ={})
    job = build_job(Topic(1, "EV batteries", {}, "t-1", "ev"), sources, entry)
    plan = prepare("EV batteries", job.settings, entry=entry, thread="t-1")
    folder = Given(str(tmp_path), "the flag -o", "change -o", "flag")
    return (
        job,
        plan,
        Session(entry=entry, store=job.settings["checkpoints"], files=ReportFiles(folder)),
    )


@pytest.mark.parametrize(("attempts", "said"), [(1, "1 attempt began"), (4, "4 attempts began")])
def test_a_task_lost_for_good_says_how_many_attempts_began_and_counts_their_calls(
    attempts: int, said: str, tmp_path: Path
) -> None:
    job, plan, session = topic_job(tmp_path)
    ray = fake_ray(WorkerCrashedError("node died"))
    row = _result(ray, object(), job, plan, 1.0, lost_after(attempts), session)
    assert row.status == "failed" and f"lost ({said}; WorkerCrashedError)" in row.error
    assert "times" not in row.error and row.model_calls == attempts  # each sent, none answered


def test_a_task_whose_own_code_raised_is_not_called_lost(tmp_path: Path) -> None:
    job, plan, session = topic_job(tmp_path)
    ray = fake_ray(RayTaskError(ImportError("No module named 'deskresearch'")))
    row = _result(ray, object(), job, plan, 1.0, Ledger(), session)
    assert row.error == "its Ray task failed: ImportError: No module named 'deskresearch'"
