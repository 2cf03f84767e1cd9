"""The MCP research tool: one implementation, served by ``langgraph dev`` and by ``deskresearch mcp``.

``build_server(runner)`` returns an MCP server (the official SDK's ``MCPServer``) with one tool,
``research(topic, language?, max_rounds?)``, and one resource template, the whole report of a
run (``deskresearch://report/{thread_id}``). Where the run happens is the runner's business:
``mcp.local`` runs the graph in this process on the CLI's settings and checkpoints, and writes
the report files; ``mcp.served`` starts a run on the LangGraph server it is mounted in, with the
server's checkpointer and locked deployment settings. Everything an MCP client sees is here:
the description, the input and output schemas, the bounded result (``mcp.result``), progress
notifications (one per progress event, the lines the CLI's plain view prints), cancellation
(the runner stops the run; its checkpoint stays, so it can be resumed) and tool errors that
carry our one-line cause and fix.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Protocol

from mcp.server.mcpserver import Context as MCPContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from deskresearch._version import __version__
from deskresearch.cli.views import event_line
from deskresearch.config.context import Context
from deskresearch.errors import DeskResearchError
from deskresearch.mcp.result import MAX_RESULT_CHARS, REPORT_URI, ResearchResult, compact
from deskresearch.text.clean import MAX_TOPIC_CHARS, clean_topic

TOOL = "research"
DESCRIPTION = f"""\
Research a question on the web and get a cited report whose citations were checked.

deskresearch searches the web (or the document folder its operator configured), reads and \
summarises the pages, writes a markdown report in which claims cite numbered sources [n], then \
checks every cited sentence against the source's own words: unsupported sentences are re-cited, \
rewritten or removed, and the result says how many. When no usable source is found it says so \
(status insufficient_evidence, with the reason) instead of writing from memory. Use it for \
questions that need current, sourced facts; answer what you already know yourself.

Time and cost: a call takes minutes (one to several with a hosted model; progress is reported \
stage by stage), reads 10-40 pages and makes about 20-60 model calls (20,000-80,000 tokens: a \
few US cents with the default OpenAI models); each extra research round adds about as much \
again. The result reports the tokens spent and their estimated cost.

Result (JSON, at most {MAX_RESULT_CHARS} characters): status and reason, the report \
(shortened when longer; report_uri is the MCP resource with the whole report), the sources it \
cites (number, title, URL), the citation check's counts, where independent sources disagree \
(each value with its sources), the cost, and thread_id, under which the full result stays \
available."""

TOPIC = (
    "The research question, in any language, self-contained (each call is a new research: "
    f"it does not see earlier calls), at most {MAX_TOPIC_CHARS} characters. Example: "
    "'How are lithium-ion batteries from electric cars recycled in Europe?'"
)
LANGUAGE = "Language of the report: a code or a name (en-us, German, zh-cn); default: the server's setting (en-us)."
_FIELD = getattr(Context, "__pydantic_fields__")["max_rounds"]  # noqa: B009 - untyped attr
_ROUNDS = {type(m).__name__: getattr(m, type(m).__name__.lower()) for m in _FIELD.metadata}
MIN_ROUNDS, MAX_ROUNDS = int(_ROUNDS["Ge"]), int(_ROUNDS["Le"])  # the setting's own bounds
ROUNDS = (
    f"Research rounds ({MIN_ROUNDS}-{MAX_ROUNDS}; default: the server's setting, "
    f"{_FIELD.default}). After each round a reflection step "
    "looks for gaps and leads in what was read and searches them in the next round: more "
    "rounds dig deeper and cost more; 1 is the quickest and cheapest."
)

Progress = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class Request:
    """One call of the tool: what the client asked for."""

    topic: str
    language: str | None = None
    max_rounds: int | None = None

    def overrides(self) -> dict[str, Any]:
        """The settings this call asks for (checked like any caller's: locked ones refused)."""
        return {"max_rounds": self.max_rounds} if self.max_rounds is not None else {}

    def graph_input(self) -> dict[str, Any]:
        """The graph's input for this call."""
        return {"topic": self.topic, **({"language": self.language} if self.language else {})}


@dataclass
class Outcome:
    """A finished run: its final values, its thread, and where its full result is."""

    values: dict[str, Any]
    thread_id: str
    full_result: str
    files: list[str] = field(default_factory=list)


