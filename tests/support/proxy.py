"""A forward HTTP proxy on loopback for tests: relays plain-http GETs and records each one.

It does what a proxy without egress filtering does: it resolves and connects to whatever the
request line names, which is why a fetch proxy must filter its own egress (docs/security.md).
"""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit


class _Relay(BaseHTTPRequestHandler):
    seen: list[str]

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        return

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.seen.append(self.path)  # absolute-form: http://host:port/path
        target = urlsplit(self.path)
        upstream = http.client.HTTPConnection(target.hostname or "", target.port or 80, timeout=10)
        headers = {k: v for k, v in self.headers.items() if not k.lower().startswith("proxy-")}
        upstream.request("GET", target.path + (f"?{target.query}" if target.query else ""),
                         headers=headers)  # fmt: skip
        resp = upstream.getresponse()
        body = resp.read()
        self.send_response(resp.status)
        for name, value in resp.getheaders():
            if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        upstream.close()


@contextmanager
def forward_proxy() -> Iterator[tuple[str, list[str]]]:
    """Run a proxy on a free loopback port; yield its URL and the request lines it relayed."""
    seen: list[str] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Relay", (_Relay,), {"seen": seen}))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
