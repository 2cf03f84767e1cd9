"""The loopback web for benchmarks, served from its own process."""

from __future__ import annotations

import multiprocessing as mp
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.support.loopback import FakeWeb

ROOT = Path(__file__).resolve().parents[1]
HOSTS = 4  # loopback hosts the pages are spread over (per-host fetch limits apply per host)


def _serve_web(latency: dict[str, float], port: int, conn: Connection) -> None:
    """Child process: serve a FakeWeb until told to stop, then send back what it saw."""
    sys.path.insert(0, str(ROOT))
    from tests.support.loopback import FakeWeb, Latency, serve

    with serve(FakeWeb(latency=Latency(**latency), hosts=HOSTS, port=port)) as web:
        conn.send(web.port)
        conn.recv()
        conn.send((web.log, dict(web.fetches)))


@contextmanager
def web_process(latency: dict[str, float], port: int = 0) -> Iterator[tuple[FakeWeb, int]]:
    """A FakeWeb served from its own process (on ``port``; 0: a free one), and its pid.

    Its CPU work (tokenising, JSON, HTML) would otherwise compete with the graph for this
    process's GIL, which no real provider does. Its log arrives when the block ends.
    """
    from tests.support.loopback import FakeWeb

    spawn = mp.get_context("spawn")
    parent, child = spawn.Pipe()
    proc = spawn.Process(target=_serve_web, args=(latency, port, child), daemon=True)
    proc.start()
    web = FakeWeb(hosts=HOSTS)
    web.port = parent.recv()
    try:
        yield web, proc.pid or 0
    finally:
        parent.send("stop")
        log, fetches = parent.recv()
        web.log.extend(log)
        web.fetches.update(fetches)
        proc.join(timeout=10)
