"""The runs of one ``deskresearch ui`` process: asked, watched, read, listed, resumed, deleted.

A ``Desk`` is one run session (deskresearch.session) on the command's checkpoint store and
report folder, so a run started in the page is the same run as on the command line: the same
settings gathering (the page's form as the caller's per-run values, with the deployment's
locks), the same pre-flight, checkpoints and files, resumable from either side. Every run of
the process shares the session's graph (its limits and cache). While a run streams, a
``Tracker`` counts it as the CLI's panel does; each change bumps a version that the page's
event stream (``app``) waits on, so the page hears of an event as soon as it happens.
"""

from __future__ import annotations

import asyncio
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from deskresearch.errors import ConfigError, DeskResearchError
from deskresearch.report.outcome import finished
from deskresearch.session.engines import LocalGraph
from deskresearch.session.plan import Entry, Plan
from deskresearch.session.reports import ReportFiles
from deskresearch.session.review import checked
from deskresearch.session.run import Session
from deskresearch.session.settings import (
    PLACES,
    Settings,
    Sources,
    caller_field,
    check_rules,
    context_from,
    gather,
    problems,
)
from deskresearch.session.style import error_line
from deskresearch.session.tracker import event_line
from deskresearch.ui.form import SETTINGS, Problem, Refusal, problem_of
from deskresearch.ui.jobs import Changes, Job, Watched, give_back, reviewed

PAGE = "the page"
ENTRY = Entry(PAGE, reviewer=True, locked=True)  # the person at the page answers a review
BUG = "its traceback is in the terminal that runs deskresearch ui"
ANSWER = 'send {"answer": true} or {"answer": {"keep_urls": [...]}}'  # a review's, from the page


