"""deskresearch: a research question in, a cited and verifiable markdown report out.

Names are imported on first use: extraction worker processes import this package too, and must
not pay for LangGraph, LangChain and building the graph they never use.
"""

from __future__ import annotations

import sys
import types
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deskresearch.config.context import Context
    from deskresearch.errors import (
        ConfigError,
        ContextLengthError,
        DeskResearchError,
        FetchError,
        ModelCallError,
        ModelOutputError,
        SearchError,
        ServiceError,
    )
    from deskresearch.graph import build_graph
    from deskresearch.served import graph
    from deskresearch.state import ResearchInput, ResearchOutput, ResearchRequest

from deskresearch._version import __version__

__all__ = [
    "__version__",
    "ConfigError",
    "Context",
    "ContextLengthError",
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
_HOME = {"Context": "config.context", "build_graph": "graph", "graph": "served"}
_HOME |= {n: "state" for n in ("ResearchInput", "ResearchOutput", "ResearchRequest")}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'deskresearch' has no attribute {name!r}")
    return getattr(import_module(f"deskresearch.{_HOME.get(name, 'errors')}"), name)


class _Package(types.ModuleType):
    """The package module, keeping ``deskresearch.graph`` the compiled graph.

    Importing the submodule of the same name would otherwise set the attribute to the module.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "graph" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
