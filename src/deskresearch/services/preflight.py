"""Pre-flight: what can go wrong before the first paid call, found in milliseconds, found first.

Every entry point runs it (through the session, deskresearch.session.plan) before anything is
sent or saved. Two parts:

- ``check_local`` (here), no network and no file left behind: the output folder, the checkpoint
  store, the cache file, the model endpoints' URLs and keys, the search settings, the worker
  count. The CLI runs it before its head start sends the first model request.
- ``check_network`` (services.servers), one quick request to each server the run needs.

Each failure is one line: what is wrong, where the value came from (``origins``: a flag, the
environment, a config file, a caller), and what to do.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from deskresearch.config.context import Context
from deskresearch.config.providers import OPENAI_DEFAULT_URL, endpoint_for, split_model
from deskresearch.errors import NO_ENDPOINT, ConfigError
from deskresearch.safety.masking import mask_secrets
from deskresearch.services.probe import TIMEOUT_S
from deskresearch.services.search.checks import check_chain
from deskresearch.services.storage.checkpoints import kind_of, sqlite_path
from deskresearch.services.workers import pool_size
from deskresearch.text.clean import known_language

_SQLITE_HEADER = b"SQLite format 3\x00"


def where_from(origins: Mapping[str, str], name: str, default: str) -> str:
    """Where setting ``name`` came from (``default`` when nobody said)."""
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


def run_models(ctx: Context) -> list[tuple[str, str]]:
    """The models a run calls, as (role, setting): the judge's only when citations are checked.

    An empty judge_model is the summary model (``Context.judge_spec``), on its endpoint.
    """
    roles = [("summary_model", ctx.summary_model), ("report_model", ctx.report_model)]
    if ctx.check_citations:
        roles.append(("judge_model", ctx.judge_model or ctx.summary_model))
    return roles


def endpoints(ctx: Context, environ: Mapping[str, str]) -> dict[str, tuple[str, str | None]]:
    """The model endpoints the run calls: base URL → (the setting that chose it, API key)."""
    found: dict[str, tuple[str, str | None]] = {}
    for role, setting in run_models(ctx):
        _, prefixed = split_model(setting)
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


def models_on(ctx: Context, base: str, environ: Mapping[str, str]) -> dict[str, str]:
    """The models the run asks ``base`` for, the summary model's first: name → its setting."""
    found: dict[str, str] = {}
    for role, setting in run_models(ctx):
        model, prefixed = split_model(setting)
        if (endpoint_for(ctx.base_url or prefixed, environ)[0] or OPENAI_DEFAULT_URL) == base:
            found.setdefault(model, role)
    return found


def origin_of(setting: str, origins: Mapping[str, str]) -> str:
    """Where the setting that chose a model endpoint came from (a variable, a flag, ...)."""
    if setting in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
        return f"{setting} in the environment"
    if setting:
        return where_from(origins, setting, f"the setting {setting}")
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
    pool_size(env)  # the extraction workers: started in the run, checked here
    known_language(ctx.language, where_from(origins, "language", "the default"))
    if output_dir is not None:
        where = where_from(origins, "output_dir", "the default")
        if not output_dir.strip():
            raise ConfigError(
                f"the output folder (from {where}) is empty: give a folder, e.g. -o reports"
            )
        writable_folder(Path(output_dir), "the output folder",
                        f"It comes from {where}: pick a folder you can write with -o DIR.")  # fmt: skip
    if checkpoints:
        check_store(checkpoints, origins=origins)
    if not providers:
        return
    if (cache := ctx.cache_policy()) is not None:
        where = where_from(origins, "cache_path", "the default")
        fix = f"It comes from {where}: point --cache-path elsewhere, or run with --no-cache."
        sqlite_file(Path(cache.path), "the cache file", fix)
    for base, (setting, key) in endpoints(ctx, env).items():
        parts = urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"the model endpoint {mask_secrets(base)!r} (from {origin_of(setting, origins)}) is "
                "not an http(s) URL: write it with its scheme, e.g. http://localhost:11434/v1"
            )
        if base == OPENAI_DEFAULT_URL and not key:
            raise ConfigError(no_key_for(ctx, env))
    check_chain(ctx.search_settings())


def no_key_for(ctx: Context, environ: Mapping[str, str]) -> str:
    """What to say when models go to OpenAI's API without a key.

    When another of the run's models is on a server of its own (``--summary-model
    lmstudio:qwen`` alone), the others default to OpenAI: that is named, with the way to put
    them on that server too, rather than a bare "no endpoint configured".
    """
    # An empty judge_model follows the summary model: moving that one moves both.
    models = {r: m for r, m in run_models(ctx) if r != "judge_model" or ctx.judge_model}
    where = {r: endpoint_for(ctx.base_url or split_model(m)[1], environ)[0]
             for r, m in models.items()}  # fmt: skip
    on_openai = [r for r in models if where[r] in (None, OPENAI_DEFAULT_URL)]
    elsewhere = [r for r in models if r not in on_openai]
    if not elsewhere or not on_openai:
        return NO_ENDPOINT
    other = models[elsewhere[0]]
    named = " and ".join(
        f"the {r.replace('_', ' ')} {split_model(models[r])[0]}" for r in on_openai
    )
    many = len(on_openai) > 1
    if any(models[r].lower().startswith("openai:") for r in on_openai):  # asked for: keep it
        return f"{named} {'go' if many else 'goes'} to OpenAI's API, which needs OPENAI_API_KEY: set it"
    fixes = " ".join(f"--{r.replace('_', '-')} {other}" for r in on_openai)
    return (
        f"{named} {'go' if many else 'goes'} to OpenAI's API (the default), which needs "
        f"OPENAI_API_KEY, while the {elsewhere[0].replace('_', ' ')} is {other}: set OPENAI_API_KEY, "
        f"or put {'them' if many else 'it'} on that server too ({fixes})"
    )


def check_store(location: str, *, origins: Mapping[str, str] | None = None) -> None:
    """Raise ConfigError unless ``location`` is a store we can open.

    A known kind: a SQLite file we can write (or create), a PostgreSQL URL (its server is asked
    by ``check_network``), or memory.
    """
    where = where_from(origins or {}, "checkpoints", "the default")
    if not location.strip():
        raise ConfigError(f"the checkpoint store (from {where}) is empty: give a SQLite file, "
                          "a postgresql:// URL, or memory")  # fmt: skip
    try:
        kind = kind_of(location)
    except ConfigError as exc:
        raise ConfigError(f"{exc} (it comes from {where})") from None
    if kind == "sqlite":
        fix = (f"It comes from {where}: point --checkpoints (or DESKRESEARCH_CHECKPOINTS) at a "
               "writable file, or use --checkpoints memory (no resume).")  # fmt: skip
        sqlite_file(sqlite_path(location), "the checkpoint store", fix)
