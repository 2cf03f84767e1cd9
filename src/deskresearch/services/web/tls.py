"""One TLS context per source of CA certificates, shared by the project's HTTP clients.

Building a context parses the CA bundle: about 40 ms of CPU on the benchmark machine, paid
again by every httpx client made with ``verify=True`` (a CLI run made four of ours; SearXNG
made one per search). The context depends only on where the certificates come from, so one per
source serves every client. All of these clients speak HTTP/1.1: httpcore sets the same ALPN
protocols on the context at each connect, so sharing it is safe.
"""

from __future__ import annotations

import os
import ssl
from functools import cache


def tls_context(*, trust_env: bool = True) -> ssl.SSLContext:
    """The context httpx 0.28 builds for ``verify=True``, made once per CA source.

    ``trust_env``: honour ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` (as httpx does by default);
    False: certifi's bundle only (the page fetcher, whose trust is the deployment's).
    """
    if trust_env and os.environ.get("SSL_CERT_FILE"):
        return _context(cafile=os.environ["SSL_CERT_FILE"])
    if trust_env and os.environ.get("SSL_CERT_DIR"):
        return _context(capath=os.environ["SSL_CERT_DIR"])
    import certifi

    return _context(cafile=certifi.where())


@cache
def _context(cafile: str | None = None, capath: str | None = None) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=cafile, capath=capath)
