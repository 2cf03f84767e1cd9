"""The research tool's runs in this process (``deskresearch mcp``): the CLI's settings and files.

Settings come from the same sources as the CLI's, read again at every call (so a fixed config
file or variable takes effect without a restart, and a bad one is a tool error, not a server
that will not start): setting flags given to ``deskresearch mcp``, its ``--config`` file, the
environment (``DESKRESEARCH_<FIELD>``), the defaults. What a call passes (``max_rounds``) is
checked like a served caller's context: a locked setting could never be changed this way
(``config.deployment``). Runs are checkpointed where the CLI's are (``--checkpoints``), one
graph and one checkpointer for every call, so calls run side by side; a cancelled call stops
its run with every finished step saved (``deskresearch --resume THREAD_ID`` continues it). The
report files are written like the CLI's: ``<slug>.md`` and ``<slug>.json`` in ``--output-dir``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import uuid
from contextlib import AsyncExitStack
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from langchain_core.runnables import RunnableConfig

from deskresearch.cli.output import report_texts, slug_for, write_files
from deskresearch.cli.progress import Tracker
from deskresearch.cli.settings import Given, context_from, gather
from deskresearch.config.context import Context
from deskresearch.config.deployment import Deployment
from deskresearch.errors import ConfigError
from deskresearch.mcp.tool import Outcome, Progress, Request, RunFailed
from deskresearch.report.contract import document
from deskresearch.report.outcome import check, finished
from deskresearch.services.storage.checkpoints import describe, open_checkpointer
from deskresearch.tracing import run_config


class LocalRunner:
    """Runs research calls on one graph in this process (an async context manager).

    Args:
        ns: ``deskresearch mcp``'s parsed arguments: setting flags, ``config``,
            ``checkpoints`` (a location), ``output_dir``, ``format``.
    """

    def __init__(self, ns: argparse.Namespace) -> None:
        self.ns = ns
        self.location: str = ns.checkpoints
        self._stack = AsyncExitStack()
        self._graph: Any = None
        self._lock = asyncio.Lock()

    async def __aenter__(self) -> LocalRunner:
        """Start serving (the checkpointer opens at the first call)."""
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Close the checkpointer."""
        await self._stack.aclose()

    async def _graph_for_calls(self) -> Any:
        """The graph every call shares, on the checkpointer (opened once, at the first call)."""
        async with self._lock:
            if self._graph is None:
                from deskresearch.graph import build_graph

                saver = await self._stack.enter_async_context(open_checkpointer(self.location))
                self._graph = build_graph(checkpointer=saver)
            return self._graph

    def places(self) -> tuple[str | None, str | None]:
        """The output folder and checkpoint store of ``deskresearch mcp`` (its flags)."""
        return str(self.ns.output_dir), self.location

    def settings(self, request: Request) -> Context:
        """Flags, config file, environment, defaults; the call's own values over them.

        Raises:
            ConfigError: a setting is invalid (named with where it came from and the fix).
        """
        given = gather(self.ns, os.environ)
        Deployment(settings=context_from(given)).check(request.overrides())
        for name, value in request.overrides().items():
            given[name] = Given(value, f"the tool call's {name}", f"pass another {name}")
        # Nobody is there to review a plan: an MCP call never pauses for one.
        given["review_plan"] = Given(False, "deskresearch mcp", "")
        return context_from(given)

    async def run(self, request: Request, settings: Context, progress: Progress) -> Outcome:
        """Run the research on its own thread; write the report files; the outcome."""
        graph = await self._graph_for_calls()
        thread = uuid.uuid4().hex
        config: RunnableConfig = {
            **run_config(request.topic, settings, thread_id=thread),
            "configurable": {"thread_id": thread},
        }
        started = datetime.now().astimezone()
        tracker = Tracker(
            subgraphs=[n.split("|")[-1] for n, _ in graph.get_subgraphs(recurse=True)]
        )
        await progress({"stage": "research", "event": "started", "thread_id": thread})
        final: dict[str, Any] = {}
        try:
            async for namespace, mode, chunk in graph.astream(
                request.graph_input(),
                config,
                context=settings,
                stream_mode=["custom", "tasks", "values"],
                subgraphs=True,
                durability="sync",  # a step is on disk before the next starts: resumable
            ):
                if mode == "custom" and isinstance(chunk, dict):
                    await progress(chunk)
                elif mode == "tasks" and isinstance(chunk, dict):
                    tracker.task(chunk)
                elif mode == "values" and not namespace and isinstance(chunk, dict):
                    final = chunk
        except asyncio.CancelledError:
            print(
                f"deskresearch mcp: research {thread} cancelled; its finished steps are saved in "
                f"{describe(self.location)}: deskresearch --resume {thread} --checkpoints "
                f"{describe(self.location)}",
                file=sys.stderr,
                flush=True,
            )
            raise
        if not finished(final):
            raise RunFailed(f"the run {thread} stopped before it wrote a report or a reason")
        check(final)
        # The output has neither: they are the input's.
        final = {**final, "topic": request.topic, "language": request.language or settings.language}
        files = self._write(final, settings, thread, started, tracker)
        where = f"{files[-1]} (and thread {thread} in {describe(self.location)})"
        return Outcome(final, thread, where, [str(f) for f in files])

    def _write(
        self,
        result: dict[str, Any],
        ctx: Context,
        thread: str,
        started: datetime,
        tracker: Tracker,
    ) -> list[Path]:
        """Write the report files as the CLI does; their paths, the JSON last."""
        topic = str(result.get("topic") or "")
        language = str(result.get("language") or ctx.language)
        texts = report_texts(result, topic=topic, language=language, fmt=self.ns.format)
        finished_at = datetime.now().astimezone()

        def doc(paths: dict[str, Path]) -> dict[str, Any]:
            names = {"report" if s == ".md" else s[1:]: p.name for s, p in paths.items()}
            return document(
                result, ctx=ctx, thread_id=thread, clocks=tracker.stage_timings(),
                started=started, finished=finished_at, resumed=False, files=names,
            )  # fmt: skip

        out = Path(self.ns.output_dir).expanduser()
        try:
            return [p.resolve() for p in write_files(out, slug_for(topic), texts, doc)]
        except OSError as exc:
            raise ConfigError(
                f"cannot write the report in {out}: {exc.strerror or exc} (start deskresearch "
                f"mcp with --output-dir DIR; the run is saved: deskresearch --resume {thread} "
                f"--checkpoints {describe(self.location)} -o DIR)"
            ) from None

    async def report(self, thread_id: str) -> str:
        """The whole report of a finished run in the checkpoint store."""
        graph = await self._graph_for_calls()
        values = (await graph.aget_state({"configurable": {"thread_id": thread_id}})).values
        if not finished(values):
            raise RunFailed(
                f"no finished run with thread id {thread_id!r} in {describe(self.location)}"
            )
        return str(values["report"])
