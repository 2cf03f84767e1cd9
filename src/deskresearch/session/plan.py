"""A run before it starts: its settings checked, its pre-flight passed, nothing sent or saved yet.

``prepare`` is the one way a run is admitted, new or resumed (a resume is the same path with the
saved run's values): the settings are validated (each bad value named with its origin), the
rules that hold wherever a value came from are applied, the topic is cleaned, and the local
pre-flight runs (folders, files, URLs, keys: services.preflight), then ``reach`` runs the
network part (one quick request to each server the run needs). Only a ``Plan`` that passed both
is run, so a mistake costs no model call and leaves nothing in the checkpoint store. Light on
purpose: the command line prepares its run before it imports the research path.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from deskresearch.config.context import Context
from deskresearch.errors import ConfigError
from deskresearch.report.outcome import finished
from deskresearch.services.preflight import check_local
from deskresearch.services.servers import Reached, check_network
from deskresearch.session.review import answer_file
from deskresearch.session.settings import (
    Given,
    Settings,
    check_rules,
    context_from,
    origins,
    place,
)
from deskresearch.text.clean import clean_topic


@dataclass(frozen=True)
class Entry:
    """What the entry point running a session brings to its runs.

    Args:
        name: how it names itself in messages (``deskresearch batch``, ``the page``).
        reviewer: somebody can answer a review (``review_plan``); a batch or a tool call cannot.
        providers: the model and search settings are this machine's to check (not so for a
            batch on Ray or on a server: the nodes and the server have their own).
        locked: a caller's per-run values may not change the deployment's settings
            (config.deployment); the command line's own flags and files are the deployment.
    """

    name: str = "deskresearch"
    reviewer: bool = False
    providers: bool = True
    locked: bool = False


@dataclass(frozen=True)
class Plan:
    """A run the pre-flight admitted: its thread, topic and settings, and what it starts from."""

    thread: str
    topic: str
    context: Context
    settings: Settings
    saved: dict[str, Any] | None = None  # a resumed run's state (None: a new run)
    answer: Any = None  # a review answer read in the pre-flight (None: ask the reviewer)
    notices: tuple[str, ...] = ()  # what the network pre-flight found that does not stop it

    @property
    def resumed(self) -> bool:
        """The thread has saved work: the run continues it."""
        return bool(self.saved)

    @property
    def finished(self) -> bool:
        """The saved run had finished (decided by what it produced, never the scheduler)."""
        return bool(self.saved) and finished(self.saved or {})

    def reached(self, found: Reached) -> Plan:
        """The plan with what the network pre-flight found.

        Its notices, and the context the summary model's local server said it gives (the run's
        ``summary_context_window``, saved with it).
        """
        plan = replace(self, notices=found.notices)
        if not found.window.tokens:
            return plan
        given = Given(found.window.tokens, f"the summary model's server ({found.window.said_by})",
                      "give --summary-context-window", "server")  # fmt: skip
        settings = {**self.settings, "summary_context_window": given}
        try:
            return replace(plan, settings=settings, context=context_from(settings))
        except ConfigError:  # a number the setting does not take: the default stands
            return plan

    def graph_input(self) -> dict[str, Any] | None:
        """The graph's input: the topic for a new run, None to continue a saved one."""
        return None if self.resumed else {"topic": self.topic}


def admit(
    settings: Settings,
    *,
    entry: Entry,
    environ: Mapping[str, str] | None = None,
    store_open: bool = False,
) -> Context:
    """The settings of a run checked, and what needs no network: its Context.

    Validation (each bad value with its origin), the rules that hold wherever a value came
    from, then the local pre-flight: the output folder, the checkpoint store, the cache file,
    the model endpoints' URLs and keys, the search settings, a review answer file.
    ``store_open``: the session holds the checkpoint store open already (its runs write there):
    it was checked when it opened, and a second writer's probe would only wait for theirs.

    Raises:
        ConfigError: the first problem found, in one line with its origin and the fix.
    """
    ctx = context_from(settings)
    check_rules(settings, ctx, reviewer=entry.reviewer, locked=entry.locked)
    check_local(ctx, output_dir=place(settings, "output_dir"),
                checkpoints=None if store_open else place(settings, "checkpoints"), origins=origins(settings),
                environ=os.environ if environ is None else environ,
                providers=entry.providers)  # fmt: skip
    return ctx


def prepare(
    topic: str | None,
    settings: Settings,
    *,
    entry: Entry,
    thread: str | None = None,
    saved: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    store_open: bool = False,
) -> Plan:
    """Admit a run: its settings, topic, folders, files, URLs and keys checked; nothing sent.

    ``saved``: the state of the thread being resumed ({} or None: a new run, on ``thread`` if
    given). A saved run that had finished is admitted with its settings checked only: nothing
    will run.

    Raises:
        ConfigError: the first problem found, in one line with its origin and the fix.
    """
    topic = str(saved["topic"]) if saved and saved.get("topic") else clean_topic(topic)
    # A UUID as LangGraph servers write it (they rewrite any other form of one).
    plan = Plan(thread or str(uuid.uuid4()), topic, context_from(settings), settings,
                dict(saved or {}) or None)  # fmt: skip
    if plan.finished:
        return plan
    admit(settings, entry=entry, environ=environ, store_open=store_open)
    review = place(settings, "review")
    if review and review != "-":
        return replace(plan, answer=answer_file(review, settings["review"].origin))
    return plan


async def reach(
    ctx: Context, settings: Settings, *, entry: Entry, environ: Mapping[str, str] | None = None,
    new: bool = True, searches: tuple[int, str] | None = None,
) -> Reached:  # fmt: skip
    """The network pre-flight: each server the run needs answers (one quick request each).

    ``new``: False for a resumed run; ``searches``: a batch's (see ``check_network``). Returns
    what it found that does not stop the run (``Plan.reached`` takes it).

    Raises:
        Unreachable: a server does not answer.
        ConfigError: a server answered that a key or a model is wrong.
    """
    return await check_network(
        ctx, checkpoints=place(settings, "checkpoints"), origins=origins(settings),
        environ=os.environ if environ is None else environ, providers=entry.providers, new=new,
        searches=searches,
    )  # fmt: skip
