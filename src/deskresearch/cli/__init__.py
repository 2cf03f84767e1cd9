"""The ``deskresearch`` command: options, settings, a run's session, progress, files, ``runs``.

May import graph, report, services, config and below; nothing under the graph imports it.
``main`` and ``run`` (the console script) are imported on first use, so
``python -m deskresearch.cli.options`` does not import the command first.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["main", "run"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(import_module("deskresearch.cli.command"), name)
    raise AttributeError(f"module 'deskresearch.cli' has no attribute {name!r}")
