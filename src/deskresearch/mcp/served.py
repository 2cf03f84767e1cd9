"""The research tool served at ``/mcp`` by the LangGraph server (``langgraph.json``'s ``http.app``).

langgraph-api's own ``/mcp`` route cannot describe the tool, shape its result, report progress
or cancel a run (it answers plain JSON with ``repr()`` of the output), so ``langgraph.json``
turns it off (``"disable_mcp": true``) and mounts ``app``, the official SDK's streamable-HTTP
app around the same tool ``deskresearch mcp`` serves (``mcp.tool``). A call starts an ordinary
run of the ``researcher`` graph on the server that hosts it, through langgraph-sdk's in-process
client: the server's checkpointer and queue, its locked deployment settings (the served graph
refuses a locked setting; the call can only choose language and max_rounds), a thread that
stays (its state is the full result; ``threads.get_state(thread_id)``), and a run a cancelled
call interrupts (its checkpoint stays: a run on the same thread with no input resumes it).

Sessions live in this process (streamable HTTP, stateful): behind several replicas, route a
session to one (sticky sessions). DNS-rebinding protection admits loopback Host headers only;
a deployment reached under its own name lists it in ``DESKRESEARCH_MCP_ALLOWED_HOSTS``
(comma-separated ``host`` or ``host:port``, ``*`` for any port).
"""

from __future__ import annotations

import os
from typing import Any

import anyio
import httpx
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import ValidationError

from deskresearch.config.context import Context
from deskresearch.config.deployment import Deployment, served_context
from deskresearch.errors import ConfigError
from deskresearch.mcp.tool import Outcome, Progress, Request, RunFailed, build_server
from deskresearch.report.outcome import check, finished

ASSISTANT = "researcher"  # the graph id in langgraph.json
ALLOWED_HOSTS_ENV = "DESKRESEARCH_MCP_ALLOWED_HOSTS"
LOOPBACK = ["127.0.0.1:*", "localhost:*", "[::1]:*"]


class ServerRunner:
    """Runs research calls as runs of the served graph on the hosting LangGraph server."""

    def __init__(self) -> None:
        self._client: Any = None

    def client(self) -> Any:
        """The in-process langgraph-sdk client (made at the first call: the server is up)."""
        if self._client is None:
            from langgraph_sdk import get_client

            # No read timeout: a report can take longer to write than a default allows.
            self._client = get_client(url=None, timeout=(5.0, None, 300.0, 5.0))
        return self._client

    def places(self) -> tuple[str | None, str | None]:
        """None, None: the server's checkpoints are its own, and it writes no report files."""
        return None, None

    def settings(self, request: Request) -> Context:
        """The deployment's settings with the call's own, checked as the served graph checks.

        Raises:
            ConfigError: a setting is invalid, or the call asks for a locked one.
        """
        try:
            return served_context(Deployment.from_env())(**request.overrides())
        except ValidationError as exc:
            problems = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
            raise ConfigError(problems) from None

    async def run(self, request: Request, settings: Context, progress: Progress) -> Outcome:
        """Run on a new thread of the server; a cancelled call interrupts the run."""
        client = self.client()
        thread = await client.threads.create(metadata={"source": "mcp", "topic": request.topic})
        tid = str(thread["thread_id"])
        await progress({"stage": "research", "event": "started", "thread_id": tid})
        run_id = ""
        try:
            async for part in client.runs.stream(
                tid,
                ASSISTANT,
                input=request.graph_input(),
                context={**request.overrides(), "review_plan": False},
                stream_mode=["custom"],
                stream_subgraphs=True,
                multitask_strategy="reject",
            ):
                kind = part.event.split("|")[0]
                if kind == "metadata" and isinstance(part.data, dict):
                    run_id = str(part.data.get("run_id") or "")
                elif kind == "custom" and isinstance(part.data, dict):
                    await progress(part.data)
                elif kind == "error":
                    data = part.data if isinstance(part.data, dict) else {}
                    raise RunFailed(str(data.get("message") or data.get("error") or part.data))
        except anyio.get_cancelled_exc_class():
            if run_id:  # stop the server's run too; its checkpoints stay (resumable)
                with anyio.CancelScope(shield=True):
                    await client.runs.cancel(tid, run_id, action="interrupt")
            raise
        values = await self._values(tid)
        check(values)
        return Outcome(
            values, tid, f"the thread's state on this server: threads.get_state('{tid}')"
        )

    async def _values(self, thread_id: str) -> dict[str, Any]:
        state = await self.client().threads.get_state(thread_id)
        values = state.get("values") if isinstance(state, dict) else None
        if not isinstance(values, dict) or not finished(values):
            raise RunFailed(f"no finished run on thread {thread_id!r} on this server")
        return values

    async def report(self, thread_id: str) -> str:
        """The whole report of a finished run on this server."""
        try:
            return str((await self._values(thread_id))["report"])
        except httpx.HTTPStatusError:  # an unknown or malformed id: 404 / 422
            raise RunFailed(f"no thread {thread_id!r} on this server") from None


def _security() -> TransportSecuritySettings:
    extra = [h.strip() for h in os.environ.get(ALLOWED_HOSTS_ENV, "").split(",") if h.strip()]
    origins = [f"http://{h}" for h in LOOPBACK] + [f"https://{h}" for h in extra]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=LOOPBACK + extra,
        allowed_origins=origins,
    )


app = build_server(ServerRunner()).streamable_http_app(
    streamable_http_path="/mcp", transport_security=_security()
)
"""The Starlette app ``langgraph.json`` mounts (``"http": {"app": "deskresearch.mcp.served:app"}``)."""
