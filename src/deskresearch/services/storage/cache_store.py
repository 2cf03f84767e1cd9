"""The persistent cache's storage: one SQLite file, one table of (kind, key) → bytes + metadata.

SQLite because it is one file, needs no server, is safe for several processes at once (WAL) and
ships with Python. Every call runs in a worker thread so a large page never blocks the event
loop. A broken cache never breaks a run: after the file opened once (``open`` raises a
ConfigError naming the fix when it cannot), read and write failures are logged and count as
misses.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from deskresearch.errors import ConfigError
from deskresearch.records import ModelSpec

Kind = Literal["search", "page", "answer"]
MAX_AGE_S = 30 * 24 * 3600  # entries unused this long are deleted when the file is opened

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    value BLOB NOT NULL,
    meta TEXT NOT NULL,
    stored REAL NOT NULL,
    PRIMARY KEY (kind, key)
)
"""
log = logging.getLogger("deskresearch.cache")


def digest(*parts: Any) -> str:
    """A stable key for JSON-able ``parts``."""
    blob = json.dumps(parts, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def answer_key(
    endpoint: str, spec: ModelSpec, prompt: Sequence[tuple[str, Any]], schema: Any
) -> str:
    """Key a model call by what decides its answer (not by stage, timeouts or limits).

    ``endpoint`` is where the call goes, as the calling service resolves it (``endpoint_of``);
    ``prompt`` is the messages as (type, content) pairs: ("system", ...), ("human", ...).
    """
    return digest("answer", endpoint, spec.model, spec.method, schema, list(prompt))


def stored(path: str, kind: Kind, key: str) -> bool:
    """Whether the cache file at ``path`` holds a live entry; a missing file is not created.

    For a look before the cache is opened (the CLI's head start); any problem reads as absent.
    A read-only connection to an existing file may leave its ``-wal``/``-shm`` files beside it
    (with the file's own 0600 mode).
    """
    if not Path(path).is_file():
        return False
    try:
        db = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, timeout=1)
        try:
            row = db.execute(
                "SELECT stored FROM entries WHERE kind = ? AND key = ?", (kind, key)
            ).fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return False
    return row is not None and float(row[0]) >= time.time() - MAX_AGE_S


@dataclass(frozen=True)
class Entry:
    """One cached value, what was kept with it, and when it was stored (Unix time)."""

    value: bytes
    meta: dict[str, Any]
    stored: float


def _private_file(path: Path) -> None:
    """Create ``path`` readable by its owner only (0600, folder 0700); tighten an existing one.

    The cache holds pages, searches and answers a run paid for: nobody else on the machine
    should read them. SQLite gives its -wal and -shm files the database file's mode.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
    if path.stat().st_mode & 0o077:
        path.chmod(0o600)


class CacheStore:
    """Opens each cache file once and serialises access to it (one connection per file)."""

    def __init__(self) -> None:
        self._dbs: dict[str, sqlite3.Connection] = {}
        self._lock = threading.Lock()

    def open(self, path: str) -> sqlite3.Connection:
        """Open (creating, pruning) the cache file at ``path``.

        Raises:
            ConfigError: the file cannot be created or is not a SQLite database.
        """
        with self._lock:
            if path in self._dbs:
                return self._dbs[path]
            try:
                _private_file(Path(path))
                db = sqlite3.connect(path, timeout=10, check_same_thread=False)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(_SCHEMA)
                db.execute("DELETE FROM entries WHERE stored < ?", (time.time() - MAX_AGE_S,))
                db.commit()
            except (OSError, sqlite3.Error) as exc:
                raise ConfigError(
                    f"the cache file {path} cannot be used ({exc}): delete it, point "
                    "--cache-path elsewhere, or run with --no-cache"
                ) from exc
            self._dbs[path] = db
            return db

    async def get(self, path: str, kind: Kind, key: str) -> Entry | None:
        """Return the entry stored under (``kind``, ``key``), or None."""
        row = await self._run(
            path,
            "SELECT value, meta, stored FROM entries WHERE kind = ? AND key = ?",
            (kind, key),
        )
        if row is None:
            return None
        value, meta, stored = row
        return Entry(bytes(value), json.loads(meta), float(stored))

    async def put(
        self, path: str, kind: Kind, key: str, value: bytes, meta: dict[str, Any]
    ) -> None:
        """Store ``value`` under (``kind``, ``key``), replacing what was there."""
        await self._run(
            path,
            "INSERT OR REPLACE INTO entries (kind, key, value, meta, stored) VALUES (?, ?, ?, ?, ?)",
            (kind, key, value, json.dumps(meta), time.time()),
        )

    async def touch(self, path: str, kind: Kind, key: str) -> None:
        """Mark an entry as fresh again (a page the server said was not modified)."""
        await self._run(
            path,
            "UPDATE entries SET stored = ? WHERE kind = ? AND key = ?",
            (time.time(), kind, key),
        )

    async def _run(self, path: str, sql: str, args: tuple[Any, ...]) -> Any:
        return await asyncio.to_thread(self._execute, path, sql, args)

    def _execute(self, path: str, sql: str, args: tuple[Any, ...]) -> Any:
        try:
            db = self.open(path)
            with self._lock:
                row = db.execute(sql, args).fetchone()
                db.commit()
            return row
        except (ConfigError, sqlite3.Error) as exc:
            log.warning("cache %s: %s (treated as a miss)", path, exc)
            return None
