"""What each topic's attempts spent, summed over every attempt, a lost Ray task's included.

A topic's final state counts the model calls of the steps its checkpoints saved, each once. A
Ray task whose node died leaves no state for what it was doing: calls it had answered inside a
step that never finished, and calls it had sent that never came back, are asked again by the
retry (which resumes from the checkpoints), so the provider saw them twice and the final state
counts them once. So every attempt tells the batch, as it goes, of each call it sends and each
answer it gets (``runner.run_job`` hooks a listener into the run's meter; a Ray task reports
through the Coordinator actor, the driver hears it from there).

A topic's usage is then, per stage and model: what its checkpoints held when the batch's first
attempt began, plus every answer every attempt reported, plus one call (tokens unknown) for each
call a lost attempt sent and never heard back from. Each figure is also at least what the final
state says (a call made by a previous batch process, or a report lost in the instant of a kill,
cannot make the count smaller than the state's). Tokens and cost count only answered calls.
"""

from __future__ import annotations

import math
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from deskresearch.records import MARKED_CALLS, Stage, Usage
from deskresearch.runscope import CallListener
from deskresearch.state import merge_usage

STAGE = "batch"  # the stage of the events that are the batch's own, not the graph's


@dataclass
class _Attempt:
    at: float = math.inf  # when it began (its start event may arrive after its first call)
    before: list[Usage] = field(default_factory=list)  # in the checkpoints when it began
    answered: list[Usage] = field(default_factory=list)
    open: Counter[tuple[Stage, str]] = field(default_factory=Counter)  # sent, not yet answered


def attempt_events(
    on_event: Callable[[dict[str, Any]], None], *, resumed: bool, before: Sequence[Usage], at: float
) -> CallListener:
    """Announce a new attempt through ``on_event``; return the listener for its run's meter."""
    attempt = uuid.uuid4().hex
    on_event({"stage": STAGE, "event": "attempt", "attempt": attempt, "at": at,
              "resumed": resumed, "before": list(before)})  # fmt: skip

    def heard(kind: str, stage: Stage, model: str, usage: Usage | None) -> None:
        on_event({"stage": STAGE, "event": kind, "attempt": attempt, "call_stage": stage,
                  "model": model, "usage": usage})  # fmt: skip

    return heard


class Ledger:
    """Every attempt's calls, by topic thread, from the events its runs send."""

    def __init__(self) -> None:
        self._threads: dict[str, dict[str, _Attempt]] = {}

    def record(self, thread: str, event: Mapping[str, Any]) -> bool:
        """Take an accounting event of ``thread``'s run; False for any other event."""
        kind = event.get("event")
        if event.get("stage") != STAGE or kind not in ("attempt", "sent", "answered"):
            return False
        a = self._threads.setdefault(thread, {}).setdefault(str(event["attempt"]), _Attempt())
        if kind == "attempt":
            a.at, a.before = float(event["at"]), list(event.get("before") or [])
            return True
        key = (cast(Stage, event["call_stage"]), str(event["model"]))
        a.open[key] += 1 if kind == "sent" else -1
        if kind == "answered" and event.get("usage"):
            a.answered = merge_usage(a.answered, [event["usage"]])
        return True

    def export(self, thread: str) -> dict[str, Any]:
        """``thread``'s attempts as plain data (a Ray task returns its own with its result)."""
        return {key: {"at": a.at, "before": a.before, "answered": a.answered,
                      "open": [[s, m, n] for (s, m), n in a.open.items() if n]}
                for key, a in self._threads.get(thread, {}).items()}  # fmt: skip

    def settle(self, thread: str, attempts: Mapping[str, Any]) -> None:
        """Take the attempts a finished task reported with its result over their events.

        Events travel apart from the result: the last ones may reach the driver after it.
        """
        mine = self._threads.setdefault(thread, {})
        for key, a in attempts.items():
            opened = Counter({(cast(Stage, s), str(m)): int(n) for s, m, n in a["open"]})
            mine[key] = _Attempt(float(a["at"]), list(a["before"]), list(a["answered"]), opened)

    def attempts(self, thread: str) -> int:
        """How many attempts at ``thread`` began."""
        return sum(1 for a in self._threads.get(thread, {}).values() if a.at < math.inf)

    def usage(self, thread: str, final: Sequence[Usage]) -> list[Usage]:
        """``thread``'s calls and tokens over every attempt (see the module's doc)."""
        attempts = list(self._threads.get(thread, {}).values())
        if not attempts:
            return list(final)
        # The first attempt held the fewest saved calls (checkpoints only grow): no clock of
        # any node decides, nodes' clocks may differ.
        started = [a for a in attempts if a.at < math.inf]
        first = min(started, key=lambda a: (_saved(a.before), a.at)) if started else _Attempt()
        total = merge_usage([], first.before)
        for a in attempts:
            unanswered = [Usage(stage=s, model=m, input_tokens=0, output_tokens=0, calls=n)
                          for (s, m), n in a.open.items() if n > 0]  # fmt: skip
            total = merge_usage(total, [*a.answered, *unanswered])
        return at_least(total, final)


def _saved(usage: Sequence[Usage]) -> int:
    return sum(u["calls"] + u.get("cached_calls", 0) for u in usage)


def at_least(usage: Sequence[Usage], floor: Sequence[Usage]) -> list[Usage]:
    """Per stage and model, each count the larger of the two (both are lower bounds)."""
    rows: dict[tuple[str, str], Usage] = {(u["stage"], u["model"]): Usage(**u) for u in usage}
    for f in floor:
        row = rows.setdefault((f["stage"], f["model"]), Usage(**f))
        row["input_tokens"] = max(row["input_tokens"], f["input_tokens"])
        row["output_tokens"] = max(row["output_tokens"], f["output_tokens"])
        row["calls"] = max(row["calls"], f["calls"])
        for key in MARKED_CALLS:
            if most := max(row.get(key, 0), f.get(key, 0)):
                row[key] = most
    return list(rows.values())
