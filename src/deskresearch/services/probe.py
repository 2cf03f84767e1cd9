"""One request of a pre-flight check: its status and JSON body, no retry (httpx imported when used)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TIMEOUT_S = 3.0  # connect and answer: a server that needs longer is down for a user waiting


async def get_json(
    url: str,
    headers: Mapping[str, str] | None = None,
    *,
    proxy: str | None = None,
    timeout: float = TIMEOUT_S,
    post: Mapping[str, Any] | None = None,
) -> tuple[int, Any]:
    """GET ``url`` once (or POST ``post`` as JSON): its HTTP status and JSON body (or None).

    ``post`` is for reads a server takes as a POST (Ollama's ``/api/show``).

    Raises:
        httpx.TransportError: the server does not answer.
    """
    import httpx

    from deskresearch.services.web.tls import tls_context

    async with httpx.AsyncClient(timeout=timeout, verify=tls_context(), proxy=proxy) as client:
        response = await client.request(
            "GET" if post is None else "POST", url, headers=dict(headers or {}), json=post
        )
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, None
