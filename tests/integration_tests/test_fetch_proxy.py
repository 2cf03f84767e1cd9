"""A fetch proxy re-resolves every name itself: the CLI and the server say so once, at start.

The network policy checks each target before it is requested, but through a proxy the last DNS
lookup and the connection are the proxy's (docs/security.md: it must filter its own egress).
Pages still arrive through the proxy.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph_sdk import get_client

from tests.integration_tests.test_cli import cli, validate
from tests.support.loopback import FakeWeb
from tests.support.proxy import forward_proxy
from tests.support.runs import loopback_env
from tests.support.server import dev_server

pytestmark = pytest.mark.anyio
WARNING = "pages are fetched through the proxy"


def test_cli_warns_once_that_the_proxy_must_filter_its_own_egress(
    web: FakeWeb, tmp_path: Path
) -> None:
    with forward_proxy() as (proxy, relayed):
        secret = proxy.replace("http://", "http://user:hunter2@")
        env = {"DESKRESEARCH_FETCH_PROXY": secret}
        proc = cli(web, "EV battery recycling", "-o", str(tmp_path), "-q", env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count(WARNING) == 1, proc.stderr
    assert "DNS rebinding" in proc.stderr and "hunter2" not in proc.stderr
    assert relayed and all(line.startswith("http://127.0.0.1:") for line in relayed)
    pages = {s["url"] for s in validate(tmp_path / "ev-battery-recycling.json")["sources"]}
    assert pages and all(s.split("?")[0] in {r.split("?")[0] for r in relayed} for s in pages)


def test_cli_without_a_proxy_says_nothing_of_one(web: FakeWeb, tmp_path: Path) -> None:
    proc = cli(web, "EV battery recycling", "-o", str(tmp_path), "-q")
    assert proc.returncode == 0 and WARNING not in proc.stderr


async def test_served_mode_warns_once_at_start(web: FakeWeb, tmp_path: Path) -> None:
    with forward_proxy() as (proxy, relayed):
        env = loopback_env(web, DESKRESEARCH_FETCH_PROXY=proxy)
        log = tmp_path / "server.log"
        with dev_server(env, log) as url:
            assert log.read_text().count(WARNING) == 1, "said at start, before any run"
            async with get_client(url=url) as client:
                thread = await client.threads.create()
                out = await client.runs.wait(thread["thread_id"], "researcher",
                                             input={"topic": "EV battery recycling"})  # fmt: skip
        assert isinstance(out, dict) and out["status"] == "ok" and relayed
    assert log.read_text().count(WARNING) == 1, "and only once"
