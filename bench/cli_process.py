"""Run the real ``deskresearch`` command as a process and record what can be seen from outside.

The clock is this process's ``time.time()`` (the same wall clock the fake web stamps its calls
with): ``t0`` is taken just before ``Popen`` (fork + exec add a few ms, which the user waits for
too); the exit is when ``waitid`` reports the child gone, before it is reaped. Every stderr line
is stamped when it arrives (Python's stderr is line-buffered, so it arrives when printed). The
process tree is sampled every 50 ms for peak RSS (VmHWM) and CPU time of the command and its
worker processes; a worker's start comes from ``/proc/<pid>/stat`` (10 ms ticks).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from bench.web import web_process

if TYPE_CHECKING:
    from tests.support.loopback import Call

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
SAMPLE_S = 0.05


@dataclass
class Proc:
    """One process of the command's tree, as last sampled."""

    kind: str  # "main", "worker" (multiprocessing spawn), "tracker" or "other"
    start_ticks: int  # /proc/<pid>/stat starttime: clock ticks since boot
    hwm_mb: float = 0.0  # peak RSS so far (VmHWM)
    cpu_s: float = 0.0  # user + system time so far (own, not its children's)
    last_seen: float = 0.0  # time.time() of the last sample that found it alive


@dataclass
class Observed:
    """Everything one CLI run showed from outside (all times are time.time() values)."""

    t0: float
    exit: float
    returncode: int
    stderr: list[tuple[float, str]]
    files: dict[str, float]  # output file name → mtime
    result: dict[str, Any]  # the run's JSON (empty if none was written)
    log: list[Call]  # the fake web's calls
    procs: dict[int, Proc] = field(default_factory=dict)
    main_pid: int = 0


def _stat(pid: int) -> tuple[int, int, int] | None:
    """Return (ppid, starttime ticks, utime + stime ticks) of ``pid``, or None if it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split()  # after "pid (comm) "; comm may hold spaces
    return int(fields[1]), int(fields[19]), int(fields[11]) + int(fields[12])


def _kind(pid: int, main: int) -> str:
    if pid == main:
        return "main"
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "other"
    return (
        "worker" if b"spawn_main" in cmd else "tracker" if b"resource_tracker" in cmd else "other"
    )


def _hwm_mb(pid: int) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0  # a zombie has no memory left to report


def sample_tree(main: int, procs: dict[int, Proc]) -> None:
    """Update ``procs`` with ``main`` and every live descendant of it (Linux /proc)."""
    now, parents = time.time(), {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and (st := _stat(int(entry.name))):
            parents[int(entry.name)] = st
    tree, frontier = set(), {main}
    while frontier:
        tree |= frontier
        frontier = {p for p, st in parents.items() if st[0] in frontier and p not in tree}
    for pid in tree & parents.keys():
        _, start, cpu = parents[pid]
        proc = procs.setdefault(pid, Proc(_kind(pid, main), start))
        proc.hwm_mb = max(proc.hwm_mb, _hwm_mb(pid))
        proc.cpu_s, proc.last_seen = cpu / TICK, now


def _read_lines(stream: IO[bytes], into: list[tuple[float, str]]) -> None:
    for raw in iter(stream.readline, b""):
        into.append((time.time(), raw.decode("utf-8", "replace").rstrip("\n")))


def command(python: str = sys.executable) -> list[str]:
    """The command a user types: ``python``'s installed console script, else ``-m deskresearch``."""
    script = Path(python).with_name("deskresearch")
    return [str(script)] if script.is_file() else [python, "-m", "deskresearch"]


def run_process(cmd: list[str], env: dict[str, str], cwd: Path) -> Observed:
    """Run ``cmd`` to its end, stamping stderr lines, sampling its tree, timing its exit."""
    stderr: list[tuple[float, str]] = []
    procs: dict[int, Proc] = {}
    t0 = time.time()
    child = subprocess.Popen(
        cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )  # fmt: skip
    assert child.stdout is not None and child.stderr is not None
    readers = [
        threading.Thread(target=_read_lines, args=(child.stderr, stderr), daemon=True),
        threading.Thread(target=child.stdout.read, daemon=True),
    ]
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            sample_tree(child.pid, procs)
            done.wait(SAMPLE_S)

    watcher = threading.Thread(target=watch, daemon=True)
    for thread in [*readers, watcher]:
        thread.start()
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, not yet reaped
    end = time.time()
    if (st := _stat(child.pid)) and child.pid in procs:  # a zombie still reports its CPU time
        procs[child.pid].cpu_s = st[2] / TICK
    done.set()
    watcher.join()
    returncode = child.wait()
    for thread in readers:
        thread.join(timeout=30)  # workers holding the pipes may outlive the command briefly
    return Observed(t0, end, returncode, stderr, {}, {}, [], procs, child.pid)


def run_cli(
    topic: str,
    latency: dict[str, float],
    base: list[str] | None = None,
    extra: list[str] | None = None,
    web_kind: str = "default",
) -> Observed:
    """Run ``deskresearch TOPIC`` against a fresh loopback web (its own process), as a user would.

    ``base`` replaces the command (default: :func:`command`); ``extra`` flags are passed on
    (e.g. ``--report-mode single``); ``web_kind`` picks the loopback web (bench.web). Temp
    output folder and checkpoint file per run; no cache (``DESKRESEARCH_CACHE=false``).
    """
    sys.path.insert(0, str(ROOT))
    from tests.support.runs import loopback_env

    with web_process(latency, kind=web_kind) as (web, _), tempfile.TemporaryDirectory() as tmp:
        out, cwd = Path(tmp) / "out", Path(tmp)
        cmd = [*(base or command()), topic, "-o", str(out), "--checkpoints", str(cwd / "cp.sqlite"),
               *(extra or [])]  # fmt: skip
        obs = run_process(cmd, loopback_env(web), cwd)
        files = sorted(out.glob("*")) if out.is_dir() else []
        obs.files = {f.name: f.stat().st_mtime_ns / 1e9 for f in files}
        js = [f for f in files if f.suffix == ".json"]
        obs.result = json.loads(js[0].read_text(encoding="utf-8")) if js else {}
    obs.log = list(web.log)
    if obs.returncode not in (0, 2):
        tail = "\n".join(line for _, line in obs.stderr[-20:])
        raise SystemExit(f"deskresearch exited {obs.returncode}:\n{tail}")
    return obs
