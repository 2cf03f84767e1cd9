"""One GET of a pre-flight check: its status and JSON body, no retry (httpx imported when used)."""

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
) -> tuple[int, Any]:
    """GET ``url`` once: its HTTP status and its JSON body (None when it has none).

    Raises:
        httpx.TransportError: the server does not answer.
    """
    import httpx

    from deskresearch.services.web.tls import tls_context

    async with httpx.AsyncClient(timeout=timeout, verify=tls_context(), proxy=proxy) as client:
        response = await client.get(url, headers=dict(headers or {}))
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, None
