"""The MCP research tool: one implementation, served by ``langgraph dev`` and by ``deskresearch mcp``.

``build_server(runner)`` returns an MCP server (the official SDK's ``MCPServer``) with one tool,
``research(topic, language?, max_rounds?, since?, include_domains?, exclude_domains?)``, and one
resource template, the whole report of a
run (``deskresearch://report/{thread_id}``). A call is one run of the runner's session
(deskresearch.session): ``mcp.stdio`` runs the graph in this process on the command line's
settings, checkpoints and report files; ``mcp.served`` runs it on the LangGraph server it is
mounted in, with the server's checkpointer and locked deployment settings. The settings a call
may choose (``language``, ``max_rounds``, ``since``, the domain scope: Context fields, with
Context's bounds and checks) enter the
session as the caller's per-run values, with their origin, like any other setting: a new one is a
parameter of ``research`` and an entry of its ``asked`` mapping. Everything an MCP client sees is
here: the description, the input and output schemas, the bounded result (``mcp.result``),
progress notifications (one per progress event, the lines the CLI's plain view prints),
cancellation (the run stops; its checkpoint stays, so it can be resumed) and tool errors that
carry our one-line cause and fix.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from mcp.server.mcpserver import Context as MCPContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from deskresearch._version import __version__
from deskresearch.config.context import Context
from deskresearch.errors import DeskResearchError
from deskresearch.mcp.result import MAX_RESULT_CHARS, REPORT_URI, ResearchResult, compact
from deskresearch.session.plan import Entry
from deskresearch.session.run import Outcome, Session
from deskresearch.session.settings import Sources
from deskresearch.session.tracker import event_line
from deskresearch.text.clean import MAX_TOPIC_CHARS

ENTRY = Entry("deskresearch mcp", locked=True)  # nobody reviews; a call may not unlock a setting
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
BOUNDS: dict[str, Any] = {"minimum": MIN_ROUNDS, "maximum": MAX_ROUNDS}
ROUNDS = (
    f"Research rounds ({MIN_ROUNDS}-{MAX_ROUNDS}; default: the server's setting, "
    f"{_FIELD.default}). After each round a reflection step "
    "looks for gaps and leads in what was read and searches them in the next round: more "
    "rounds dig deeper and cost more; 1 is the quickest and cheapest."
)


SINCE = (
    "Only pages published on or after this date (YYYY-MM-DD): an older page is dropped before "
    "it is summarised, an undated one kept and marked undated. Default: no limit."
)
INCLUDE = (
    "Only these sites, comma-separated hosts or suffixes (who.int,.gov): the search is "
    "restricted to them and every result and redirect is checked. Default: every site."
)
EXCLUDE = "Never these sites, comma-separated hosts or suffixes (example.com,.biz). Default: none."


@dataclass(frozen=True)
class Runner:
    """Where the tool's runs happen: a session, and what is particular to the place.

    Args:
        session: runs the calls (here on a checkpoint store, or on the hosting server).
        sources: a call's settings (Context field → value) → where the run's settings come
            from, the call's among them as the caller's per-run values.
        full_result: where a finished run's full result is, for the result's ``full_result``.
        cancelled: told the thread of a call the client cancelled (a log line), if anything.
    """

    session: Session
    sources: Callable[[dict[str, Any]], Sources]
    full_result: Callable[[Outcome], str]
    cancelled: Callable[[str], None] | None = None


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
        # The bounds are the schema's, for clients; the session checks them (one line, origin).
        max_rounds: Annotated[
            int | None, Field(description=ROUNDS, json_schema_extra=BOUNDS)
        ] = None,
        since: Annotated[str | None, Field(description=SINCE, examples=["2024-01-01"])] = None,
        include_domains: Annotated[str | None, Field(description=INCLUDE)] = None,
        exclude_domains: Annotated[str | None, Field(description=EXCLUDE)] = None,
    ) -> Annotated[CallToolResult, ResearchResult]:
        done = 0

        async def progress(event: dict[str, Any]) -> None:
            nonlocal done
            done += 1
            await ctx.report_progress(done, None, event_line(event))

        asked = {"language": language, "max_rounds": max_rounds, "since": since,
                 "include_domains": include_domains, "exclude_domains": exclude_domains}  # fmt: skip
        session = runner.session
        try:  # admitted as every run is: nothing exists before the pre-flight passed
            plan = await session.start(topic, runner.sources(
                {name: value for name, value in asked.items() if value is not None}))  # fmt: skip
            try:
                outcome = await session.run(plan, on_event=progress)
            except asyncio.CancelledError:
                if runner.cancelled is not None:
                    runner.cancelled(plan.thread)
                raise
        except DeskResearchError as exc:
            raise ToolError(one_line(exc)) from None
        result = compact(outcome.values, thread_id=outcome.thread,
                         full_result=runner.full_result(outcome),
                         files=[str(f.resolve()) for f in outcome.files])  # fmt: skip
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
            return await runner.session.report(thread_id)
        except DeskResearchError as exc:
            raise ResourceError(one_line(exc)) from None

    return server
