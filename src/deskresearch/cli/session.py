"""One research run from the command line: settings, checks, checkpoints, progress, files.

Order matters to the user: settings and the endpoint are checked before anything is created on
disk (no checkpoint or cache file for a run that cannot start); every run is checkpointed under
a thread id printed at its start; Ctrl-C ends with one line saying what was saved and the exact
command that resumes it. Heavy modules (LangGraph, the model client) are imported here, not by
``deskresearch --help``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import signal
import sys
import uuid
import warnings
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from deskresearch.cli.headstart import Prepared, prepare
from deskresearch.cli.progress import Tracker
from deskresearch.cli.review import answer_from, show_plan
from deskresearch.cli.runs import OUTPUT_DIR_KEY
from deskresearch.cli.settings import context_from, gather, origins
from deskresearch.cli.style import EXIT_INSUFFICIENT, EXIT_INTERRUPTED, EXIT_OK
from deskresearch.cli.views import make_view
from deskresearch.config.context import Context
from deskresearch.errors import ConfigError
from deskresearch.graph import build_graph
from deskresearch.report.outcome import check, finished
from deskresearch.services.base import ChatService
from deskresearch.services.model.headstart import HeadStartChat
from deskresearch.services.model.llm import import_client_soon
from deskresearch.services.preflight import check_local, check_network
from deskresearch.services.search.router import SearchRouter
from deskresearch.services.storage.checkpoints import default_location, describe, open_checkpointer
from deskresearch.tracing import run_config

DEFAULT_OUTPUT = "reports"


def _checked_services(ctx: Context) -> tuple[ChatService, SearchRouter]:
    """The model and search services, after checking the run's settings can work with them.

    Raises:
        ConfigError: no endpoint, a bad search chain, a missing corpus folder, ...
    """
    from deskresearch.services.defaults import search_service
    from deskresearch.services.model.llm import OpenAIChat

    llm = OpenAIChat()
    llm.check(ctx.summary_spec())
    llm.check(ctx.report_spec())
    search = cast(SearchRouter, search_service(None))  # given none: the real chain
    search.check(ctx.search_settings())
    return llm, search


class Session:
    """One run (new or resumed) and what an interrupt should say about it."""

    def __init__(self, ns: argparse.Namespace, prepared: Prepared | None = None) -> None:
        self.ns = ns
        self.prepared = prepared  # a new run's settings and topic, read before the imports
        self.location: str = ns.checkpoints or default_location()
        self.thread: str = ns.resume or uuid.uuid4().hex
        self.started = datetime.now().astimezone()
        self.tracker: Tracker | None = None
        self.opened = False  # the checkpointer was opened: finished steps are saved
        self.origins: dict[str, str] = {}  # where each setting came from (pre-flight messages)

    def resume_command(self, output_dir: str | None = None) -> str:
        """The exact command that continues this run."""
        words = ["deskresearch", "--resume", self.thread]
        if self.ns.checkpoints:
            words += ["--checkpoints", describe(self.ns.checkpoints)]
        out = output_dir or self.ns.output_dir
        if out != DEFAULT_OUTPUT:
            words += ["-o", out]
        return " ".join(shlex.quote(w) if w != "DIR" else w for w in words)

    def interrupted(self) -> str:
        """One line: what is saved, and how to continue."""
        if not self.opened:
            return "deskresearch: interrupted before the run started; nothing was saved"
        if self.location == "memory":
            return "deskresearch: interrupted; nothing was saved (--checkpoints memory)"
        done = self.tracker.summary() if self.tracker else ""
        what = f"finished work ({done})" if done else "every finished step"
        return (
            f"deskresearch: interrupted; {what} is saved in {describe(self.location)}; "
            f"resume with: {self.resume_command()}"
        )

    def run(self) -> int:
        """Run or resume; write the files; return the exit code.

        The pre-flight comes first (services.preflight): for a new run its local part ran
        before the head start (cli.headstart.prepare); the network part runs here, before the
        checkpoint store is opened. Nothing is saved for a run that cannot start.
        """
        if self.ns.resume:
            values = asyncio.run(self._saved())
            given = gather(
                self.ns, os.environ, saved=values.get("settings", {}), thread=self.thread
            )
            ctx = context_from(given)
            topic = str(values.get("topic", ""))
            self.origins = origins(given, self.ns)
            if finished(values):  # decided by what it produced, never by the scheduler's next
                return self._finished_earlier(values, ctx, topic)
            check_local(ctx, output_dir=self.ns.output_dir, checkpoints=self.location,
                        origins=self.origins)  # fmt: skip
            run_input: Any = None
            head = None  # a resumed run made its first call long ago
        else:
            prepared = self.prepared or prepare(self.ns)
            ctx, topic, head = prepared.ctx, prepared.topic, prepared.head
            self.origins = prepared.origins
            run_input = {"topic": topic}
        llm, search = _checked_services(ctx)
        if self.ns.resume:
            asyncio.run(check_network(ctx, checkpoints=self.location, origins=self.origins))
        else:
            prepared.checked.result()  # the network pre-flight, run while the imports went on
        if head is not None:
            llm = HeadStartChat(llm, head)
        final = asyncio.run(self._stream(run_input, ctx, topic, llm, search))
        return self._write(final, ctx, topic)

    def _finished_earlier(self, values: dict[str, Any], ctx: Context, topic: str) -> int:
        """A resumed run that had finished: say where its files are; write them only if none."""
        from deskresearch.cli.runs import files_of

        files = files_of(self.thread, Path(self.ns.output_dir))
        if not files:
            return self._write(values, ctx, topic)
        print(
            f"deskresearch: run {self.thread} already finished ({values['status']}); "
            f"its files: {' '.join(files)}",
            file=sys.stderr,
        )
        print(files[0])
        return EXIT_OK if values["status"] == "ok" else EXIT_INSUFFICIENT

    async def _saved(self) -> dict[str, Any]:
        """The resumed run's saved state."""
        path = self.location.removeprefix("sqlite:///")
        if "://" not in path and path != "memory" and not Path(path).expanduser().exists():
            raise ConfigError(f"no runs saved in {path} yet: check --checkpoints")
        async with open_checkpointer(self.location) as saver:
            graph = build_graph(checkpointer=saver)
            saved = await graph.aget_state({"configurable": {"thread_id": self.thread}})
        if not saved.values:
            raise ConfigError(
                f"no run with thread id {self.thread!r} in {describe(self.location)}: "
                "`deskresearch runs` lists the saved ones (and --checkpoints picks the store)"
            )
        return dict(saved.values)

    async def _stream(
        self, run_input: Any, ctx: Context, topic: str, llm: ChatService, search: SearchRouter
    ) -> dict[str, Any]:
        """Stream the run to its end, asking the reviewer whenever it pauses; the final state."""
        async with open_checkpointer(self.location) as saver:
            self.opened = True
            graph = build_graph(
                llm=llm, search=search, checkpointer=saver, max_concurrency=self.ns.max_concurrency
            )
            import_client_soon()  # while start_run, the keywords and the searches run
            nested = [n.split("|")[-1] for n, _ in graph.get_subgraphs(recurse=True)]
            tracker = self.tracker = Tracker(subgraphs=nested)
            if not self.ns.quiet:
                print(
                    f"deskresearch: thread {self.thread} in {describe(self.location)} "
                    f"(after a crash: {self.resume_command()})",
                    file=sys.stderr,
                )
            config: RunnableConfig = {
                **run_config(topic, ctx, thread_id=self.thread),
                "configurable": {"thread_id": self.thread},
            }
            # Saved with every checkpoint: `deskresearch runs` finds the files wherever -o was.
            config["metadata"] = {**config.get("metadata", {}), OUTPUT_DIR_KEY: str(
                Path(self.ns.output_dir).expanduser().resolve()
            )}  # fmt: skip
            final: dict[str, Any] = {}
            while True:
                view = make_view(
                    self.ns.progress, quiet=self.ns.quiet, tracker=tracker,
                    title=f"deskresearch · {topic}",
                )  # fmt: skip
                with view:
                    async for namespace, mode, chunk in graph.astream(
                        run_input,
                        config,
                        context=ctx,
                        stream_mode=["custom", "tasks", "values"],
                        subgraphs=True,
                        durability="sync",  # a step is on disk before the next starts
                    ):
                        if mode == "custom" and isinstance(chunk, dict):
                            tracker.custom(chunk)
                            view.event(chunk)
                        elif mode == "tasks" and isinstance(chunk, dict):
                            tracker.task(chunk)
                        elif mode == "values" and not namespace and isinstance(chunk, dict):
                            final = chunk
                    paused = (await graph.aget_state(config)).interrupts
                    tracker.ended = not paused
                if not paused:
                    return final
                run_input = Command(resume=_ask(paused[0].value, self.ns.review or "-"))

    def _write(self, result: dict[str, Any], ctx: Context, topic: str) -> int:
        """Write the report (--format) and <slug>.json, print where; 0 ok, 2 no evidence."""
        from deskresearch.cli.output import report_texts, slug_for, write_files
        from deskresearch.report.contract import document

        if not finished(result):
            raise ConfigError(
                "the run stopped before it wrote a report or a reason; resume it with "
                f"{self.resume_command()}"
            )
        check(result)  # never "ok" without a report that cites a page read
        finished_at = datetime.now().astimezone()
        clocks = self.tracker.stage_timings() if self.tracker else {}
        texts = report_texts(result, topic=topic, language=ctx.language, fmt=self.ns.format)

        def doc(paths: dict[str, Path]) -> dict[str, Any]:
            names = {"report" if s == ".md" else s[1:]: p.name for s, p in paths.items()}
            return document(
                {**result, "topic": topic}, ctx=ctx, thread_id=self.thread, clocks=clocks,
                started=self.started, finished=finished_at, resumed=bool(self.ns.resume),
                files=names,
            )  # fmt: skip

        try:
            files = write_files(
                Path(self.ns.output_dir), slug_for(topic), texts, doc, overwrite=self.ns.overwrite
            )
        except OSError as exc:
            saved = "" if self.location == "memory" else (
                f"; the run is saved: write it elsewhere with {self.resume_command('DIR')}"
            )  # fmt: skip
            raise ConfigError(
                f"cannot write the report in {self.ns.output_dir}: {exc.strerror or exc}{saved}"
            ) from None
        # The outcome; with --quiet only its first line (and the report's path on stdout).
        usage = result.get("usage") or []
        cached = sum(u.get("cached_calls", 0) for u in usage)
        calls = sum(u["calls"] for u in usage) + cached
        print(f"{result['status']}: {' '.join(map(str, files))}", file=sys.stderr)
        if result.get("reason"):
            print(f"reason: {result['reason']}", file=sys.stderr)
        if self.ns.quiet:
            print(files[0])
            return EXIT_OK if result["status"] == "ok" else EXIT_INSUFFICIENT
        print(
            f"sources: {len(result.get('sources') or [])}, tokens: "
            f"{sum(u['input_tokens'] for u in usage)} in / "
            f"{sum(u['output_tokens'] for u in usage)} out, "
            f"model calls: {calls} ({cached} from the cache)",
            file=sys.stderr,
        )
        if result.get("citations"):
            from deskresearch.grounding.ledger import summary_line

            print(f"citations: {summary_line(result['citations'])}", file=sys.stderr)
        print(files[0])
        return EXIT_OK if result["status"] == "ok" else EXIT_INSUFFICIENT


def _ask(plan: Any, source: str) -> Any:
    """Show the plan and read the reviewer's answer, Ctrl-C working as at any other time.

    The prompt blocks the event loop on purpose (nothing else may run meanwhile); asyncio's own
    SIGINT handler would only cancel the run at the next await, after Enter.
    """
    show_plan(plan)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return answer_from(plan, source)
    finally:
        signal.signal(signal.SIGINT, previous)


def research(ns: argparse.Namespace, prepared: Prepared | None = None) -> int:
    """Run the research the arguments ask for; return the exit code.

    ``prepared``: a new run's settings and topic, read (and its head start sent) by ``cli.main``
    before this module's imports.
    """
    # Ctrl-C cancels LangGraph's tasks mid-step; a coroutine it created but had not awaited yet
    # is then collected with a RuntimeWarning on stderr (seen about once in 20 interrupts): a
    # developer's warning that would break the promised one-line interrupt message.
    warnings.filterwarnings("ignore", r"coroutine .* was never awaited", RuntimeWarning)
    session = Session(ns, prepared)
    try:
        return session.run()
    except KeyboardInterrupt:
        print(session.interrupted(), file=sys.stderr)
        return EXIT_INTERRUPTED
