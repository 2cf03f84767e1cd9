"""Where a session's graph runs: here on a checkpoint store, or on a LangGraph server.

Both answer the same few questions for ``session.run.Session``: what a thread has saved, the
stream of a run (progress events, task starts and ends, the state as it grows), whether it
paused for a review, and how to continue it by hand. ``LocalGraph`` opens the store and builds
the graph once, at the first run that passed its pre-flight, and every run of the session shares
it (its limits, its cache). ``ServerGraph`` drives the graph a LangGraph server hosts through
langgraph-sdk: the server's checkpoints, keys and environment; only what this side chose is sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Protocol

from langchain_core.runnables import RunnableConfig

from deskresearch.errors import ConfigError, RunFailed, Unreachable, in_words
from deskresearch.services.preflight import TIMEOUT_S
from deskresearch.services.storage.checkpoints import (
    POSTGRES_SCHEMES,
    describe,
    open_checkpointer,
)
from deskresearch.session.plan import Plan
from deskresearch.session.settings import PLACES
from deskresearch.session.store import OUTPUT_DIR_KEY, RunRow, list_runs

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
        """Whether the store is open (the graph built on it)."""
        return self._graph is not None

    def exists(self) -> bool:
        """Whether the store holds anything yet (a SQLite file that is not there holds nothing)."""
        path = self.location.removeprefix("sqlite:///")
        return "://" in path or path == "memory" or Path(path).expanduser().exists()

    async def graph(self) -> Any:
        """The session's graph, on the store (both opened at the first call)."""
        async with self._lock:
            if self._graph is None:
                from deskresearch.graph import MAX_CONCURRENCY, build_graph

                self._saver = await self._stack.enter_async_context(
                    open_checkpointer(self.location)
                )
                self._graph = build_graph(
                    checkpointer=self._saver,
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
        self._graph = None

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

    async def runs(self, limit: int) -> list[RunRow]:
        """The runs of the store, newest first."""
        if not self.exists():
            return []
        await self.graph()
        return await list_runs(self._saver, limit)

    async def folder(self, thread: str) -> str:
        """Where the run recorded its files go (its -o), "" when it did not say."""
        state = await (await self.graph()).aget_state({"configurable": {"thread_id": thread}})
        return str((state.metadata or {}).get(OUTPUT_DIR_KEY) or "")

    async def delete(self, thread: str) -> None:
        """Delete the thread and every checkpoint of it."""
        await self.graph()
        await self._saver.adelete_thread(thread)

    def resumable(self) -> bool:
        """Whether a run here can be continued later (not in memory)."""
        return self.location != "memory"

    def shared(self) -> bool:
        """Whether other machines reach the store (a Ray batch needs it)."""
        return self.location.startswith(POSTGRES_SCHEMES)


class ServerGraph:
    """The graph a LangGraph server hosts, driven through langgraph-sdk.

    Args:
        url: the server (None: the server this code runs in, through its in-process client).
        assistant: the graph or assistant id.
        detach: a run goes on on the server when this side stops following it (a batch
            killed half-way); otherwise a cancelled call interrupts it (its checkpoints stay).
        source: recorded in each thread's metadata (who started it).
    """

    def __init__(
        self, url: str | None, *, assistant: str = "researcher", detach: bool = False,
        source: str = "deskresearch",
    ) -> None:  # fmt: skip
        self.url, self.assistant, self.detach, self.source = url, assistant, detach, source
        self.where = f"the server {url}" if url else "this server"
        self._client: Any = None

    def client(self) -> Any:
        """The langgraph-sdk client (made at the first call).

        Raises:
            ConfigError: langgraph-sdk is not installed.
        """
        if self._client is None:
            try:
                from langgraph_sdk import get_client
            except ImportError:
                raise ConfigError("a LangGraph server needs langgraph-sdk: pip install "
                                  "langgraph-sdk") from None  # fmt: skip
            # No read timeout: a report can take longer to write than a default allows.
            self._client = get_client(url=self.url, timeout=(5.0, None, 300.0, 5.0))
        return self._client

    async def check(self) -> None:
        """The pre-flight of a server: it answers (``GET /ok``, one quick request, no retries).

        Raises:
            Unreachable: nothing answers at the URL.
        """
        import httpx

        try:
            async with httpx.AsyncClient(timeout=TIMEOUT_S) as client:
                await client.get(f"{(self.url or '').rstrip('/')}/ok")
        except httpx.TransportError as exc:
            raise Unreachable(
                f"no LangGraph server answers at {self.url} ({in_words(exc, TIMEOUT_S)}). Start one "
                "(langgraph dev), or fix the URL (it comes from the flag --server)"
            ) from None

    async def close(self) -> None:
        """Close the client."""
        if self._client is not None and self.url is not None:
            await self._client.aclose()
        self._client = None

    async def saved(self, thread: str) -> dict[str, Any]:
        """The thread's state on the server ({} when it has none or does not exist)."""
        import httpx

        try:
            state = await self.client().threads.get_state(thread)
        except httpx.HTTPStatusError:  # an unknown or malformed id: 404 / 422
            return {}
        values = state.get("values") if isinstance(state, dict) else None
        return dict(values) if isinstance(values, dict) else {}

    async def paused(self, thread: str) -> list[Any]:
        """Whether the server's run waits (its state has a next step but no result)."""
        from deskresearch.report.outcome import finished

        state = await self.client().threads.get_state(thread)
        values = state.get("values") or {}
        waiting = state.get("next") and not finished(values if isinstance(values, dict) else {})
        return [state.get("tasks")] if waiting else []

    async def stream(
        self, plan: Plan, command: Any, config: RunnableConfig
    ) -> AsyncIterator[Chunk]:
        """Start the run on the server (or join the one going there); yield its progress events.

        Only the settings this side chose (a caller's, a flag's) are sent: the server's own
        environment supplies the rest, and its lock refuses what a caller may not change.
        """
        import anyio

        client, tid = self.client(), plan.thread
        await client.threads.create(thread_id=tid, if_exists="do_nothing",
                                    metadata={"source": self.source, "topic": plan.topic})  # fmt: skip
        active = [r for r in await client.runs.list(tid, limit=5)
                  if r["status"] in ("pending", "running")]  # fmt: skip
        chosen = {n: g.value for n, g in plan.settings.items()
                  if g.kind in ("caller", "flag", "config") and n not in PLACES}  # fmt: skip
        if active:  # this side died, the server's run did not: follow it again
            parts = client.runs.join_stream(tid, active[0]["run_id"])
        else:
            parts = client.runs.stream(
                tid, self.assistant, input=command,
                context={**chosen, "review_plan": plan.context.review_plan},
                stream_mode=["custom"], stream_subgraphs=True, multitask_strategy="reject",
                **({"on_disconnect": "continue"} if self.detach else {}),
            )  # fmt: skip
        run_id = active[0]["run_id"] if active else ""
        try:
            async for part in parts:
                kind = part.event.split("|")[0]
                if kind == "metadata" and isinstance(part.data, dict):
                    run_id = str(part.data.get("run_id") or run_id)
                elif kind == "custom" and isinstance(part.data, dict):
                    yield "custom", part.data
                elif kind == "error":
                    data = part.data if isinstance(part.data, dict) else {"message": part.data}
                    raise RunFailed(str(data.get("message") or data.get("error") or data))
        except anyio.get_cancelled_exc_class():
            if run_id and not self.detach:  # stop the server's run too; its checkpoints stay
                with anyio.CancelScope(shield=True):
                    await client.runs.cancel(tid, run_id, action="interrupt")
            raise

    def resumable(self) -> bool:
        """A server's runs are always checkpointed."""
        return True
