"""Canonical URLs, so one page is fetched once however it is spelled."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}
_TRACKING_PREFIXES = ("utm_", "mtm_", "pk_")
_TRACKING_KEYS = {
    "fbclid",
    "gclid",
    "dclid",
    "msclkid",
    "mc_cid",
    "mc_eid",
    "igshid",
    "yclid",
    "_ga",
    "ref_src",
}


def canonical_url(url: str) -> str:
    """Return ``url`` with the differences that never change the page removed.

    Lower-cases scheme and host, drops default ports, the fragment, tracking parameters
    (utm_*, fbclid, gclid, ...) and a trailing slash, and sorts the remaining parameters.
    Unparseable input comes back stripped but otherwise unchanged.
    """
    raw = url.strip()
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError:
        return raw
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if not host:
        return raw
    netloc = host if ":" not in host else f"[{host}]"
    if parts.username:
        netloc = f"{parts.username}@{netloc}"
    if port is not None and _DEFAULT_PORTS.get(scheme) != port:
        netloc = f"{netloc}:{port}"
    query = sorted(
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not k.lower().startswith(_TRACKING_PREFIXES) and k.lower() not in _TRACKING_KEYS
    )
    path = parts.path.rstrip("/") or ""
    return urlunsplit((scheme, netloc, path, urlencode(query), ""))


def url_problem(url: str) -> str | None:
    """Return why ``url`` is not a readable web address (malformed, not http(s)), or None."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - parsing the port is what raises on "host:99999"
        host = parts.hostname or ""
    except ValueError as exc:
        return f"malformed URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return f"not a web address (scheme {parts.scheme or 'missing'})"
    if not host or any(c.isspace() for c in host):
        return "malformed URL (no valid host)"
    return None
