"""Secrets masked in everything the product writes: provenance, progress events, logs, JSON.

A SearxNG URL with credentials, a Postgres DSN, a token in a query string or an API key echoed
in an error message must not reach a report, a run record, a trace or a log line. Masking keeps
what helps a reader (scheme, user name, host, parameter names) and replaces the secret with ***.
"""

from __future__ import annotations

import re
from typing import Any

MASK = "***"

# scheme://user:password@host → scheme://user:***@host; scheme://token@host → scheme://***@host
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/\s:@?#]*)(?::([^/\s@?#]*))?@")
# A query parameter named like a secret: the plain names, any name ending in token, secret,
# password or signature (accessToken, X-Amz-Signature), or key/auth/sig after a separator
# (x-api-key, private_key); "monkey=" or "country_code=" stay readable.
_QUERY = re.compile(
    r"(?i)([?&;](?:api[_-]?key|apikey|key|auth|authorization|pwd|sig|session|code"
    r"|[\w.-]*(?:token|secret|password|passwd|signature)|[\w.-]*[_.-](?:key|auth|sig))=)"
    r"[^&#\s\"'<>]+"
)
_DSN_PASSWORD = re.compile(r"(?i)\b(password|passwd|pwd)\s*=\s*(?!\*\*\*)[^\s;,&\"']+")
_BEARER = re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}")
_KEY_SHAPES = re.compile(r"\b(sk|tvly|lsv2|xoxb|ghp|gho|hf)([-_])[A-Za-z0-9_-]{8,}")


def _userinfo(m: re.Match[str]) -> str:
    scheme, user, password = m.group(1), m.group(2), m.group(3)
    if password is not None:
        return f"{scheme}{user}:{MASK}@"
    return f"{scheme}{MASK}@" if user else m.group(0)


def mask_secrets(text: str) -> str:
    """Return ``text`` with URL passwords, token parameters, DSN passwords and API keys masked."""
    if not text:
        return text
    text = _USERINFO.sub(_userinfo, text)
    text = _QUERY.sub(rf"\1{MASK}", text)
    text = _DSN_PASSWORD.sub(rf"\1={MASK}", text)
    text = _BEARER.sub(rf"\1 {MASK}", text)
    return _KEY_SHAPES.sub(rf"\1\2{MASK}", text)


def masked(value: Any) -> Any:
    """Return ``value`` with every string inside it (lists, dicts, tuples) masked."""
    if isinstance(value, str):
        return mask_secrets(value)
    if isinstance(value, dict):
        return {k: masked(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(masked(v) for v in value)
    return value
