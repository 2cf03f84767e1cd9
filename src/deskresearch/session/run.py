"""The run session: one way through for every entry point (see ``deskresearch.session``).

A ``Session`` holds where runs live (an engine: the graph on a checkpoint store here, or a
LangGraph server), where their files go (``ReportFiles``) and who answers a review. Its runs
share the graph, and so its limits and its cache. ``start`` and ``resume`` admit a run (the
same path: a resume is a start with the saved run's values), ``run`` drives it to its end,
streaming progress events, asking the reviewer when it pauses, and writes its files.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig

from deskresearch.errors import ConfigError, RunFailed
from deskresearch.report.outcome import check, finished
from deskresearch.runscope import METER_KEY, RunMeter
from deskresearch.services.preflight import check_store
from deskresearch.services.servers import Reached
from deskresearch.session.engines import Engine, LocalGraph
from deskresearch.session.plan import Entry, Plan, prepare, reach
from deskresearch.session.reports import ReportFiles, Written
from deskresearch.session.settings import Given, Settings, Sources, gather, origins
from deskresearch.session.store import OUTPUT_DIR_KEY, RunRow, resume_command
from deskresearch.session.tracker import Tracker
from deskresearch.tracing import run_config

OnEvent = Callable[[dict[str, Any]], Awaitable[None] | None]
# (what a paused run shows, its plan, with a file's answer) → the answer (or its awaitable)
Reviewer = Callable[[Any, Plan], Any]
STAGE = "research"  # the session's own progress events: {"stage": "research", "event": ...}


@dataclass
class Outcome:
    """A finished run: its final values, its thread, how it ran, and its files."""

    values: dict[str, Any]
    thread: str
    run: Literal["new", "resumed", "earlier"]
    files: list[Path] = field(default_factory=list)
    reused: bool = False  # the files were there already (a run that had finished before)


class Session:
    """Runs on one engine, with one set of report files (an async context manager).

    Args:
        entry: the entry point (its name, whether it can answer a review, ...).
        engine: where the graph runs (default: ``LocalGraph`` on ``store``).
        store: the checkpoint store and where it came from (a local engine).
        files: where and how the report files are written (None: none are).
        reviewer: answers a paused run's review (the CLI's prompt, the page).
        services: ``build_graph`` keywords for the local engine (``llm=``, ``limiter=``).
        max_concurrency: graph tasks per step (the local engine).
        again: (thread, folder) → how to write a saved run's files elsewhere; by default the
            command that resumes it.
        check_once: reach each set of servers once per session (a batch), not once per run.
    """

    def __init__(
        self, *, entry: Entry, engine: Engine | None = None, store: Given | None = None,
        files: ReportFiles | None = None, reviewer: Reviewer | None = None,
        services: dict[str, Any] | None = None, max_concurrency: int | None = None,
        again: Callable[[str, str], str] | None = None, check_once: bool = False,
    ) -> None:  # fmt: skip
        if engine is None:
            if store is None:
                raise ValueError("a session needs an engine or a store")
            engine = LocalGraph(str(store.value), services=services,
                                max_concurrency=max_concurrency)  # fmt: skip
        self.entry, self.engine, self.store, self.files = entry, engine, store, files
        self.reviewer = reviewer
        self._again = again
        self._reached: dict[tuple[Any, ...], asyncio.Future[Reached]] | None = (
            {} if check_once else None
        )

    async def __aenter__(self) -> Session:
        """Start (the engine opens at the first run that passed its pre-flight)."""
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Close the engine (the checkpoint store, the server's client)."""
        await self.engine.close()

    # ---- admitting a run --------------------------------------------------------------------

    async def start(
        self, topic: str, settings: Settings | Sources, *, thread: str | None = None
    ) -> Plan:
        """Admit a new run, or one of a known thread that may have saved work (a batch topic).

        Raises:
            ConfigError: a setting, path, key or file that cannot work, with the fix.
            Unreachable: a server the run needs does not answer.
        """
        saved = await self._saved(thread, settings) if thread else {}
        return await self._admit(topic, settings, thread, saved)

    async def resume(self, thread: str, sources: Sources) -> Plan:
        """Admit the saved run ``thread`` again: the start of a run, with its saved values.

        Raises:
            ConfigError: no such run, or a setting that cannot work (see ``start``).
            Unreachable: a server the run needs does not answer.
        """
        saved = await self._saved(thread, sources, must_exist=True)
        if not saved:
            raise ConfigError(
                f"no run with thread id {thread!r} in {self.engine.where}: `deskresearch runs` "
                "lists the saved ones (and --checkpoints picks the store)"
            )
        return await self._admit(None, sources, thread, saved)

    async def _admit(
        self, topic: str | None, settings: Settings | Sources, thread: str | None,
        saved: dict[str, Any],
    ) -> Plan:  # fmt: skip
        """Gather (the saved run's settings in place of the environment's), prepare, reach."""

        def admitted() -> Plan:
            given = settings if isinstance(settings, dict) else gather(
                settings, saved=saved.get("settings") if saved else None, thread=thread or "")  # fmt: skip
            return prepare(topic, given, entry=self.entry, thread=thread, saved=saved,
                           store_open=self.engine_open)  # fmt: skip

        plan = await asyncio.to_thread(admitted)  # files are read: off the event loop
        return await self._reach(plan)

    async def _saved(
        self, thread: str | None, settings: Settings | Sources, *, must_exist: bool = False
    ) -> dict[str, Any]:
        """The thread's saved state; a local store is checked before it is opened."""
        if isinstance(self.engine, LocalGraph):
            store = await self._store(origins(settings) if isinstance(settings, dict) else {})
            if must_exist and not store.exists():
                raise ConfigError(f"no runs saved in {store.where} yet: check --checkpoints")
        return await self.engine.saved(thread) if thread else {}

    async def _store(self, where: dict[str, str] | None = None) -> LocalGraph:
        """The local store, checked before it is first opened (not while runs write there).

        Raises:
            ConfigError: the engine is a server's, or the store cannot be opened.
        """
        if not isinstance(self.engine, LocalGraph):
            raise ConfigError(f"the runs on {self.engine.where} are kept there")
        if not self.engine_open:
            where = dict(where or {})
            if self.store is not None:
                where.setdefault("checkpoints", self.store.origin)
            await asyncio.to_thread(check_store, self.engine.location, origins=where)
        return self.engine

    @property
    def engine_open(self) -> bool:
        """The local store is open (a run, or a listing, of this session opened it)."""
        return isinstance(self.engine, LocalGraph) and self.engine.opened

    async def _reach(self, plan: Plan) -> Plan:
        """The plan after its network pre-flight (once per set of servers with ``check_once``).

        With ``check_once`` (a batch), the first topic to need a set of servers checks them and
        is told the notices; the topics that need the same set wait for that check and take the
        window it found (all a batch's topics on one local server fit one context). A check
        that failed is made again by the next topic.
        """
        if plan.finished:
            return plan
        ctx = plan.context
        if self._reached is None:
            return plan.reached(await self._check(plan))
        key = (plan.settings.get("checkpoints"), ctx.base_url, ctx.summary_model,
               ctx.report_model, ctx.judge_model, ctx.summary_context_window, ctx.search,
               ctx.searxng_url, ctx.tavily_base_url, plan.resumed)  # fmt: skip
        first = key not in self._reached
        if first:
            check = self._reached[key] = asyncio.ensure_future(self._check(plan))
            reached = self._reached

            def forget(done: asyncio.Future[Reached]) -> None:  # not reached: checked again
                if (done.cancelled() or done.exception()) and reached.get(key) is done:
                    del reached[key]

            check.add_done_callback(forget)
        found = await asyncio.shield(self._reached[key])
        return plan.reached(found if first else Reached(window=found.window))

    async def _check(self, plan: Plan) -> Reached:
        return await reach(plan.context, plan.settings, entry=self.entry, new=not plan.resumed)

    # ---- running it -------------------------------------------------------------------------

    async def run(
        self, plan: Plan, *, on_event: OnEvent | None = None, tracker: Tracker | None = None,
        meter: RunMeter | None = None, stem: str = "",
    ) -> Outcome:  # fmt: skip
        """Run the plan to its end; write its files; the outcome.

        Progress events go to ``on_event`` as they come: the session's own first (``{"stage":
        "research", "event": "started", "thread_id"}``, ``"resumed": True`` for a saved run),
        then the graph's; ``tracker`` counts them (the CLI's panel reads it); ``meter`` hears
        every model call (a batch's accounting). Cancelling the task that awaits this stops the
        run: every finished step is saved, and ``resume`` continues it.

        Raises:
            ConfigError: the report files cannot be written (the run is saved), or the run
                paused for a review nobody here can give.
            RunFailed: the run ended with an error on the server that ran it.
            Exception: whatever ended the run; its checkpoints stay for a resume.
        """
        if plan.finished:
            values = {**(plan.saved or {}), "topic": plan.topic}
            written = await asyncio.to_thread(self.save, values, plan, earlier=True, stem=stem)
            return Outcome(values, plan.thread, "earlier", written.paths, written.reused)
        tracker = tracker or Tracker()
        if isinstance(self.engine, LocalGraph):
            await self.engine.graph()
            tracker.subgraphs = frozenset(self.engine.subgraphs())
        config = self._config(plan, meter)
        started = datetime.now().astimezone()
        started_event = {"stage": STAGE, "event": "started", "thread_id": plan.thread}
        await _emit(on_event, started_event | ({"resumed": True} if plan.resumed else {}))
        for notice in plan.notices:  # the pre-flight's: shown where the run's progress is
            event = {"stage": "preflight", "event": "notice", "message": notice}
            tracker.custom(event)
            await _emit(on_event, event)
        command, final = plan.graph_input(), {}
        while True:
            async for mode, chunk in self.engine.stream(plan, command, config):
                if mode == "custom":
                    tracker.custom(chunk)
                    await _emit(on_event, chunk)
                elif mode == "tasks":
                    tracker.task(chunk)
                else:
                    final = chunk
            paused = await self.engine.paused(plan.thread)
            tracker.ended = not paused
            if not paused:
                break
            command = await self._answer(plan, paused[0])
        values = final if finished(final) else await self.engine.saved(plan.thread)
        if not finished(values):
            raise RunFailed(f"the run {plan.thread} stopped before it wrote a report or a "
                            f"reason; resume it with {self.resume_command(plan.thread)}")  # fmt: skip
        check(values)  # never "ok" without a report that cites a page read
        values = {**values, "topic": plan.topic}
        written = await asyncio.to_thread(self.save, values, plan, clocks=tracker.stage_timings(),
                                          started=started, stem=stem)  # fmt: skip
        return Outcome(values, plan.thread, "resumed" if plan.resumed else "new", written.paths)

    def _config(self, plan: Plan, meter: RunMeter | None) -> RunnableConfig:
        config: RunnableConfig = {
            **run_config(plan.topic, plan.context, thread_id=plan.thread),
            "configurable": {"thread_id": plan.thread},
        }
        if meter is not None:  # every model call of the run is told to it as it happens
            config["configurable"][METER_KEY] = meter
        if self.files is not None:  # saved with every checkpoint: `runs` finds the files
            folder = str(self.files.path.resolve())
            config["metadata"] = {**config.get("metadata", {}), OUTPUT_DIR_KEY: folder}
        return config

    async def _answer(self, plan: Plan, review: Any) -> Any:
        from langgraph.types import Command

        if self.reviewer is None:
            if plan.answer is not None:  # read in the pre-flight
                return Command(resume=plan.answer)
            raise ConfigError(f"the run {plan.thread} paused for a review, and nobody here can "
                              f"answer it: resume it with {self.resume_command(plan.thread)}")  # fmt: skip
        answer = self.reviewer(review, plan)
        return Command(resume=await answer if inspect.isawaitable(answer) else answer)

    def save(self, values: dict[str, Any], plan: Plan, **how: Any) -> Written:
        """Write (or find again) a finished run's files (``ReportFiles.save`` takes ``how``).

        Raises:
            ConfigError: the folder or a file cannot be written; says how to write them elsewhere.
        """
        if self.files is None:
            return Written([])
        again = self.again(plan.thread, "DIR")
        return self.files.save(values, thread=plan.thread, ctx=plan.context, again=again,
                               resumed=plan.resumed, **how)  # fmt: skip

    def again(self, thread: str, folder: str) -> str:
        """How to write a saved run's files in ``folder``: the command that resumes it."""
        return self._again(thread, folder) if self._again else self.resume_command(thread, folder)

    def resume_command(self, thread: str, folder: str | None = None) -> str:
        """The exact command that continues a run of this session (its store and folder)."""
        folder = folder or (str(self.files.folder.value) if self.files else None)
        return resume_command(thread, self.store, folder)

    # ---- the store ----------------------------------------------------------------------------

    async def runs(self, limit: int = 20) -> list[RunRow]:
        """The store's runs, newest first, with the files each wrote (its folder, or ours)."""
        return await (await self._store()).runs(limit, self.files.path if self.files else None)

    async def report(self, thread: str) -> str:
        """The whole report of a finished run.

        Raises:
            RunFailed: no finished run has this thread id.
        """
        values = await self.engine.saved(thread)
        if not finished(values):
            raise RunFailed(f"no finished run with thread id {thread!r} in {self.engine.where}")
        return str(values["report"])

    async def delete(self, thread: str) -> list[str]:
        """Delete a run: its thread in the store and the files it wrote; the files removed.

        Raises:
            ConfigError: no run has this thread id.
        """
        store = await self._store()
        if not await store.saved(thread):
            raise ConfigError(f"no run with thread id {thread!r} in {self.engine.where}")
        return await store.delete(thread, self.files.path if self.files else None)


async def _emit(on_event: OnEvent | None, event: dict[str, Any]) -> None:
    if on_event is not None and inspect.isawaitable(result := on_event(event)):
        await result
