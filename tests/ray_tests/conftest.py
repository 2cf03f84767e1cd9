"""A PostgreSQL, the loopback web and a two-node Ray cluster, all inside this network namespace.

Only run by tests/integration_tests/test_batch_ray.py, which starts pytest on this folder under
`unshare -n` (a network namespace with nothing but loopback): Ray binds the machine's network
interface even when told 127.0.0.1, and a PostgreSQL started outside is not reachable in here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.loopback import FakeWeb, Latency, serve

ROOT = Path(__file__).parents[2]
IN_NETNS = "DESKRESEARCH_IN_NETNS"
PG_PORT = "55433"  # another port than CI's: the socket file in /tmp is shared across namespaces
# Nodes are declared dead after 3 missed health checks a second apart (Ray's default: ~30 s).
FAST_DEATH = {"health_check_period_ms": 1000, "health_check_failure_threshold": 3,
              "health_check_initial_delay_ms": 1000}  # fmt: skip
NODE_KEYS = {"OPENAI_API_KEY": "test-key", "TAVILY_API_KEY": "tvly-test"}  # each node's own
only_in_netns = pytest.mark.skipif(
    os.environ.get(IN_NETNS) != "1",
    reason="run by test_batch_ray.py, in a network namespace of its own",
)


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """A throw-away PostgreSQL started by CI's own script, on loopback in this namespace."""
    data = f"/tmp/deskresearch-ray-pg-{os.getpid()}"  # the postgres user must reach it
    env = {**os.environ, "PG_DIR": data, "PG_PORT": PG_PORT}
    script = str(ROOT / ".ci" / "postgres.sh")
    url = subprocess.run([script], env=env, capture_output=True, text=True, check=True).stdout
    try:
        yield url.strip()
    finally:
        subprocess.run([script, "stop"], env=env, check=False)
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture(scope="session")
def ray_web() -> Iterator[FakeWeb]:
    """The loopback web, with a model slow enough to kill a node mid-run."""
    with serve(FakeWeb(latency=Latency(call_s=0.25, fetch_s=0.05))) as web:
        yield web


@pytest.fixture(scope="session")
def cluster() -> Iterator[Any]:
    """Two Ray nodes of 2 CPUs each (Ray's own cluster utilities), each with its own keys."""
    from ray.cluster_utils import Cluster

    head = {"num_cpus": 2, "env_vars": NODE_KEYS, "include_dashboard": False,
            "_system_config": FAST_DEATH}  # fmt: skip
    c = Cluster(initialize_head=True, head_node_args=head)
    c.add_node(num_cpus=2, env_vars=NODE_KEYS)
    c.wait_for_nodes()
    try:
        yield c
    finally:
        c.shutdown()  # type: ignore[no-untyped-call]
