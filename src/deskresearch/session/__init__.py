"""The run session: the one way every entry point gathers settings, checks, runs and writes a run.

May import graph, report, services, config and below; the entry points (cli, batch, mcp, and
the web UI) import it and never each other. Its modules are light until a run starts
(``engines`` and ``run`` import LangGraph when first used), so the command line reads its
settings and sends its first request before the research path is imported.

The API, as an entry point (or the web UI) uses it::

    from deskresearch.session import Entry, ReportFiles, Session, Sources

    sources = Sources(caller=form, caller_name="the page", defaults={"output_dir": folder})
    settings = gather(sources)                      # name → Given(value, origin, fix, kind)
    problems(settings, topic=topic)                 # per field, before anything is spent
    caller_field(message, settings)                 # a pre-flight message's field in a form
    async with Session(entry=Entry("the page", reviewer=True), store=settings["checkpoints"],
                       files=ReportFiles(settings["output_dir"], "md+html"),
                       reviewer=ask_the_page) as session:
        plan = await session.start(topic, settings)  # pre-flight: local, then network
        outcome = await session.run(plan, on_event=send_to_the_page)  # cancel the task: stop
        tracker.rows()                               # the panel's lines (pass tracker= to run)
        plan = await session.resume(thread_id, sources)  # the same path, with saved values
        rows = await session.runs(limit=50)          # topic, status, date, tokens, cost, files
        await session.delete(thread_id)              # the thread and its files

- ``settings``: ``Sources`` (the caller's per-run values > flags > config file > the saved run
  > environment > defaults) gathered into a plain mapping of ``Given``; ``problems`` and
  ``context_from`` name each bad value's origin; ``check_rules`` holds a rule wherever a value
  came from (no review without a reviewer; a caller may not change a locked setting).
- ``plan``: ``prepare`` admits a run (settings, topic, files, the local pre-flight), ``reach``
  runs the network pre-flight; nothing is sent or saved before both passed.
- ``run``: ``Session`` (start, resume, run, runs, delete, report); ``engines``: the graph here on
  a checkpoint store (``LocalGraph``); ``server``: on a LangGraph server (``ServerGraph``).
- ``reports`` and ``files``: a run's report files, written once, with one message when they
  cannot be; ``store``: the runs of a store; ``tracker``: counts and timings from the stream.
- ``options`` and ``style``: the settings as command-line options, exit codes, the error line.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "Entry": "plan",
    "Plan": "plan",
    "Given": "settings",
    "Settings": "settings",
    "Sources": "settings",
    "gather": "settings",
    "problems": "settings",
    "ReportFiles": "reports",
    "Session": "run",
    "Outcome": "run",
    "LocalGraph": "engines",
    "ServerGraph": "server",
    "Tracker": "tracker",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(f"deskresearch.session.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'deskresearch.session' has no attribute {name!r}")
