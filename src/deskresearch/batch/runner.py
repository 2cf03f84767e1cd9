"""One topic of a batch on a checkpointed graph: skipped when finished, resumed when not.

The same code runs a topic in the local batch process and inside a Ray task: the checkpointer
decides. A thread whose last checkpoint has nothing left to run is finished (its saved result is
used, nothing is asked again); a thread with work left (a crash, a killed node, a failed run)
continues from its last checkpoint, so finished steps and branches are not redone.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig

from deskresearch.batch.ledger import attempt_events
from deskresearch.batch.topics import Topic
from deskresearch.config.context import Context, validated
from deskresearch.errors import ConfigError
from deskresearch.report.outcome import check, finished
from deskresearch.runscope import METER_KEY, RunMeter
from deskresearch.tracing import run_config

Run = Literal["new", "resumed", "earlier"]
OnEvent = Callable[[dict[str, Any]], None]
OnStart = Callable[[bool], None]  # called with resumed=True/False when the run (re)starts


@dataclass(frozen=True)
class Job:
    """A topic with the settings it runs under."""

    topic: Topic
    context: dict[str, Any]  # every setting (flags > line > environment > default)
    explicit: dict[str, Any]  # only those given by a flag or the line (what a server is sent)

    def settings(self) -> Context:
        """The run's Context."""
        return validated(self.context, source=f"line {self.topic.line}")


@dataclass(frozen=True)
class Finished:
    """A topic's final state and how this batch got it."""

    values: dict[str, Any]
    run: Run


def build_job(topic: Topic, flags: dict[str, Any]) -> Job:
    """Combine the batch's flags with the line's settings (the line wins).

    Raises:
        ConfigError: a value is invalid; names the setting.
    """
    explicit = {**{k: v for k, v in flags.items() if v is not None}, **topic.settings}
    if explicit.get("review_plan"):
        raise ConfigError(
            "review_plan pauses a run for a person to review its pages, and a batch has nobody "
            "to answer: leave it out (review single runs with deskresearch --review)"
        )
    explicit["review_plan"] = False  # not from the environment either: nobody would answer
    ctx = validated(explicit, source=f"line {topic.line}")
    return Job(topic, dataclasses.asdict(ctx), explicit)


def config_for(job: Job) -> RunnableConfig:
    """The run config: LangSmith name and tags, and the topic's thread."""
    tid = job.topic.thread_id
    return {
        **run_config(job.topic.topic, job.settings(), thread_id=tid),
        "configurable": {"thread_id": tid},
    }


async def finished_values(graph: Any, job: Job) -> dict[str, Any] | None:
    """The saved result of a thread that has finished, else None."""
    saved = await graph.aget_state({"configurable": {"thread_id": job.topic.thread_id}})
    return dict(saved.values) if finished(saved.values) else None


async def run_job(graph: Any, job: Job, on_event: OnEvent, on_start: OnStart) -> Finished:
    """Run, resume or reuse one topic on ``graph`` (which carries a checkpointer).

    ``on_start`` hears whether work starts afresh or resumes (not for a finished topic);
    progress events (the graph's ``custom`` stream) go to ``on_event``, and so do this
    attempt's accounting events: its start, each model call sent and answered (batch.ledger).

    Raises:
        ConfigError: the run stopped for a review (not possible in a batch) or a bad setting.
        Exception: whatever ended the run; its checkpoints stay for the next attempt.
    """
    config = config_for(job)
    saved = await graph.aget_state(config)
    if finished(saved.values):  # what it produced decides, never the scheduler's next
        return Finished(dict(saved.values), "earlier")
    resumed = bool(saved.values)  # a checkpoint with work left: continue it
    before = saved.values.get("usage") or []
    listener = attempt_events(on_event, resumed=resumed, before=before, at=time.time())
    on_start(resumed)
    # The run's meter (kept by ScopedGraph) tells the ledger of every call as it happens.
    config["configurable"][METER_KEY] = RunMeter(listener=listener)
    final: dict[str, Any] = {}
    async for namespace, mode, chunk in graph.astream(
        None if resumed else {"topic": job.topic.topic},
        config,
        context=job.settings(),
        stream_mode=["custom", "values"],
        subgraphs=True,
        durability="sync",  # a step is saved before the next starts: a killed node loses none
    ):
        if mode == "custom" and isinstance(chunk, dict):
            on_event(chunk)
        elif mode == "values" and not namespace and isinstance(chunk, dict):
            final = chunk
    if (await graph.aget_state(config)).interrupts:
        raise ConfigError("the run paused for a review, which a batch cannot give")
    check(final)  # a finished run, never "ok" with nothing
    return Finished(final, "resumed" if resumed else "new")


def one_line(exc: BaseException) -> str:
    """An error as one line: the message of ours, the type and message of anything else."""
    text = str(exc) if isinstance(exc, ConfigError) else f"{type(exc).__name__}: {exc}"
    text = " ".join(text.split())
    return text if len(text) <= 500 else text[:499] + "…"
