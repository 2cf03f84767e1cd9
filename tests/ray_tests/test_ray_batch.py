"""`deskresearch batch --ray` on a real two-node cluster: every report, limits across nodes,
nothing redone after a finished batch, a worker node killed mid-run costs only its in-flight
work and batch.json counts every call the model server saw, and the driver keeps Ray's usage
statistics off and connects to nothing but loopback."""

from __future__ import annotations

import ipaddress
import json
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench.measure import peak_overlap
from tests.ray_tests.conftest import only_in_netns
from tests.support.batches import ROOT, batch, calls_per_topic, summary, topic_of, write_topics
from tests.support.loopback import Call, FakeWeb
from tests.support.runs import loopback_env

pytestmark = [only_in_netns, pytest.mark.timeout(600)]
TOPICS = [
    "EV battery recycling",
    "Night trains in Europe",
    "Heat pumps in old houses",
    "Urban beekeeping",
    "Desalination costs",
    "Open licences in research",
]
SETTLED_S = 1.0  # a call answered this long before the kill has had its step saved


def driver_env(web: FakeWeb, postgres: str) -> dict[str, str]:
    """The driver's environment: endpoints and settings; no keys (the nodes have their own)."""
    env = loopback_env(web, DESKRESEARCH_CHECKPOINTS=postgres,
                       DESKRESEARCH_DECOMPOSITION_NUMS="2", DESKRESEARCH_URL_PER_QUERY="2")  # fmt: skip
    del env["OPENAI_API_KEY"], env["TAVILY_API_KEY"]
    return env


def key(call: Call) -> tuple[str, str]:
    """A model call by what it asked (the same prompt of the same topic: the same call)."""
    return topic_of(call), str(call.body.get("messages"))


