"""The HTTP clients model calls go through, built on the shared TLS context.

Given none, ChatOpenAI builds two clients of its own (async and sync) when it is first used, and
each parses the CA bundle again (about 40 ms of CPU each here): on the critical path of the
first call made through it (the ranking, in a command). These are built the way the openai
client builds its default (its connection limits, redirects followed, ``HTTP(S)_PROXY`` from the
environment, ``OPENAI_PROXY`` as ChatOpenAI reads it), on ``tls_context()``, which the head start
has usually built already. The early calls (``model.early``) and ChatOpenAI share the async one,
so the first usual call reuses the early calls' connection instead of opening a new one.
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from deskresearch.services.web.tls import tls_context

# openai's DEFAULT_CONNECTION_LIMITS: max_model_calls (up to 256) is the bound, not the pool.
LIMITS = httpx.Limits(max_connections=1000, max_keepalive_connections=100)
CONNECT_S = 5.0  # at most, for opening a connection: a wrong port fails fast


def call_timeout(timeout_s: float) -> httpx.Timeout:
    """``timeout_s`` for a call's reads, writes and wait for a connection; connecting, CONNECT_S.

    Passed with every request: the openai client otherwise applies a plain number to connecting
    too (600 s against a local server that is down).
    """
    return httpx.Timeout(timeout_s, connect=min(timeout_s, CONNECT_S))


def _settings(environ: Mapping[str, str], timeout_s: float) -> dict[str, object]:
    return {
        "timeout": call_timeout(timeout_s),
        "proxy": environ.get("OPENAI_PROXY") or None,  # as ChatOpenAI; HTTP(S)_PROXY too
        "follow_redirects": True,  # as the openai client
        "limits": LIMITS,
        "verify": tls_context(),
    }


def async_client(environ: Mapping[str, str], timeout_s: float) -> httpx.AsyncClient:
    """The async client for model calls (each request still passes its own timeout)."""
    return httpx.AsyncClient(**_settings(environ, timeout_s))  # type: ignore[arg-type]


def sync_client(environ: Mapping[str, str], timeout_s: float) -> httpx.Client:
    """The sync client ChatOpenAI insists on building (deskresearch never calls through it)."""
    return httpx.Client(**_settings(environ, timeout_s))  # type: ignore[arg-type]
