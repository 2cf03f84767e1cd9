"""Canonical URLs, so one page is fetched once however it is spelled; what makes a URL malformed.

A search result's URL is written by whoever made the page: ``url_problem`` is the one place that
says which URLs are not web addresses. The search node drops such a result with the reason, and
the network policy refuses the same URLs (a redirect's too), so no URL can end a run.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
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
    if _bad_character(raw):  # urlsplit would drop a CR/LF and yield another URL: keep it as is
        return raw
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


MAX_URL_CHARS = 4096  # longer "URLs" are not addresses a search result needs; they bloat prompts
_MAX_HOST = 253  # DNS: a name of at most 253 characters, each label 1 to 63 (RFC 1035)
_LABEL = re.compile(r"^[a-z0-9_-]+$")  # letters, digits, hyphen; underscore exists in the wild
_NUMERIC_LABEL = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)$")
# Not allowed unescaped in a URL (RFC 3986). Each would break the autolink <url> or the href the
# report gives a source, or make a browser read another host than we did ("a\\@b": host a).
_UNSAFE = frozenset('<>"`\\')


def _bad_character(url: str) -> str | None:
    """Name the first character no web address may carry raw, or None."""
    for ch in url:
        kind = unicodedata.category(ch)
        if kind == "Cc":  # CR/LF (urlsplit drops them silently: another URL is read), NUL, C1
            return f"control character U+{ord(ch):04X}"
        if kind in ("Cf", "Zl", "Zp"):  # bidi overrides, zero-width characters: shown != read
            return f"invisible or bidi character U+{ord(ch):04X}"
        if ch in _UNSAFE or ch.isspace():
            return f"character {ch!r} not allowed unescaped"
    return None


def shown(url: str, limit: int = 300) -> str:
    """Return ``url`` fit for a log line or provenance: invisible characters spelled out, cut."""
    text = "".join(
        ch.encode("unicode_escape").decode("ascii")
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")
        else ch
        for ch in url[: limit + 1]
    )
    return text if len(url) <= limit else text[:limit] + "…"


def host_problem(host: str) -> str | None:
    """Return why ``host`` (a URL's host, brackets removed) cannot be looked up, or None."""
    if ":" in host:  # an IPv6 literal
        if "%" in host:
            return "an IPv6 zone id names a local interface, not a web host"
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return "invalid IPv6 address"
        return None
    labels: list[str] = []
    for label in host.lower().removesuffix(".").split("."):  # "example.org.": fully qualified
        if not label:
            return "empty host label"
        try:  # the codec the name lookup uses (it raises on an empty or overlong label)
            label = label if label.isascii() else label.encode("idna").decode("ascii")
        except UnicodeError:
            return f"host label {label[:20]!r} is not a valid international name"
        if len(label) > 63:
            return f"host label of {len(label)} characters (at most 63)"
        if not _LABEL.match(label):
            return f"host label {label[:20]!r} is not letters, digits and hyphens"
        labels.append(label)
    name = ".".join(labels)
    if len(name) > _MAX_HOST:
        return f"host name of {len(name)} characters (at most {_MAX_HOST})"
    if _NUMERIC_LABEL.match(labels[-1]):  # a browser reads it as an IPv4 address
        try:
            ipaddress.IPv4Address(name)
        except ValueError:
            return "an IPv4 address in a non-standard notation"
    return None


def url_problem(url: str) -> str | None:
    """Return why ``url`` is not a readable web address (malformed, not http(s)), or None.

    Malformed: longer than MAX_URL_CHARS, a control, invisible or bidi character anywhere, a
    character RFC 3986 does not allow unescaped, credentials (``user@host``), a port outside
    1-65535, no host, or a host that is not a valid name or IP address (an empty or overlong
    label, a name over 253 characters, an IPv6 zone id, an IPv4 address in another notation).
    """
    if len(url) > MAX_URL_CHARS:
        return f"malformed URL ({len(url)} characters, at most {MAX_URL_CHARS})"
    try:
        parts = urlsplit(url)
        port = parts.port
        host = parts.hostname or ""
    except ValueError as exc:
        return f"malformed URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return f"not a web address (scheme {parts.scheme or 'missing'})"
    if bad := _bad_character(url):  # checked on the raw text: urlsplit drops CR, LF and TAB
        return f"malformed URL ({bad})"
    if "@" in parts.netloc:
        return "malformed URL (credentials before the host: the link would show another host)"
    if port is not None and not 1 <= port <= 65535:
        return f"malformed URL (port {port} out of range 1-65535)"
    if not host:
        return "malformed URL (no valid host)"
    if problem := host_problem(host):
        return f"malformed URL ({problem})"
    return None
