"""The research tool served at ``/mcp`` by the LangGraph server (``langgraph.json``'s ``http.app``).

langgraph-api's own ``/mcp`` route cannot describe the tool, shape its result, report progress
or cancel a run (it answers plain JSON with ``repr()`` of the output), so ``langgraph.json``
turns it off (``"disable_mcp": true``) and mounts ``app``, the official SDK's streamable-HTTP
app around the same tool ``deskresearch mcp`` serves (``mcp.tool``). A call starts an ordinary
run of the ``researcher`` graph on the server that hosts it, through langgraph-sdk's in-process
client: the server's checkpointer and queue, its locked deployment settings (the served graph
refuses a locked setting; the call can only choose language, max_rounds, since and the
domain scope), a thread that
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

from mcp.server.transport_security import TransportSecuritySettings

from deskresearch.mcp.tool import ENTRY, Runner, build_server
from deskresearch.session.run import Outcome, Session
from deskresearch.session.server import ServerGraph
from deskresearch.session.settings import Sources

ASSISTANT = "researcher"  # the graph id in langgraph.json
ALLOWED_HOSTS_ENV = "DESKRESEARCH_MCP_ALLOWED_HOSTS"
LOOPBACK = ["127.0.0.1:*", "localhost:*", "[::1]:*"]


def _sources(call: dict[str, Any]) -> Sources:
    """The deployment's settings (its environment), the call's own over them (locked ones refused)."""
    return Sources(caller=call, caller_name="the tool call", environ=os.environ)


def _full_result(outcome: Outcome) -> str:
    return f"the thread's state on this server: threads.get_state('{outcome.thread}')"


def _security() -> TransportSecuritySettings:
    extra = [h.strip() for h in os.environ.get(ALLOWED_HOSTS_ENV, "").split(",") if h.strip()]
    origins = [f"http://{h}" for h in LOOPBACK] + [f"https://{h}" for h in extra]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=LOOPBACK + extra,
        allowed_origins=origins,
    )


# A call runs on this server (the in-process client), on a thread that stays; a cancelled call
# interrupts the server's run (its checkpoints stay: a run on the thread with no input resumes).
_SESSION = Session(entry=ENTRY, engine=ServerGraph(None, assistant=ASSISTANT, source="mcp"))
app = build_server(Runner(_SESSION, _sources, _full_result)).streamable_http_app(
    streamable_http_path="/mcp", transport_security=_security()
)
"""The Starlette app ``langgraph.json`` mounts (``"http": {"app": "deskresearch.mcp.served:app"}``)."""
