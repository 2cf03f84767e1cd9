"""The ``deskresearch`` command: options, settings, a run's session, progress, files, ``runs``.

May import graph, report, services, config and below; nothing under the graph imports it.
"""

from deskresearch.cli.command import main, run

__all__ = ["main", "run"]
