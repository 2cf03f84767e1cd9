"""The loopback web for benchmarks, served from its own process."""

from __future__ import annotations

import multiprocessing as mp
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.support.loopback import FakeWeb

ROOT = Path(__file__).resolve().parents[1]
HOSTS = 4  # loopback hosts the pages are spread over (per-host fetch limits apply per host)


def _serve_web(
    latency: dict[str, float], port: int, conn: Connection, model: dict[str, Any], kind: str
) -> None:
    """Child process: serve a FakeWeb until told to stop, then send back what it saw."""
    sys.path.insert(0, str(ROOT))
    from tests.support import evidence, multihop
    from tests.support.fake_model import FakeModel
    from tests.support.loopback import FakeWeb, Latency, serve

    fake = FakeModel(**model)
    settings: dict[str, Any] = {"model": fake, "latency": Latency(**latency), "hosts": HOSTS}
    if kind == "multihop":
        built = multihop.hop_web(multihop.load_cases(), **settings)
    elif kind == "evidence":
        built = evidence.evidence_web(evidence.load_cases(), **settings)
    else:
        built = FakeWeb(**settings)
    built.port = port
    with serve(built) as web:
        conn.send(web.port)
        conn.recv()
        conn.send((web.log, dict(web.fetches), dict(fake.injected), fake.misjudged))


@contextmanager
def web_process(
    latency: dict[str, float],
    port: int = 0,
    model: dict[str, Any] | None = None,
    kind: str = "default",
) -> Iterator[tuple[FakeWeb, int]]:
    """A FakeWeb served from its own process (on ``port``; 0: a free one), and its pid.

    ``model`` sets fields of its FakeModel (e.g. ``judge_error_rate``); ``kind`` "multihop"
    (or "evidence") serves the multi-hop (evidence-weighing) cases' pages among the fixture
    pages, searched by content.

    Its CPU work (tokenising, JSON, HTML) would otherwise compete with the graph for this
    process's GIL, which no real provider does. Its log arrives when the block ends.
    """
    from tests.support.loopback import FakeWeb

    spawn = mp.get_context("spawn")
    parent, child = spawn.Pipe()
    proc = spawn.Process(
        target=_serve_web, args=(latency, port, child, model or {}, kind), daemon=True
    )
    proc.start()
    web = FakeWeb(hosts=HOSTS)
    web.port = parent.recv()
    try:
        yield web, proc.pid or 0
    finally:
        parent.send("stop")
        log, fetches, injected, misjudged = parent.recv()
        web.log.extend(log)
        web.fetches.update(fetches)
        web.model.injected.update(injected)
        web.model.misjudged.extend(misjudged)
        proc.join(timeout=10)
