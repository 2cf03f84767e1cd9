"""Worker processes as an embedding user's script meets them: saved as a file, run, interrupted."""

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from deskresearch.services.workers import WorkerPool, WorkerTimeout
from tests.support.jobs import logged_wait, record, wait_for_release

ROOT = Path(__file__).parents[3]

# A user's script with no `if __name__ == "__main__":` guard, as the README's examples are.
UNGUARDED = """
import asyncio, sys
import pytest

from deskresearch.services.workers import WorkerPool
from tests.support.jobs import double, wait_for_release
print("main script ran", flush=True)

pool = WorkerPool(2)

async def main():
    print(await asyncio.gather(*(pool.run(double, n) for n in range(4))), flush=True)
    if "--wait" in sys.argv:  # a job that runs until the test says (a file), not for a time
        print("ready", flush=True)
        await pool.run(wait_for_release, "job-started", "job-released", 1)

try:
    asyncio.run(main())
except KeyboardInterrupt:
    print("interrupted", flush=True)
    # Closed here, not left to the interpreter's exit: Python 3.11's exit hook for process
    # pools races with a job that ends meanwhile (an OSError from its wake-up pipe).
    pool.close()
    sys.exit(130)
"""


def _script(tmp_path: Path) -> Path:
    path = tmp_path / "example.py"
    path.write_text(UNGUARDED, encoding="utf-8")
    return path


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def test_workers_do_not_rerun_an_unguarded_main_script(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(_script(tmp_path))],
        capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["main script ran", "[0, 2, 4, 6]"]
    assert "Traceback" not in proc.stderr


def test_ctrl_c_to_the_process_group_leaves_no_worker_traceback(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, str(_script(tmp_path)), "--wait"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=tmp_path,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )  # fmt: skip
    assert proc.stdout is not None
    lines = [proc.stdout.readline() for _ in range(3)]
    assert lines[-1] == "ready\n", lines
    deadline = time.monotonic() + 60
    while not (tmp_path / "job-started").exists():  # a state: the job runs in a worker
        assert proc.poll() is None and time.monotonic() < deadline, "the job never started"
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: every process of the group
    said = proc.stdout.readline()  # a state: the script took the Ctrl-C while the job ran
    (tmp_path / "job-released").touch()  # the job ends; closing the pool waits for no more
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert said + out == "interrupted\n"
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


def _ended(pid: int | None) -> bool:
    """The process no longer runs: no /proc entry, or a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


@pytest.mark.anyio
async def test_terminate_stops_idle_workers_without_waiting() -> None:
    from tests.support.jobs import double

    pool = WorkerPool(2)
    assert await pool.run(double, 21) == 42
    executor = pool._executor()
    procs = list(getattr(executor, "_processes", {}).values())
    assert procs and all(p.is_alive() for p in procs)
    pool.terminate()
    # Gone or a zombie, whoever reaps it: Process.is_alive() can read "alive" when the pool's
    # own thread reaped the child first (waitpid then fails with ECHILD).
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(_ended(p.pid) for p in procs):
        time.sleep(0.05)
    assert all(_ended(p.pid) for p in procs)
    assert await pool.run(double, 2) == 4  # a later job starts a new pool
    pool.close()


async def _until(check: Callable[[], bool]) -> None:
    """Wait for a state (a file, a count), at most two minutes."""
    deadline = time.monotonic() + 120
    while not check():
        assert time.monotonic() < deadline, "the state never came"
        await asyncio.sleep(0.01)


@pytest.mark.anyio
async def test_an_urgent_job_goes_to_the_next_free_worker_before_jobs_that_wait(
    tmp_path: Path,
) -> None:
    pool = WorkerPool(workers=1)
    started, released, order = tmp_path / "started", tmp_path / "released", tmp_path / "order"
    try:
        busy = asyncio.ensure_future(pool.run(wait_for_release, str(started), str(released), 1))
        await _until(started.exists)
        waiting = [asyncio.ensure_future(pool.run(record, str(order), tag)) for tag in "ab"]
        await _until(lambda: pool._gate.waiting() == 2)  # noqa: SLF001 - the state to wait for
        waiting.append(asyncio.ensure_future(pool.run(record, str(order), "c", urgent=True)))
        await _until(lambda: pool._gate.waiting() == 3)  # noqa: SLF001
        released.touch()
        assert await busy == 2 and await asyncio.gather(*waiting) == ["a", "b", "c"]
        assert order.read_text().split() == ["c", "a", "b"]
    finally:
        pool.close()


@pytest.mark.anyio
async def test_a_stuck_job_in_the_thread_fallback_does_not_hold_back_the_next(
    tmp_path: Path,
) -> None:
    pool = WorkerPool(workers=0)  # one thread: a stuck job there cannot be killed
    released = tmp_path / "released"
    try:
        with pytest.raises(WorkerTimeout):
            await pool.run(wait_for_release, str(tmp_path / "s"), str(released), 1, deadline_s=0.3)
        assert await pool.run(record, str(tmp_path / "order"), "next", deadline_s=30) == "next"
    finally:
        released.touch()  # the stuck thread ends, so the test process can
        pool.close()


@pytest.mark.anyio
async def test_a_job_whose_deadline_passes_before_it_runs_kills_no_running_job(
    tmp_path: Path,
) -> None:
    pool = WorkerPool(workers=1)
    log, released, order = tmp_path / "log", tmp_path / "released", tmp_path / "order"
    try:
        running = asyncio.ensure_future(pool.run(logged_wait, str(log), str(released), 1))
        await _until(log.exists)
        with pytest.raises(WorkerTimeout):
            await pool.run(record, str(order), "late", deadline_s=0.3)
        released.touch()
        assert await running == 2
        assert log.read_text().split() == ["started"]  # not killed and started again
        assert not order.exists()  # the late job never ran
    finally:
        released.touch()
        pool.close()
