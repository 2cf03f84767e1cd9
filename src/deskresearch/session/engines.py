"""Where a session's graph runs: the ``Engine`` questions, and ``LocalGraph`` (this process).

An engine answers a few questions for ``session.run.Session``: what a thread has saved, the
stream of a run (progress events, task starts and ends, the state as it grows), and whether it
paused for a review. ``LocalGraph`` opens the checkpoint store and builds the graph once, at
the first run that passed its pre-flight, and every run of the session shares it (its limits,
its cache); it also lists and deletes the store's runs. ``session.server.ServerGraph`` drives
the graph a LangGraph server hosts.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Protocol

from langchain_core.runnables import RunnableConfig

from deskresearch.services.storage.checkpoints import (
    POSTGRES_SCHEMES,
    describe,
    open_checkpointer,
)
from deskresearch.session.plan import Plan
from deskresearch.session.reports import documents, remove
from deskresearch.session.store import OUTPUT_DIR_KEY, RunRow, attach_files, list_runs

Chunk = tuple[str, Any]  # ("custom" | "tasks" | "values", data)


class Engine(Protocol):
    """Runs the graph for a session (see the module's doc)."""

    where: str  # the store, fit to print

    async def close(self) -> None:
        """Let go of the store or the connection."""

    async def saved(self, thread: str) -> dict[str, Any]:
        """The thread's saved state ({} when it has none)."""

    async def paused(self, thread: str) -> list[Any]:
        """What the run asks a reviewer, if it paused for a review ([] otherwise)."""

    def stream(self, plan: Plan, command: Any, config: RunnableConfig) -> AsyncIterator[Chunk]:
        """Run (or continue) the plan's thread; yield what it streams."""


class LocalGraph:
    """The graph in this process, on a checkpoint store (a SQLite file, PostgreSQL, memory).

    Args:
        location: the store (``session.settings`` names where it came from).
        services: keyword arguments of ``build_graph`` (``llm=``, ``search=``, ``limiter=``).
        max_concurrency: graph tasks per step.
    """

    def __init__(
        self, location: str, *, services: Mapping[str, Any] | None = None,
        max_concurrency: int | None = None,
    ) -> None:  # fmt: skip
        self.location = location
        self.where = describe(location)
        self.services = dict(services or {})
        self.max_concurrency = max_concurrency
        self._stack = AsyncExitStack()
        self._graph: Any = None
        self._saver: Any = None
        self._lock = asyncio.Lock()

    @property
    def opened(self) -> bool:
        """Whether the store is open (by a run, or to list the runs)."""
        return self._saver is not None

    def exists(self) -> bool:
        """Whether the store holds anything yet (a SQLite file that is not there holds nothing)."""
        path = self.location.removeprefix("sqlite:///")
        return "://" in path or path == "memory" or Path(path).expanduser().exists()

    async def _open(self) -> Any:
        if self._saver is None:  # the caller holds the lock
            self._saver = await self._stack.enter_async_context(open_checkpointer(self.location))
        return self._saver

    async def checkpointer(self) -> Any:
        """The store, opened at the first call; listing runs needs no graph (nor its imports)."""
        async with self._lock:
            return await self._open()

    async def graph(self) -> Any:
        """The session's graph, on the store (both opened at the first call)."""
        async with self._lock:
            if self._graph is None:
                from deskresearch.graph import MAX_CONCURRENCY, build_graph

                self._graph = build_graph(
                    checkpointer=await self._open(),
                    max_concurrency=self.max_concurrency or MAX_CONCURRENCY,
                    **self.services,
                )
            return self._graph

    def subgraphs(self) -> list[str]:
        """The graph's nodes that are subgraphs (their usage repeats their inner nodes')."""
        return [n.split("|")[-1] for n, _ in self._graph.get_subgraphs(recurse=True)]

    async def close(self) -> None:
        """Close the store."""
        await self._stack.aclose()
        self._graph = self._saver = None

    async def saved(self, thread: str) -> dict[str, Any]:
        """The thread's saved state ({} when it has none; a missing SQLite file is not made)."""
        if not self.exists():
            return {}
        state = await (await self.graph()).aget_state({"configurable": {"thread_id": thread}})
        return dict(state.values)

    async def paused(self, thread: str) -> list[Any]:
        """The review the run waits for, if it paused."""
        graph = await self.graph()
        state = await graph.aget_state({"configurable": {"thread_id": thread}})
        return [i.value for i in state.interrupts]

    async def stream(
        self, plan: Plan, command: Any, config: RunnableConfig
    ) -> AsyncIterator[Chunk]:
        """Stream the run: progress events, tasks, and the top graph's state as it grows."""
        graph = await self.graph()
        async for namespace, mode, chunk in graph.astream(
            command,
            config,
            context=plan.context,
            stream_mode=["custom", "tasks", "values"],
            subgraphs=True,
            durability="sync",  # a step is on disk before the next starts: resumable
        ):
            if isinstance(chunk, dict) and (mode != "values" or not namespace):
                yield mode, chunk

    async def runs(self, limit: int, folder: Path | None = None) -> list[RunRow]:
        """The runs of the store, newest first, with the files each wrote (its folder, or this)."""
        if not self.exists():
            return []
        rows = await list_runs(await self.checkpointer(), limit)
        attach_files(rows, folder)
        return rows

    async def folder(self, thread: str) -> str:
        """Where the run recorded its files go (its -o), "" when it did not say."""
        saved = await (await self.checkpointer()).aget_tuple(
            {"configurable": {"thread_id": thread}}
        )
        return str(((saved.metadata if saved else None) or {}).get(OUTPUT_DIR_KEY) or "")

    async def files(self, thread: str, folder: Path | None = None) -> list[str]:
        """The files the run wrote, found by thread id in ``folder`` and in the one it recorded."""
        folders = {folder} if folder else set()
        folders |= {Path(f) for f in [await self.folder(thread)] if f}
        return sorted({f for place in folders for f in documents(place).get(thread, [])})

    async def delete(self, thread: str, folder: Path | None = None) -> list[str]:
        """Delete the thread, every checkpoint of it, and its files (``files``); those removed."""
        files = await self.files(thread, folder)
        await (await self.checkpointer()).adelete_thread(thread)
        return remove(files)

    def resumable(self) -> bool:
        """Whether a run here can be continued later (not in memory)."""
        return self.location != "memory"

    def shared(self) -> bool:
        """Whether other machines reach the store (a Ray batch needs it)."""
        return self.location.startswith(POSTGRES_SCHEMES)
