"""deskresearch: a research question in, a cited and verifiable markdown report out.

Names are imported on first use: extraction worker processes import this package too, and must
not pay for LangGraph, LangChain and the compiled graph they never use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deskresearch.context import Context
    from deskresearch.errors import (
        ConfigError,
        DeskResearchError,
        FetchError,
        ModelCallError,
        ModelOutputError,
        SearchError,
        ServiceError,
    )
    from deskresearch.graph import build_graph, graph
    from deskresearch.state import ResearchInput, ResearchOutput

_WHERE = {
    "ConfigError": "errors",
    "Context": "context",
    "DeskResearchError": "errors",
    "FetchError": "errors",
    "ModelCallError": "errors",
    "ModelOutputError": "errors",
    "ResearchInput": "state",
    "ResearchOutput": "state",
    "SearchError": "errors",
    "ServiceError": "errors",
    "build_graph": "graph",
    "graph": "graph",
}
__all__ = [
    "ConfigError",
    "Context",
    "DeskResearchError",
    "FetchError",
    "ModelCallError",
    "ModelOutputError",
    "ResearchInput",
    "ResearchOutput",
    "SearchError",
    "ServiceError",
    "build_graph",
    "graph",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'deskresearch' has no attribute {name!r}")
    return getattr(import_module(f"deskresearch.{_WHERE[name]}"), name)