class RunFailed(DeskResearchError):
    """A run ended with an error; the message is one line, cause and fix."""


class Runner(Protocol):
    """Runs one research for the tool: here (stdio) or on the LangGraph server (served)."""

    def settings(self, request: Request) -> Context:
        """The run's settings: the entry point's own sources plus the request's overrides.

        Raises:
            ConfigError: a setting is invalid, or the request asks for a locked one.
        """
        ...

    def places(self) -> tuple[str | None, str | None]:
        """Where this runner writes: (the output folder, the checkpoint store); None: not its own."""
        ...

    async def run(self, request: Request, settings: Context, progress: Progress) -> Outcome:
        """Run the research to its end, passing each progress event on.

        Cancelled (the client cancelled the call), it stops the run and keeps its checkpoint.

        Raises:
            DeskResearchError: the run could not start or ended with an error.
        """
        ...

    async def report(self, thread_id: str) -> str:
        """The whole report of a finished run.

        Raises:
            DeskResearchError: no finished run has this thread id.
        """
        ...


async def preflight(settings: Context, runner: Runner) -> None:
    """The pre-flight of every entry point (services.preflight), before the run starts.

    Every MCP call passes here before any paid call and before a thread or checkpoint exists:
    settings as ``start_run`` checks them, the runner's folder and checkpoint store, the model
    endpoints' URLs and keys, then one quick request to each server the run needs.

    Raises:
        ConfigError: a setting, path or key that cannot work, with the fix.
        Unreachable: a server the run needs does not answer.
    """
    from deskresearch.services.preflight import check_local, check_network

    output_dir, checkpoints = runner.places()
    # The checks touch files (a corpus folder, the cache, the store): off the event loop.
    # check_local covers start_run's check_settings (endpoints and keys, the search chain).
    await asyncio.to_thread(check_local, settings, output_dir=output_dir, checkpoints=checkpoints)
    await check_network(settings, checkpoints=checkpoints)


def one_line(exc: BaseException) -> str:
    """An error as one line (ours already say the cause and the fix)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def build_server(runner: Runner, *, name: str = "deskresearch") -> MCPServer:
    """The MCP server with the research tool and the report resource, running on ``runner``."""
    server: MCPServer = MCPServer(
        name,
        title="deskresearch",
        version=__version__,
        instructions="Call research for questions that need current, cited facts from the web.",
        log_level="WARNING",  # the SDK's INFO would log every HTTP request of a run to stderr
    )

    @server.tool(
        name=TOOL,
        title="Desk research: a cited report with checked citations",
        description=DESCRIPTION,
        annotations=ToolAnnotations(
            read_only_hint=False,  # it writes report files (local) and a thread (served)
            destructive_hint=False,
            idempotent_hint=False,  # every call is a new research, with its own cost
            open_world_hint=True,  # it reads the web
        ),
    )
    async def research(
        topic: Annotated[str, Field(description=TOPIC)],
        ctx: MCPContext,
        language: Annotated[str | None, Field(description=LANGUAGE)] = None,
        max_rounds: Annotated[
            int | None, Field(description=ROUNDS, ge=MIN_ROUNDS, le=MAX_ROUNDS)
        ] = None,
    ) -> Annotated[CallToolResult, ResearchResult]:
        done = 0

        async def progress(event: dict[str, Any]) -> None:
            nonlocal done
            done += 1
            await ctx.report_progress(done, None, event_line(event))

        try:
            request = Request(clean_topic(topic), language, max_rounds)
            settings = runner.settings(request)
            await preflight(settings, runner)  # nothing exists yet: no thread, checkpoint, call
            outcome = await runner.run(request, settings, progress)
        except DeskResearchError as exc:
            raise ToolError(one_line(exc)) from None
        result = compact(
            outcome.values,
            thread_id=outcome.thread_id,
            full_result=outcome.full_result,
            files=outcome.files,
        )
        text = result.model_dump_json()
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content=result.model_dump(mode="json"),
        )

    @server.resource(
        REPORT_URI,
        name="report",
        title="The whole report of a research run",
        description="The markdown report of the run with this thread id (the research tool's "
        "report_uri), with its references and the citation check's account.",
        mime_type="text/markdown",
    )
    async def report(thread_id: str) -> str:
        try:
            return await runner.report(thread_id)
        except DeskResearchError as exc:
            raise ResourceError(one_line(exc)) from None

    return server
