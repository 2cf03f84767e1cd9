"""Where runs are persisted: a SQLite file by default, PostgreSQL by URL, or memory.

The checkpointer is what makes ``deskresearch --resume THREAD_ID`` work: LangGraph saves every
finished step (and every finished branch of a fan-out) as it goes, so a run killed mid-way
resumes with only the work that had not completed.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from platformdirs import user_data_dir

from deskresearch.errors import ConfigError

if TYPE_CHECKING:  # LangGraph is imported when a store is opened: the CLI checks paths first
    from langgraph.checkpoint.base import BaseCheckpointSaver

CHECKPOINTS_ENV = "DESKRESEARCH_CHECKPOINTS"
NO_POSTGRES = "a PostgreSQL checkpoint URL needs the postgres extra: pip install '.[postgres]' in deskresearch's folder"
POSTGRES_SCHEMES = ("postgres://", "postgresql://")


def default_location() -> str:
    """Return ``$DESKRESEARCH_CHECKPOINTS``, else a SQLite file in the user's data directory."""
    env = os.environ.get(CHECKPOINTS_ENV, "").strip()
    return env or str(Path(user_data_dir("deskresearch")) / "checkpoints.sqlite")


def kind_of(location: str) -> str:
    """``memory``, ``postgres`` or ``sqlite`` (a path, or ``sqlite:///path``).

    Raises:
        ConfigError: a URL of any other scheme (it would otherwise become a file of that name).
    """
    if location == "memory":
        return "memory"
    if location.startswith(POSTGRES_SCHEMES):
        return "postgres"
    if "://" in location and not location.startswith("sqlite:///"):  # mysql://, sqlite://x
        raise ConfigError(
            f"the checkpoint store {describe(location)!r} is not a store deskresearch knows: "
            "give a SQLite file (a path, or sqlite:///path), a postgresql:// URL, or memory"
        )
    return "sqlite"


def sqlite_path(location: str) -> Path:
    """The file of a SQLite store."""
    return Path(location.removeprefix("sqlite:///")).expanduser()


def describe(location: str) -> str:
    """Return ``location`` fit to print: a PostgreSQL URL loses its password."""
    if location.startswith(POSTGRES_SCHEMES) and "@" in location:
        scheme, rest = location.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        return f"{scheme}://{creds.split(':', 1)[0]}:***@{host}"
    return location


@asynccontextmanager
async def open_checkpointer(location: str) -> AsyncIterator[BaseCheckpointSaver[str]]:
    """Open the checkpointer at ``location``: a path (SQLite), a postgresql:// URL, or "memory".

    Raises:
        ConfigError: the file cannot be created, or PostgreSQL support is not installed.
    """
    kind = kind_of(location)
    if kind == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
        return
    if kind == "postgres":
        try:
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        except ImportError:
            raise ConfigError(NO_POSTGRES) from None
        async with AsyncPostgresSaver.from_conn_string(location) as saver:
            await saver.setup()  # idempotent: creates or migrates the tables
            yield saver
        return
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path = sqlite_path(location)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"cannot create the checkpoint folder {path.parent}: {exc.strerror}; "
            f"set --checkpoints or {CHECKPOINTS_ENV} to a writable path"
        ) from None
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        yield saver
