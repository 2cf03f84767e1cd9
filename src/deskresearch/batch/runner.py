"""One topic of a batch through the session: admitted, skipped when finished, resumed when not.

The same code runs a topic in the local batch process, inside a Ray task and against a server:
the session's engine decides where the graph runs. A thread whose saved state is a finished
run's is used as it is (nothing is asked again); a thread with work left (a crash, a killed
node, a failed run) continues from its last checkpoint, so finished steps are not redone.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from deskresearch.batch.ledger import attempt_events
from deskresearch.batch.topics import Topic
from deskresearch.config.context import Context
from deskresearch.runscope import RunMeter
from deskresearch.session.plan import Entry, Plan, admit
from deskresearch.session.run import Outcome, Session
from deskresearch.session.settings import Settings, Sources, context_from, gather

OnEvent = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class Job:
    """A topic with the settings it runs under (a line's > the flags > the environment)."""

    topic: Topic
    settings: Settings

    def context(self) -> Context:
        """The run's Context."""
        return context_from(self.settings)


def build_job(topic: Topic, sources: Sources, entry: Entry) -> Job:
    """The topic's settings (its line's over the batch's), checked as the run's pre-flight would.

    Raises:
        ConfigError: a value is invalid, a rule is broken, or a file or folder is wrong; named
            with the line it came from.
    """
    line = dataclasses.replace(sources, caller=topic.settings, caller_name=f"line {topic.line}")
    settings = gather(line)
    admit(settings, entry=entry)
    return Job(topic, settings)


async def start(session: Session, job: Job) -> Plan:
    """Admit the job's run on its thread: new, to resume, or finished before."""
    return await session.start(job.topic.topic, job.settings, thread=job.topic.thread_id)


async def run_job(
    session: Session, job: Job, on_event: OnEvent, plan: Plan | None = None
) -> Outcome:
    """Run, resume or reuse one topic; its files written by the session.

    Progress events go to ``on_event`` (the session's "started" first, with ``resumed``), and
    so do this attempt's accounting events: its start, each model call sent and answered
    (batch.ledger).

    Raises:
        ConfigError: a setting, path or file that cannot work, or a file that cannot be written.
        Exception: whatever ended the run; its checkpoints stay for the next attempt.
    """
    plan = plan or await start(session, job)
    meter = None
    if not plan.finished:  # the run's meter tells the ledger of every call as it happens
        before = (plan.saved or {}).get("usage") or []
        meter = RunMeter(listener=attempt_events(on_event, resumed=plan.resumed, before=before,
                                                 at=time.time()))  # fmt: skip
    return await session.run(plan, on_event=on_event, meter=meter, stem=job.topic.name)


def one_line(exc: BaseException) -> str:
    """An error as one line: the message of ours, the type and message of anything else."""
    from deskresearch.errors import DeskResearchError

    ours = isinstance(exc, DeskResearchError)
    text = str(exc) if ours else f"{type(exc).__name__}: {exc}"
    text = " ".join(text.split())
    return text if len(text) <= 500 else text[:499] + "…"
