"""The user's research scope: which sites a run reads, and from which date; pure checks.

``include_domains`` / ``exclude_domains`` list hosts or suffixes (``who.int``, ``.gov``): a host
is covered by an entry it equals or ends with after a dot (the leading dot is optional
notation). ``since`` keeps pages published on or after a date. These are research choices,
not the network policy (``services/web/netpolicy.py``, ``allow_hosts``), which still applies
to whatever the scope admits. The search backends narrow their queries with ``engine_domains``
and ``site_query``; the search node drops a hit ``outside`` the scope, the fetcher a redirect
hop, and read_page a page published ``before`` ``since``.
"""

from __future__ import annotations

import re
from datetime import date
from urllib.parse import urlsplit

from deskresearch.records import DomainScope
from deskresearch.safety.masking import mask_secrets
from deskresearch.safety.urls import host_problem

MAX_SITE_QUERY_CHARS = 480  # DuckDuckGo cuts queries near 500 characters; beyond, filter after
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_domains(text: str) -> tuple[str, ...]:
    """Return the entries of a comma-separated list of hosts or suffixes, lower-cased.

    A leading dot is kept as the user wrote it (``.gov``); ``covers`` reads both spellings
    alike. International names are kept in their ASCII (IDNA) form, as URLs carry them.

    Raises:
        ValueError: an empty entry, a URL or a port instead of a host, a space inside an entry,
            a wildcard, or a name that cannot be a host; the message says how to write it.
    """
    if not text.strip():
        return ()
    entries: list[str] = []
    for raw in text.split(","):
        entry = raw.strip().lower()
        if not entry:
            raise ValueError(
                "an empty entry between commas: separate hosts or suffixes with single commas "
                "(who.int,.gov)"
            )
        entries.append(_entry(entry))
    return tuple(dict.fromkeys(entries))


def _entry(entry: str) -> str:
    """Check one entry (already stripped and lower-cased); return it in ASCII form."""
    # Shown in errors, which a served caller's log may keep: no password or token in it.
    if "://" in entry:
        shown = repr(mask_secrets(entry)[:80])
    else:
        shown = repr(("…@" + entry.rpartition("@")[2] if "@" in entry else entry)[:80])
    if "://" in entry or "/" in entry:
        host = urlsplit(entry if "://" in entry else f"//{entry}").hostname or "who.int"
        raise ValueError(f"{shown} is a URL, not a host: give the host alone ({host})")
    if any(ch.isspace() for ch in entry):
        raise ValueError(f"{shown} has a space inside: separate entries with commas")
    if "*" in entry:
        bare = entry.lstrip("*.") or "gov"
        raise ValueError(
            f"{shown}: leave out the wildcard, .{bare} already covers every host under {bare}"
        )
    if ":" in entry or "@" in entry:
        host = entry.rpartition("@")[2].partition(":")[0] or "who.int"
        raise ValueError(f"{shown} is not a host: give the host alone, no port or user ({host})")
    bare = entry.removeprefix(".").removesuffix(".")
    if not bare or (problem := host_problem(bare)):
        why = problem if bare and problem else "no name"
        raise ValueError(f"{shown} is not a host or domain suffix ({why}): e.g. who.int or .gov")
    ascii_name = ".".join(
        label if label.isascii() else label.encode("idna").decode("ascii")
        for label in bare.split(".")
    )
    return "." + ascii_name if entry.startswith(".") else ascii_name


def _bare(entry: str) -> str:
    return entry.lstrip(".")


def host_of(url: str) -> str:
    """The host of ``url``, lower-cased, without a trailing dot, in ASCII form ("" when none)."""
    try:
        host = (urlsplit(url).hostname or "").removesuffix(".")
        return host if host.isascii() else host.encode("idna").decode("ascii")
    except (ValueError, UnicodeError):
        return ""


def covers(entry: str, host: str) -> bool:
    """Whether ``host`` is ``entry`` or a host under it (``.gov`` and ``gov`` alike)."""
    bare = _bare(entry)
    return host == bare or host.endswith("." + bare)


def outside(url: str, scope: DomainScope) -> str | None:
    """Return why ``url`` is outside ``scope`` (naming its host and the setting), or None."""
    if not scope.include and not scope.exclude:
        return None
    host = host_of(url)
    if not host:
        return "outside the domain scope: no host"
    if scope.exclude and (hit := next((e for e in scope.exclude if covers(e, host)), None)):
        return f"{host} is excluded (exclude_domains: {hit})"
    if scope.include and not any(covers(e, host) for e in scope.include):
        return f"{host} is outside include_domains ({', '.join(scope.include)})"
    return None


def describe(scope: DomainScope, since: str = "") -> str:
    """The scope in one phrase for provenance and reasons: ``include_domains=who.int, ...``."""
    parts = []
    if scope.include:
        parts.append("include_domains=" + ",".join(scope.include))
    if scope.exclude:
        parts.append("exclude_domains=" + ",".join(scope.exclude))
    if since:
        parts.append(f"since={since}")
    return "; ".join(parts)


def engine_domains(entries: tuple[str, ...]) -> list[str] | None:
    """Entries as a search API's domain list wants them (no leading dot); None for none."""
    return [_bare(e) for e in entries] or None


def site_query(query: str, scope: DomainScope) -> str:
    """``query`` with ``site:`` / ``-site:`` operators for the scope (DuckDuckGo, SearxNG).

    A scope too long for one query leaves the operators out: the search node's filter keeps
    the scope either way, the operators only spare results that would be dropped.
    """
    ops = [f"-site:{_bare(e)}" for e in scope.exclude]
    if len(scope.include) == 1:
        ops.insert(0, f"site:{_bare(scope.include[0])}")
    elif scope.include:
        ops.insert(0, "(" + " OR ".join(f"site:{_bare(e)}" for e in scope.include) + ")")
    narrowed = " ".join([query, *ops])
    return narrowed if len(narrowed) <= MAX_SITE_QUERY_CHARS else query


def check_since(text: str, today: date) -> str:
    """Return ``since`` as YYYY-MM-DD ("" for no limit).

    Raises:
        ValueError: not a date in that form, or after ``today`` (no page is published later).
    """
    value = text.strip()
    if not value:
        return ""
    if not _ISO_DATE.match(value):
        raise ValueError("not a date as YYYY-MM-DD: give e.g. 2024-01-31, or leave it empty")
    try:
        day = date.fromisoformat(value)
    except ValueError as exc:
        raise ValueError(f"not a real date ({exc}): give e.g. 2024-01-31") from None
    if day > today:
        raise ValueError(
            f"a date in the future (today is {today.isoformat()}): no page is published after "
            "today; give a past date, or leave it empty for no limit"
        )
    return value


def before(published: str, since: str) -> bool:
    """Whether a page ``published`` (YYYY-MM-DD, "" when unknown) is older than ``since``."""
    return bool(since and published and published < since)
