"""``deskresearch TOPIC`` and ``--resume``: one run of the session, shown on the terminal.

What is the command line's own is here: the live panel (or plain lines), the review asked at
the terminal, what Ctrl-C says (what was saved, and the exact command that resumes it), and the
outcome in a few lines. Settings, the pre-flight, checkpoints, the run and its files are the
session's (deskresearch.session). A new run was admitted (and its first call sent) before the
research path was imported (cli.headstart); a resumed one is admitted here, the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from deskresearch.cli.headstart import ENTRY, Prepared, sources_of
from deskresearch.cli.review import answer_at_terminal, show_plan
from deskresearch.cli.views import View, make_view
from deskresearch.session.plan import Plan
from deskresearch.session.reports import ReportFiles
from deskresearch.session.run import STAGE, Outcome, Session
from deskresearch.session.settings import gather
from deskresearch.session.style import EXIT_INSUFFICIENT, EXIT_INTERRUPTED, EXIT_OK
from deskresearch.session.tracker import Tracker


class Research:
    """One run from the command line and what an interrupt should say about it."""

    def __init__(self, ns: argparse.Namespace, prepared: Prepared | None = None) -> None:
        self.ns, self.prepared = ns, prepared
        self.sources = sources_of(ns)
        settings = prepared.plan.settings if prepared else gather(self.sources)
        from deskresearch.services.model.headstart import HeadStartChat
        from deskresearch.services.model.llm import OpenAIChat

        # The client is imported on a thread once the first early call leaves: calls before it
        # is ready go early (model.early).
        llm: Any = OpenAIChat(early=True)
        if prepared and prepared.head is not None:  # the head start's answer, where it fits
            llm = HeadStartChat(llm, prepared.head)
        services: dict[str, Any] = {"llm": llm}
        self.session = Session(
            entry=ENTRY, store=settings["checkpoints"], services=services,
            files=ReportFiles(settings["output_dir"], ns.format, ns.overwrite),
            reviewer=self.ask, max_concurrency=ns.max_concurrency,
        )  # fmt: skip
        self.thread = prepared.plan.thread if prepared else str(ns.resume)
        self.tracker = Tracker()
        self.opened = False  # the run started: finished steps are saved from here on
        self.view: View | None = None

    def interrupted(self) -> str:
        """One line: what is saved, and how to continue."""
        if not self.opened:
            return "deskresearch: interrupted before the run started; nothing was saved"
        store = self.session.store
        if store is not None and store.value == "memory":
            return "deskresearch: interrupted; nothing was saved (--checkpoints memory)"
        done = self.tracker.summary()
        what = f"finished work ({done})" if done else "every finished step"
        return (
            f"deskresearch: interrupted; {what} is saved in {self.session.engine.where}; "
            f"resume with: {self.session.resume_command(self.thread)}"
        )

    async def run(self) -> int:
        """Admit the run (a resume here), run it, say how it ended; the exit code."""
        async with self.session:
            if self.prepared is not None:
                found = await asyncio.wrap_future(self.prepared.checked)  # network pre-flight
                plan = self.prepared.plan.reached(found)
            else:
                plan = await self.session.resume(self.thread, self.sources)
            if plan.finished:
                return self.said(await self.session.run(plan))
            # The model client is imported on a thread once the first early call leaves (the
            # plan), not here: here it would take the interpreter from the graph's start and
            # hold back the keyword searches (bench --cli: 0.25-0.44 s a run on 2 cores).
            with self.showing(plan.topic):
                outcome = await self.session.run(plan, on_event=self.event, tracker=self.tracker)
        return self.said(outcome)

    def event(self, event: dict[str, Any]) -> None:
        """A progress event: the thread line first, then the panel or a plain line."""
        if event.get("stage") == STAGE:
            self.opened = True
            if not self.ns.quiet:
                print(f"deskresearch: thread {self.thread} in {self.session.engine.where} "
                      f"(after a crash: {self.session.resume_command(self.thread)})",
                      file=sys.stderr)  # fmt: skip
        elif event.get("stage") == "preflight":  # shown with --quiet too: it may cost the run
            print(f"deskresearch: note: {event['message']}", file=sys.stderr)
        elif self.view is not None:
            self.view.event(event)

    @contextmanager
    def showing(self, topic: str) -> Iterator[None]:
        """The progress view for as long as the run streams."""
        self.view = make_view(self.ns.progress, quiet=self.ns.quiet, tracker=self.tracker,
                              title=f"deskresearch · {topic}")  # fmt: skip
        with self.view:
            yield

    def ask(self, review: Any, plan: Plan) -> Any:
        """The review, at the terminal: the panel stops while the reviewer reads and types.

        The planned pages are shown; the answer is the file's (``--review FILE``, read in the
        pre-flight) or typed. The prompt blocks the event loop on purpose (nothing else may run
        meanwhile); asyncio's own SIGINT handler would only cancel the run at the next await.
        """
        if self.view is not None:
            self.view.__exit__(None, None, None)
        show_plan(review)
        if plan.answer is not None:
            if self.view is not None:
                self.view.__enter__()
            return plan.answer
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            return answer_at_terminal(review)
        finally:
            signal.signal(signal.SIGINT, previous)
            if self.view is not None:
                self.view.__enter__()

    def said(self, outcome: Outcome) -> int:
        """Print how the run ended (with --quiet its first line and the report's path)."""
        values, files = outcome.values, outcome.files
        code = EXIT_OK if values["status"] == "ok" else EXIT_INSUFFICIENT
        if outcome.reused:
            print(f"deskresearch: run {outcome.thread} already finished ({values['status']}); "
                  f"its files: {' '.join(map(str, files))}", file=sys.stderr)  # fmt: skip
            print(files[0])
            return code
        print(f"{values['status']}: {' '.join(map(str, files))}", file=sys.stderr)
        if values.get("reason"):
            print(f"reason: {values['reason']}", file=sys.stderr)
        if not self.ns.quiet:
            usage = values.get("usage") or []
            cached = sum(u.get("cached_calls", 0) for u in usage)
            calls = sum(u["calls"] for u in usage) + cached
            print(
                f"sources: {len(values.get('sources') or [])}, tokens: "
                f"{sum(u['input_tokens'] for u in usage)} in / "
                f"{sum(u['output_tokens'] for u in usage)} out, "
                f"model calls: {calls} ({cached} from the cache)",
                file=sys.stderr,
            )
            if values.get("citations"):
                from deskresearch.grounding.ledger import summary_line

                print(f"citations: {summary_line(values['citations'])}", file=sys.stderr)
        print(files[0])
        return code


def research(ns: argparse.Namespace, prepared: Prepared | None = None) -> int:
    """Run the research the arguments ask for; return the exit code.

    ``prepared``: a new run, admitted (and its head start sent) by ``cli.main`` before this
    module's imports.
    """
    # Ctrl-C cancels LangGraph's tasks mid-step; a coroutine it created but had not awaited yet
    # is then collected with a RuntimeWarning on stderr (seen about once in 20 interrupts): a
    # developer's warning that would break the promised one-line interrupt message.
    warnings.filterwarnings("ignore", r"coroutine .* was never awaited", RuntimeWarning)
    command = Research(ns, prepared)
    try:
        return asyncio.run(command.run())
    except KeyboardInterrupt:
        print(command.interrupted(), file=sys.stderr)
        return EXIT_INTERRUPTED
