"""Pre-flight: what can go wrong before the first paid call, found in milliseconds, found first.

Every entry point (the CLI, ``deskresearch batch``, ``deskresearch mcp``) runs it before anything
is sent or saved. Two parts:

- ``check_local``, no network and no file left behind: the output folder, the checkpoint store's
  file, the cache file, the model endpoint's URL and key, the search settings. The CLI runs it
  before its head start sends the first model request.
- ``check_network``, one quick request each, no retries: the model endpoints answer (``GET
  /models``: free on every OpenAI-compatible server; a rejected key shows here), a SearXNG or
  PostgreSQL server answers. A refused connection fails in milliseconds instead of after the
  run's retries, and before a checkpoint exists.

Each failure is one line: what is wrong, where the value came from (``origins``: a flag, the
environment, a config file), and what to do. Light on purpose: httpx and psycopg are imported
only when a network check needs them.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from deskresearch.config.context import Context
from deskresearch.config.providers import OPENAI_DEFAULT_URL, endpoint_for, split_model
from deskresearch.errors import NO_ENDPOINT, ConfigError, Unreachable
from deskresearch.safety.masking import mask_secrets
from deskresearch.services.search.checks import check_chain
from deskresearch.services.storage.checkpoints import NO_POSTGRES, POSTGRES_SCHEMES

TIMEOUT_S = 3.0  # connect and answer: a server that needs longer is down for a user waiting
_SQLITE_HEADER = b"SQLite format 3\x00"


def _from(origins: Mapping[str, str], name: str, default: str) -> str:
    return origins.get(name) or default


def writable_folder(folder: Path, what: str, fix: str) -> None:
    """Raise ConfigError unless ``folder`` is (or can become) a folder we can write files in.

    Probed for real (a temporary folder made and removed in the nearest existing one): as root,
    permission bits say yes where ``/proc`` or a read-only mount says no.
    """
    folder = folder.expanduser()
    existing = folder
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError(f"{what} {folder}: {existing} is not a folder. {fix}")
    try:
        shutil.rmtree(tempfile.mkdtemp(prefix=".deskresearch-check-", dir=existing))
    except OSError as exc:
        raise ConfigError(f"{what} {folder} cannot be written ({exc.strerror}). {fix}") from None


def sqlite_file(path: Path, what: str, fix: str) -> None:
    """Raise ConfigError unless ``path`` can be a SQLite file we write (an empty or SQLite one)."""
    path = path.expanduser()
    if path.exists():
        if not path.is_file():
            raise ConfigError(f"{what} {path} is not a file. {fix}")
        try:
            with path.open("rb") as f:
                head = f.read(len(_SQLITE_HEADER))
        except OSError as exc:
            raise ConfigError(f"{what} {path} cannot be read ({exc.strerror}). {fix}") from None
        if head and head != _SQLITE_HEADER:
            raise ConfigError(f"{what} {path} is not a SQLite database. {fix}")
        try:  # a write lock taken and given back: the file (and its folder) accept writes
            db = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=TIMEOUT_S)
            try:
                db.execute("BEGIN IMMEDIATE")
                db.rollback()
            finally:
                db.close()
        except sqlite3.Error as exc:
            raise ConfigError(f"{what} {path} cannot be written ({exc}). {fix}") from None
    writable_folder(path.parent, f"the folder of {what}", fix)


def endpoints(ctx: Context, environ: Mapping[str, str]) -> dict[str, tuple[str, str | None]]:
    """The model endpoints the run calls: base URL → (the setting that chose it, API key)."""
    found: dict[str, tuple[str, str | None]] = {}
    for role in ("summary_model", "report_model", "judge_model"):
        _, prefixed = split_model(getattr(ctx, role))
        chosen = ctx.base_url or prefixed
        base, key = endpoint_for(chosen, environ)
        if ctx.base_url:
            setting = "base_url"
        elif prefixed:
            setting = role
        elif environ.get("OPENAI_BASE_URL"):
            setting = "OPENAI_BASE_URL"
        elif environ.get("OPENAI_API_BASE"):
            setting = "OPENAI_API_BASE"
        else:
            setting = ""
        found.setdefault(base or OPENAI_DEFAULT_URL, (setting, key))
    return found


def _origin(setting: str, origins: Mapping[str, str]) -> str:
    if setting in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
        return f"{setting} in the environment"
    if setting:
        return _from(origins, setting, f"the setting {setting}")
    return "the default (OpenAI)"


def check_local(
    ctx: Context,
    *,
    output_dir: str | None,
    checkpoints: str | None,
    origins: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
    providers: bool = True,
) -> None:
    """Check what needs no network: folders, files, URLs, keys, search settings.

    ``output_dir``/``checkpoints``: None when the entry point writes no files / keeps no
    checkpoints. ``origins``: where each setting came from (field or option name → text).
    ``providers``: False where the model and search settings are another machine's (the nodes
    of a Ray cluster have their own keys).

    Raises:
        ConfigError: the first problem found, in one line with its origin and its fix.
    """
    origins = origins or {}
    env = os.environ if environ is None else environ
    if output_dir is not None:
        where = _from(origins, "output_dir", "the default")
        writable_folder(Path(output_dir), "the output folder",
                        f"It comes from {where}: pick a folder you can write with -o DIR.")  # fmt: skip
    if checkpoints and checkpoints != "memory" and not checkpoints.startswith(POSTGRES_SCHEMES):
        where = _from(origins, "checkpoints", "the default")
        fix = (f"It comes from {where}: point --checkpoints (or DESKRESEARCH_CHECKPOINTS) at a "
               "writable file, or use --checkpoints memory (no resume).")  # fmt: skip
        sqlite_file(Path(checkpoints.removeprefix("sqlite:///")), "the checkpoint store", fix)
    if not providers:
        return
    if (cache := ctx.cache_policy()) is not None:
        where = _from(origins, "cache_path", "the default")
        fix = f"It comes from {where}: point --cache-path elsewhere, or run with --no-cache."
        sqlite_file(Path(cache.path), "the cache file", fix)
    for base, (setting, key) in endpoints(ctx, env).items():
        parts = urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"the model endpoint {mask_secrets(base)!r} (from {_origin(setting, origins)}) is "
                "not an http(s) URL: write it with its scheme, e.g. http://localhost:11434/v1"
            )
        if base == OPENAI_DEFAULT_URL and not key:
            raise ConfigError(NO_ENDPOINT)
    check_chain(ctx.search_settings())


async def _answers(url: str, headers: Mapping[str, str]) -> int:
    """GET ``url`` once: its HTTP status (any answer means the server is there)."""
    import httpx

    from deskresearch.services.web.tls import tls_context

    async with httpx.AsyncClient(timeout=TIMEOUT_S, verify=tls_context()) as client:
        response = await client.get(url, headers=dict(headers))
        return response.status_code


async def _model_endpoint(
    base: str, setting: str, key: str | None, origins: Mapping[str, str]
) -> None:
    import httpx

    shown = mask_secrets(base)
    where = _origin(setting, origins)
    try:
        status = await _answers(base.rstrip("/") + "/models",
                                {"Authorization": f"Bearer {key or 'not-needed'}"})  # fmt: skip
    except httpx.TransportError as exc:
        raise Unreachable(
            f"the model endpoint {shown} does not answer ({_why(exc)}). Start the server, or fix "
            f"the URL (it comes from {where})"
        ) from None
    if status in (401, 403):
        raise ConfigError(
            f"the model endpoint {shown} rejected the API key (HTTP {status}): check "
            "OPENAI_API_KEY for that server"
        )


async def _searxng(url: str, origins: Mapping[str, str]) -> None:
    import httpx

    try:
        await _answers(url.rstrip("/") + "/", {})
    except httpx.TransportError as exc:
        where = _from(origins, "searxng_url", "SEARXNG_URL")
        raise Unreachable(
            f"the SearXNG server {mask_secrets(url)} does not answer ({_why(exc)}). Start it, "
            f"or fix the URL (it comes from {where})"
        ) from None


async def _postgres(url: str, origins: Mapping[str, str]) -> None:
    try:
        import psycopg
    except ImportError:
        raise ConfigError(NO_POSTGRES) from None
    try:
        conn = await psycopg.AsyncConnection.connect(url, connect_timeout=int(TIMEOUT_S))
        await conn.close()
    except psycopg.Error as exc:
        where = _from(origins, "checkpoints", "DESKRESEARCH_CHECKPOINTS")
        first = " ".join(str(exc).split()).split(": ", 1)[-1][:200]
        raise Unreachable(
            f"the checkpoint database {mask_secrets(url)} does not answer ({first}). Start it, "
            f"fix the URL (it comes from {where}), or use a SQLite file"
        ) from None


def _why(exc: BaseException) -> str:
    """A refused or timed-out connection in words (httpx says "All connection attempts failed")."""
    text = " ".join(str(exc).split())
    name = type(exc).__name__
    if (
        "refused" in text.lower()
        or name == "ConnectError"
        or isinstance(exc, ConnectionRefusedError)
    ):
        return "nothing accepts connections there"
    if "Timeout" in name or isinstance(exc, TimeoutError):
        return f"no answer within {TIMEOUT_S:.0f} s"
    return text[:160] or name


async def check_network(
    ctx: Context,
    *,
    checkpoints: str | None,
    origins: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
    providers: bool = True,
) -> None:
    """Check that the servers the run needs answer: one quick request each, at the same time.

    ``providers``: False to check only the checkpoint database (see check_local).

    Raises:
        Unreachable: a server does not answer (the first one found).
        ConfigError: a server answered that the key is wrong.
    """
    origins = origins or {}
    env = os.environ if environ is None else environ
    checks = [_model_endpoint(base, setting, key, origins)
              for base, (setting, key) in endpoints(ctx, env).items()] if providers else []  # fmt: skip
    settings = ctx.search_settings()
    if providers and settings.backends == ("searxng",):  # a chain falls back by itself
        checks.append(_searxng(settings.searxng_url, origins))
    if checkpoints and checkpoints.startswith(POSTGRES_SCHEMES):
        checks.append(_postgres(checkpoints, origins))
    results = await asyncio.gather(*checks, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result


def check_ray_address(address: str) -> None:
    """Raise Unreachable unless something listens at a Ray address (``host:port``, ``ray://``).

    ``auto`` and ``local`` are Ray's own to find. Without this, ``ray.init`` on an address where
    nothing listens retries for minutes before it gives up.
    """
    import socket

    if address in ("", "auto", "local"):
        return
    target = urlsplit(address if "://" in address else f"ray://{address}")
    host, port = target.hostname, target.port or (10001 if target.scheme == "ray" else 6379)
    if not host:
        raise ConfigError(f"--ray {address!r} is not an address: give host:port, e.g. head:6379")
    try:
        socket.create_connection((host, port), timeout=TIMEOUT_S).close()
    except OSError as exc:
        raise Unreachable(
            f"no Ray cluster answers at {host}:{port} ({_why(exc)}). Start one with "
            "`ray start --head`, or give its address with --ray host:6379"
        ) from None