class Desk:
    """The page's runs on one session (an async context manager around the server's life).

    Args:
        sources: the page's form (setting → value) → where a run's settings come from: the
            form as the caller's per-run values over the command's flags, file, environment.
        max_concurrency: graph tasks per step.
    """

    def __init__(
        self, sources: Callable[[dict[str, Any]], Sources], *, max_concurrency: int | None = None
    ) -> None:
        self.sources = sources
        places = gather(sources({}))
        self.store = places["checkpoints"]
        self.engine = LocalGraph(str(self.store.value), max_concurrency=max_concurrency)
        self.files = ReportFiles(places["output_dir"], "md+html")
        self.session = Session(entry=ENTRY, engine=self.engine, store=self.store, files=self.files,
                               reviewer=self._review)  # fmt: skip
        self.jobs: dict[str, Job] = {}
        self.changes = Changes()
        self.listing = 0  # the version at which the list of runs last changed
        self.closing = False

    async def __aenter__(self) -> Desk:
        """Open (the store opens at the first listing or run)."""
        return self

    def stop_streams(self) -> None:
        """End every event stream (the server is stopping: it waits for open responses)."""
        self.closing = True
        self.changes.bump()

    async def __aexit__(self, *exc: object) -> None:
        """Stop every run (each stays resumable), end the event streams, close the store."""
        self.stop_streams()
        running = {j.thread: j.task for j in self.jobs.values() if j.task and not j.task.done()}
        for task in running.values():
            task.cancel()
        await asyncio.gather(*running.values(), return_exceptions=True)
        for thread in running:
            print(f"deskresearch ui: stopped a running research; it is saved in "
                  f"{self.engine.where}: resume it in the page, or with "
                  f"{self.session.resume_command(thread)}", file=sys.stderr, flush=True)  # fmt: skip
        await self.session.__aexit__(None, None, None)

    # ---- asking ---------------------------------------------------------------------------

    def check(self, topic: str | None, form: Mapping[str, Any]) -> tuple[Settings, list[Problem]]:
        """The run's settings from the form, and every problem with it, field by field.

        The same checks, in the same words, as the command line's before its first call:
        ``Context``'s bounds per field, the topic (None: not yet asked), and the rules (a
        locked setting).
        """
        found = [Problem(k, "not a setting the page can change", str(k))
                 for k in form if k in PLACES or k not in SETTINGS]  # fmt: skip
        found += [Problem(k, "give text, a number or true/false", str(v)) for k, v in form.items()
                  if not isinstance(v, str | int | float | bool)]  # fmt: skip
        if found:
            return {}, found
        settings = gather(self.sources(dict(form)))
        found = [problem_of(p) for p in problems(settings, topic=topic)]
        if not found:
            try:
                check_rules(settings, context_from(settings), reviewer=ENTRY.reviewer,
                            locked=ENTRY.locked)  # fmt: skip
            except ConfigError as exc:
                found.append(Problem(caller_field(str(exc), settings), str(exc), ""))
        return settings, found

    async def start(self, topic: str, form: Mapping[str, Any]) -> Job:
        """Admit a new run (every check, then the pre-flight), and start it.

        Raises:
            Refusal: a field, the topic or a server is wrong; nothing was sent or saved.
        """
        settings, found = self.check(topic, form)
        if found:
            raise Refusal(422, "fix the fields marked", found)
        plan = await self._admitted(self.session.start(topic, settings), settings)
        return self._launch(plan)

    async def resume(self, thread: str) -> Job | None:
        """Continue a saved run with its own settings (None: it had finished already).

        Raises:
            Refusal: it runs already, it does not exist, or its pre-flight failed.
        """
        if (job := self.jobs.get(thread)) is not None and job.state == "running":
            raise Refusal(409, "this research is running already")
        plan = await self._admitted(self.session.resume(thread, self.sources({})), {})
        return None if plan.finished else self._launch(plan)

    async def _admitted(self, admission: Any, settings: Settings) -> Plan:
        try:
            plan: Plan = await admission
        except DeskResearchError as exc:
            field = caller_field(str(exc), settings)
            status = 422 if isinstance(exc, ConfigError) else 502  # a server does not answer
            found = [Problem(field, error_line(exc)[1], "")] if field else []
            raise Refusal(status, error_line(exc)[1], found) from None
        return plan

    def _launch(self, plan: Plan) -> Job:
        def changed() -> None:
            self._changed(job)

        job = Job(plan.thread, plan.topic, Watched(changed))
        job.task = asyncio.create_task(self._drive(job, plan), name=f"research {plan.thread}")
        self.jobs[plan.thread] = job
        self._changed(job, listing=True)
        return job

    async def _drive(self, job: Job, plan: Plan) -> None:
        """Run the plan to its end; how it ended goes into the job."""

        def event(event: dict[str, Any]) -> None:
            job.lines.append(f"{job.tracker.elapsed():6.1f}s {event_line(event)}")

        try:
            outcome = await self.session.run(plan, on_event=event, tracker=job.tracker)
        except asyncio.CancelledError:
            job.state = "cancelled"  # every finished step is saved: it resumes
        except Exception as exc:  # noqa: BLE001 - the page gets the one line, the terminal the rest
            code, job.error = error_line(exc, BUG)
            job.state = "failed"
            if code == 1:
                traceback.print_exception(exc, file=sys.stderr)
        else:
            job.state, job.status = "done", str(outcome.values["status"])
            job.reason = str(outcome.values.get("reason") or "")
        finally:
            job.elapsed = job.tracker.elapsed()
            self._changed(job, listing=True)
            if not any(j.state == "running" for j in self.jobs.values()):
                give_back()

    async def _review(self, review: Any, plan: Plan) -> Any:
        """Show the run's review in the page, and wait for the page's answer (``answer``)."""
        job = self.jobs[plan.thread]
        return await reviewed(job, review, lambda: self._changed(job, listing=True))

    def answer(self, thread: str, answer: Any) -> None:
        """Give a run that waits for its review the page's answer.

        Raises:
            Refusal: no research of this id waits for a review here, or the answer is none.
        """
        job = self.jobs.get(thread)
        if job is None or job.answer is None or job.answer.done():
            raise Refusal(409, "this research is not waiting for a review")
        try:
            job.answer.set_result(checked(answer, "the page's review answer", ANSWER))
        except ConfigError as exc:
            raise Refusal(422, str(exc)) from None

    def cancel(self, thread: str) -> None:
        """Stop a running research (it stays resumable).

        Raises:
            Refusal: no research of this id runs here.
        """
        job = self.jobs.get(thread)
        if job is None or job.task is None or job.state != "running":
            raise Refusal(409, "this research is not running here")
        job.task.cancel()

    # ---- watching -------------------------------------------------------------------------

    def _changed(self, job: Job, *, listing: bool = False) -> None:
        self.changes.bump()  # one count for every run: a resumed run's versions never repeat
        job.version, job.at = self.changes.version, time.time()
        if listing:
            self.listing = self.changes.version

    def snapshot(self, job: Job) -> dict[str, Any]:
        """What the page shows of a run: the panel's lines, tokens and cost, recent events."""
        t = job.tracker
        tokens_in, tokens_out = t.tokens()
        return {
            "thread_id": job.thread, "topic": job.topic, "state": job.state,
            "status": job.status, "reason": job.reason, "error": job.error,
            "rows": [asdict(r) for r in t.rows()], "lines": list(job.lines),
            "elapsed": round(job.elapsed if job.elapsed is not None else t.elapsed(), 1),
            "tokens": [tokens_in, tokens_out], "cost": t.cost(), "at": job.at,
            "resume": self.session.resume_command(job.thread), "review": job.review,
            "version": job.version,
        }  # fmt: skip

    # ---- the store ------------------------------------------------------------------------

    async def runs(self, limit: int = 200) -> list[dict[str, Any]]:
        """The store's runs, newest first; those running here say so."""
        rows = [asdict(r) for r in await self.session.runs(limit)]
        listed = {r["thread_id"] for r in rows}
        running = {t: j for t, j in self.jobs.items() if j.state == "running"}
        for row in rows:
            if (job := running.get(row["thread_id"])) is not None:
                row["status"] = "awaiting review" if job.review else "running"
        fresh: list[dict[str, Any]] = [  # admitted, not in the store yet
            {"thread_id": t, "started": j.started, "topic": j.topic, "status": "running",
             "files": [], "tokens": sum(j.tracker.tokens()), "cost_usd": None}
            for t, j in running.items() if t not in listed
        ]  # fmt: skip
        for row in fresh + rows:
            row["files"] = [Path(f).name for f in row["files"]]
            row.pop("folder", None)
        return fresh + rows

    async def result(self, thread: str) -> dict[str, Any]:
        """A run's saved values (those of a finished run carry its report).

        Raises:
            Refusal: no run of this id is saved.
        """
        values = await self.engine.saved(thread) if self.engine.exists() else {}
        if not values:
            raise Refusal(404, f"no research with the id {thread} in {self.engine.where}")
        return values

    async def detail(self, thread: str) -> dict[str, Any]:
        """A run as the page shows it before its report: status, reason, files, how to resume."""
        job = self.jobs.get(thread)
        if job is not None and job.state == "running":
            return self.snapshot(job)
        values = await self.result(thread)
        done = finished(values)
        waits = not done and job is None and bool(await self.engine.paused(thread))
        return {
            "thread_id": thread, "topic": str(values.get("topic") or ""),
            "state": "done" if done else (job.state if job else "unfinished"),
            "status": str(values.get("status") or ""), "reason": str(values.get("reason") or ""),
            "error": job.error if job else "", "sources": len(values.get("sources") or []),
            "files": [Path(f).suffix[1:] for f in await self.own_files(thread)],
            "resume": self.session.resume_command(thread), "awaits_review": waits,
            "version": job.version if job else 0,
        }  # fmt: skip

    async def own_files(self, thread: str) -> list[Path]:
        """The run's files, those only that lie in its folder (or ours) under a plain name."""
        recorded = await self.engine.folder(thread)
        allowed = {self.files.path.resolve()} | ({Path(recorded).resolve()} if recorded else set())
        found = [Path(p) for p in await self.engine.files(thread, self.files.path)]
        return [p for p in found if p.resolve().parent in allowed and p.is_file()]

    async def delete(self, thread: str) -> list[str]:
        """Delete a run: its thread and its files.

        Raises:
            Refusal: it is running (cancel it first), or there is no such run.
        """
        if (job := self.jobs.get(thread)) is not None and job.state == "running":
            raise Refusal(409, "this research is running: cancel it first")
        try:
            gone = await self.session.delete(thread)
        except ConfigError as exc:
            raise Refusal(404, str(exc)) from None
        self.jobs.pop(thread, None)
        self.changes.bump()
        self.listing = self.changes.version
        return [Path(f).name for f in gone]
