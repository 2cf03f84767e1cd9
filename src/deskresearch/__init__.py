"""deskresearch: a research question in, a cited and verifiable markdown report out."""

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
