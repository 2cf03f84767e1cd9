"""Loopback listeners that record every request: a canary that must never be hit, or a page host.

Each binds one loopback address (the whole of 127/8 is loopback on Linux), so a test can make a
name resolve to the canary's address and see whether anything connected there.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PAGE = (
    b"<html><head><title>Battery recycling</title></head><body><article>"
    + b"<p>Lithium recovery from used EV batteries reached 80 percent in European plants.</p>" * 8
    + b"</article></body></html>"
)


@dataclass
class Listener:
    """What one listener saw, and what it answers."""

    host: str
    port: int = 0
    body: bytes = PAGE
    headers: dict[str, str] = field(default_factory=dict)  # sent with every answer
    status: int = 200
    hits: list[dict[str, str]] = field(default_factory=list)  # request headers, one per request
    paths: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"


def _handler(listener: Listener) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def _answer(self) -> None:
            with listener._lock:
                listener.hits.append({k.lower(): v for k, v in self.headers.items()})
                listener.paths.append(self.path)
            self.send_response(listener.status)
            self.send_header("Content-Type", "text/html")
            for name, value in listener.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(listener.body)))
            self.end_headers()
            self.wfile.write(listener.body)

        do_GET = do_POST = do_CONNECT = _answer  # noqa: N815 - http.server's naming

    return Handler


@contextmanager
def listening(*listeners: Listener) -> Iterator[tuple[Listener, ...]]:
    """Serve each listener on its host; a port of 0 takes the first listener's (free) port."""
    servers: list[ThreadingHTTPServer] = []
    try:
        for listener in listeners:
            if not listener.port and servers:
                listener.port = servers[0].server_address[1]
            server = ThreadingHTTPServer((listener.host, listener.port), _handler(listener))
            server.daemon_threads = True
            listener.port = server.server_address[1]
            servers.append(server)
            threading.Thread(target=server.serve_forever, daemon=True).start()
        yield listeners
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
