"""Runs tests/ray_tests (a two-node Ray cluster, PostgreSQL, the loopback web) inside a network
namespace of its own that has nothing but loopback, so no test traffic leaves this machine.

Ray binds the machine's network interface even when given 127.0.0.1; inside `unshare -n` there
is none. Needs root (CI is), `unshare`, `ip`, PostgreSQL's binaries and Ray (the ray extra).
"""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ray_tests.conftest import IN_NETNS

ROOT = Path(__file__).parents[2]


def missing() -> str:
    """What this machine lacks to run the Ray tests ("" when nothing)."""
    if os.geteuid() != 0:
        return "a network namespace needs root"
    if not (shutil.which("unshare") and shutil.which("ip")):
        return "needs unshare and ip (util-linux, iproute2)"
    if not list(Path("/usr/lib/postgresql").glob("*/bin/initdb")):
        return "needs PostgreSQL's binaries (.ci/postgres.sh installs them)"
    if importlib.util.find_spec("ray") is None:
        return "needs Ray: pip install -e '.[dev]'"
    return ""


@pytest.mark.timeout(900)
def test_the_ray_cluster_tests_pass_in_a_network_namespace_of_their_own() -> None:
    if why := missing():
        pytest.skip(why)
    # One process: its session fixtures (PostgreSQL, the cluster) are one each (no xdist there).
    inner = (
        'ip link set lo up && exec "$0" -m pytest -q -s -p no:cacheprovider -n 0 tests/ray_tests'
    )
    proc = subprocess.run(
        ["unshare", "-n", "sh", "-c", inner, sys.executable],
        env={**os.environ, IN_NETNS: "1"}, cwd=ROOT, capture_output=True, text=True, timeout=840,
    )  # fmt: skip
    tail = "\n".join(
        line for line in proc.stdout.splitlines() if "passed" in line or "node kill" in line
    )
    print(tail)  # noqa: T201 - the node-kill figures, shown with -s
    assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-4000:]
    assert "4 passed" in proc.stdout
