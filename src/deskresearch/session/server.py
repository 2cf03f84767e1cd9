"""``ServerGraph``: a session's runs on a LangGraph server, driven through langgraph-sdk.

The server's checkpoints, keys and environment; only what this side chose (a caller's values,
a flag's) is sent, and the server's deployment lock refuses what a caller may not change. Used
by ``deskresearch batch --server`` (runs go on when the batch stops) and by the served ``/mcp``
(a cancelled call interrupts its run; its checkpoints stay).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from langchain_core.runnables import RunnableConfig

from deskresearch.errors import ConfigError, RunFailed, Unreachable, in_words
from deskresearch.services.probe import TIMEOUT_S
from deskresearch.session.engines import Chunk
from deskresearch.session.plan import Plan
from deskresearch.session.settings import PLACES


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

        Only the settings this side chose (a caller's, a flag's, what the summary model's local
        server said of its window) are sent: the server's own
        environment supplies the rest, and its lock refuses what a caller may not change.
        """
        import anyio

        client, tid = self.client(), plan.thread
        await client.threads.create(thread_id=tid, if_exists="do_nothing",
                                    metadata={"source": self.source, "topic": plan.topic})  # fmt: skip
        active = [r for r in await client.runs.list(tid, limit=5)
                  if r["status"] in ("pending", "running")]  # fmt: skip
        chosen = {n: g.value for n, g in plan.settings.items()
                  if g.kind in ("caller", "flag", "config", "server") and n not in PLACES}  # fmt: skip
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
