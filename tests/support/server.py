"""Start `langgraph dev` offline on a free loopback port, for tests that drive it with the SDK."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).parents[2]
QUIET = {"LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "true",
         "LANGSMITH_TRACING": "false"}  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def dev_server(env: dict[str, str], log: Path) -> Iterator[str]:
    """Run `langgraph dev` with ``env`` (plus QUIET) until the block ends; yield its URL."""
    with dev_server_process(env, log) as (url, _):
        yield url


@contextmanager
def dev_server_process(env: dict[str, str], log: Path) -> Iterator[tuple[str, int]]:
    """Like dev_server; yield its URL and the CLI process's pid (the server runs under it)."""
    port = free_port()
    with log.open("w") as out:
        proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "langgraph"), "dev", "--port", str(port),
             "--host", "127.0.0.1", "--no-browser", "--no-reload"],
            cwd=ROOT, env={**env, **QUIET}, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            try:
                if httpx.get(url + "/ok", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        yield url, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
