"""deskresearch: a research question in, a cited and verifiable markdown report out.

Extraction worker processes (spawned by multiprocessing) import this package too; they skip
the public names, so they do not pay for LangGraph, LangChain and building the graph.
"""

from multiprocessing import parent_process

if parent_process() is None:  # not an extraction worker
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
    from deskresearch.state import ResearchInput, ResearchOutput, ResearchRequest

__all__ = [
    "ConfigError",
    "Context",
    "DeskResearchError",
    "FetchError",
    "ModelCallError",
    "ModelOutputError",
    "ResearchInput",
    "ResearchOutput",
    "ResearchRequest",
    "SearchError",
    "ServiceError",
    "build_graph",
    "graph",
]