@pytest.fixture(scope="module")
def reference(
    cluster: Any, ray_web: FakeWeb, postgres: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """The six topics run once over both nodes, at most 2 model calls in flight cluster-wide."""
    tmp = tmp_path_factory.mktemp("reference")
    file = write_topics(tmp / "topics.txt", TOPICS)
    args = [str(file), "-o", str(tmp / "out"), "--ray", cluster.address, "--max-model-calls", "2"]
    seen = len(ray_web.log)
    audit = tmp / "audit.json"  # the driver, run under an audit hook (tests/support/audited.py)
    proc = subprocess.run(
        [sys.executable, "-m", "tests.support.audited", str(audit), "batch", *args],
        env=driver_env(ray_web, postgres), cwd=ROOT, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    log = ray_web.log[seen:]
    return {"proc": proc, "args": args, "log": log, "out": tmp / "out", "audit": audit}


def test_six_topics_over_two_nodes_each_end_with_a_report_under_one_call_limit(
    reference: dict[str, Any], cluster: Any
) -> None:
    proc = reference["proc"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = summary(reference["out"])["topics"]
    assert [r["status"] for r in rows] == ["ok"] * 6
    assert all(Path(r["files"][0]).read_text(encoding="utf-8").count("[1]") for r in rows)
    nodes = {n.node_id for n in cluster.list_all_nodes()}
    assert {r["node"] for r in rows} == nodes  # spread over both nodes
    assert all(r["rss_mb"] > 50 for r in rows)
    # The model-call limit holds across processes and nodes: the Coordinator actor's slots.
    assert peak_overlap(reference["log"], "model") <= 2
    assert set(calls_per_topic(reference["log"])) - {""} == set(TOPICS)


def test_the_driver_keeps_rays_usage_statistics_off_and_connects_only_to_loopback(
    reference: dict[str, Any],
) -> None:
    assert reference["proc"].returncode == 0, reference["proc"].stderr[-3000:]
    seen = json.loads(reference["audit"].read_text(encoding="utf-8"))
    assert seen["ray_usage_stats"] is False  # as Ray itself reports it, in the driver
    assert seen["opened"], "the audit hook was live in the driver"
    inet = [a for a in seen["connect"] if isinstance(a, list)]  # (host, port[, ...]); else a path
    outside = [a for a in inet if not _loopback(a[0])]
    assert outside == [], f"the driver tried to reach {outside}"
    assert [h for h in seen["getaddrinfo"] if h and not _loopback(h)] == []


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def test_running_the_finished_batch_again_asks_nothing(
    reference: dict[str, Any], ray_web: FakeWeb, postgres: str
) -> None:
    seen = len(ray_web.log)
    proc = batch(driver_env(ray_web, postgres), *reference["args"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert ray_web.log[seen:] == []
    rows = summary(reference["out"])["topics"]
    assert {r["run"] for r in rows} == {"earlier"} and [r["status"] for r in rows] == ["ok"] * 6


def _kill_node(cluster: Any, node: Any) -> None:
    """Kill a node as a machine dies: its workers and its raylet at once (SIGKILL)."""
    import psutil  # type: ignore[import-untyped]

    raylet = psutil.Process(node.all_processes["raylet"][0].process.pid)
    for proc in raylet.children(recursive=True):
        proc.send_signal(signal.SIGKILL)
    cluster.remove_node(node, allow_graceful=False)


def test_a_worker_node_killed_mid_run_loses_only_its_in_flight_calls(
    reference: dict[str, Any], cluster: Any, ray_web: FakeWeb, postgres: str, tmp_path: Path
) -> None:
    file = write_topics(tmp_path / "topics.txt", TOPICS)
    worker = next(n for n in cluster.list_all_nodes() if n is not cluster.head_node)
    log_file = tmp_path / "driver.log"
    seen = len(ray_web.log)
    cmd = [sys.executable, "-m", "deskresearch", "batch", str(file), "-o", str(tmp_path / "out"),
           "--ray", cluster.address]  # fmt: skip
    with log_file.open("w") as err:
        driver = subprocess.Popen(cmd, env=driver_env(ray_web, postgres), cwd=ROOT, stderr=err)
    # Wait until a topic running on the worker node has summarised chunks, some long ago.
    started = re.compile(rf"line \d+: started on node {worker.node_id[:12]}: (.+) \(thread")
    deadline = time.monotonic() + 240
    while True:
        assert driver.poll() is None and time.monotonic() < deadline, log_file.read_text()
        on_worker = set(started.findall(log_file.read_text()))
        log = ray_web.log[seen:]
        chunks = Counter(topic_of(c) for c in log if c.key == "ChunkSummary")
        settled = [c for c in log if topic_of(c) in on_worker]
        if any(chunks[t] >= 2 for t in on_worker) and time.time() - settled[0].started > 2:
            break
        time.sleep(0.05)
    _kill_node(cluster, worker)
    killed_at = time.time()
    driver.wait(timeout=300)
    stderr = log_file.read_text()
    assert driver.returncode == 0, stderr[-3000:]

    rows = summary(tmp_path / "out")["topics"]
    assert [r["status"] for r in rows] == ["ok"] * 6, stderr[-3000:]
    resumed = {r["topic"] for r in rows if r["run"] == "resumed"}
    # Every topic that started on the worker, a line the loop above may have read too early.
    on_worker = set(started.findall(stderr))
    assert resumed and resumed <= on_worker  # the killed node's topics continued elsewhere
    assert {r["node"] for r in rows if r["topic"] in resumed} == {cluster.head_node.node_id}

    log = [c for c in ray_web.log[seen:] if c.kind == "model"]
    before = [c for c in log if c.started < killed_at]
    after = [c for c in log if c.started >= killed_at]
    settled_keys = {key(c) for c in before if c.started + c.seconds < killed_at - SETTLED_S}
    in_flight = {key(c) for c in before} - settled_keys
    asked_again = {key(c) for c in after} & {key(c) for c in before}
    assert settled_keys and not asked_again - in_flight  # only in-flight work is redone
    # Topics the kill did not touch made exactly the calls of an uninterrupted run; the others
    # at most that plus what was in flight on the dead node.
    reference_calls = calls_per_topic(reference["log"])
    calls = calls_per_topic(log)
    for topic in TOPICS:
        extra = sum(1 for c in before if topic_of(c) == topic and key(c) in in_flight)
        if topic in resumed:
            assert calls[topic] <= reference_calls[topic] + extra, topic
        else:
            assert calls[topic] == reference_calls[topic], topic
    redone = sum(calls.values()) - sum(reference_calls.values())
    # batch.json counts every call the model server saw, the dead node's too. A call in the
    # instant between its report and its request when the node died counts without having
    # arrived: at most the calls in flight then.
    counted = sum(r["model_calls"] for r in rows)
    assert len(log) <= counted <= len(log) + len(in_flight), (counted, len(log))
    print(  # noqa: T201 - the figures the issue asks for, shown with -s
        f"\nnode kill: {len(resumed)} topics resumed on the head node; model calls "
        f"{sum(calls.values())} vs {sum(reference_calls.values())} uninterrupted "
        f"({redone} redone, {len(in_flight)} were in flight); {len(settled_keys)} calls "
        f"settled before the kill, none asked again; batch.json counts {counted} model calls"
    )
