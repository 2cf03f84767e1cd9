"""The research graph as a tool for a tool-calling model: a compact result by default.

A calling agent needs the report and where it came from, not the run's audit trail: the full
state (usage, provenance, every source's summary) is several times the report's size and would
crowd the agent's context. ``graph.as_tool(...)`` therefore returns ``{"status", "reason", "report",
"sources": [{"id", "title", "url"}]}``, about the report's length plus 100 characters a source;
``graph.as_tool(..., full=True)`` returns the whole output.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.tools import BaseTool, convert_runnable_to_tool
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel

from deskresearch.config.context import Context
from deskresearch.runscope import ScopedGraph
from deskresearch.state import ResearchInput, ResearchOutput, ResearchState


def compact_result(output: Mapping[str, Any]) -> dict[str, Any]:
    """Keep what a calling model needs: status, report, and each source's id, title and URL."""
    sources = output.get("sources") or []
    return {
        "status": output.get("status"),
        "reason": output.get("reason", ""),
        "report": output.get("report", ""),
        "sources": [{"id": s["id"], "title": s["title"], "url": s["url"]} for s in sources],
    }


class ResearchGraph(ScopedGraph[ResearchState, Context, ResearchInput, ResearchOutput]):
    """The compiled research graph: LangGraph's class with a compact ``as_tool``.

    Each invocation carries its own run meter (``runscope.ScopedGraph``).
    """

    def as_tool(
        self,
        args_schema: type[BaseModel] | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        arg_types: dict[str, type] | None = None,
        full: bool = False,
    ) -> BaseTool:
        """Return the graph as a tool; its result is ``compact_result(...)`` unless ``full``."""
        runnable: Runnable[Any, Any] = self
        if not full:
            runnable = self | RunnableLambda(compact_result, name="compact_result")
        return convert_runnable_to_tool(
            runnable,
            args_schema=args_schema,
            name=name or self.get_name(),
            description=description,
            arg_types=arg_types,
        )


def as_research_graph(compiled: CompiledStateGraph[Any, Any, Any, Any]) -> ResearchGraph:
    """Make a freshly compiled graph a ResearchGraph (same object): a meter per run, compact tool."""
    compiled.__class__ = ResearchGraph
    return compiled  # type: ignore[return-value]
