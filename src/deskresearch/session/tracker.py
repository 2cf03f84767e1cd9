"""What a session knows of a run while it streams: counts per stage, tokens, timings.

Two streams feed it. LangGraph's ``tasks`` stream says when each node starts and ends (so a
stage's "k of n" is tasks finished of tasks started, whatever the stage), and the ``custom``
stream carries our progress events (``{"stage", "event", ...}``, see deskresearch.progress) for
details such as pages that failed. The CLI's panel (and any other view) is driven by LINES: a
new stage is one line there, and ``Tracker.rows`` says what each line shows (the panel draws
them, the web page sends them). ``event_line`` is one event in words: the CLI's plain view
prints it, ``deskresearch mcp`` sends it as a progress notification.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from deskresearch.config.pricing import estimate
from deskresearch.records import StageClock, Usage
from deskresearch.text.plural import plural


def event_line(event: dict[str, Any]) -> str:
    """One progress event as a line: ``[read_page] finished url=... chunks=3`` (scalars only)."""
    details = " ".join(
        f"{k}={v}"
        for k, v in event.items()
        if k not in ("stage", "event") and not isinstance(v, list | dict)
    )
    return f"[{event.get('stage')}] {event.get('event')} {details}".rstrip()


def _listed(key: str) -> Callable[[dict[str, Any]], str]:
    def detail(event: dict[str, Any]) -> str:
        return ", ".join(str(v) for v in event.get(key) or [])

    return detail


def _counted(key: str, word: str, many: str = "") -> Callable[[dict[str, Any]], str]:
    def detail(event: dict[str, Any]) -> str:
        return plural(int(event[key]), word, many) if key in event else ""

    return detail


@dataclass(frozen=True)
class Line:
    """One line of the panel: the stages it counts, and what else it shows."""

    label: str
    stages: tuple[str, ...]
    counted: bool = True  # show tasks finished / started
    notes: tuple[tuple[str, str], ...] = ()  # (event name, word): tallied, e.g. "2 failed"
    detail: Callable[[dict[str, Any]], str] | None = None  # from the latest event's fields
    one: str = ""  # the label for a count of 1 ("page read"); "" when it is the same

    def counted_as(self, n: int) -> str:
        """``n`` with the label in the right number: 1 page read, 2 pages read."""
        return f"{n} {self.one if n == 1 and self.one else self.label}"


def _citations(event: dict[str, Any]) -> str:
    """What the citation check is doing, then its verdicts (finish_report's summary line)."""
    if "citations" in event:
        return str(event["citations"])
    if event.get("event") == "started" and event.get("stage") == "judge_citations":
        # One event per batch: the draft's total, not this batch's share.
        calls = event.get("batches", 1)
        judged = plural(event.get("pending", event.get("sentences", 0)), "sentence")
        return f"judging {judged}" + (f" in {calls} calls" if calls > 1 else "")
    if event.get("event") == "started":
        return f"repairing {plural(event.get('sentences', 0), 'sentence')}"
    if event.get("stage") == "check_citations":
        return plural(event.get("sentences", 0), "cited sentence")
    return ""


def _round(event: dict[str, Any]) -> str:
    """Which round just ended, and what the next one searches (or why there is none)."""
    if "round" not in event:
        return ""
    done = f"round {event['round']} of {event.get('rounds', event['round'])}"
    if event.get("followups"):
        return f"{done}; next: " + ", ".join(str(q) for q in event["followups"])
    gaps = int(event.get("gaps") or 0)
    return f"{done}; " + (f"{plural(gaps, 'gap')} left open" if gaps else "no gaps left")


def _sources(event: dict[str, Any]) -> str:
    """Sources numbered, and how many independent origins they are when copies were found."""
    if "sources" not in event:
        return ""
    n, origins = int(event["sources"]), int(event.get("origins", event["sources"]))
    return f"{n} numbered" + (f", {plural(origins, 'independent origin')}" if origins < n else "")


def _weighed(event: dict[str, Any]) -> str:
    """What weighing found: disagreements and changes, or that there was nothing to weigh."""
    if "pairs" not in event:
        return ""
    if not event["pairs"]:
        return "nothing to weigh"
    found = [
        plural(int(event.get("disagreements") or 0), "disagreement"),
        plural(int(event.get("changes") or 0), "change over time", "changes over time"),
    ]
    return f"{plural(int(event['pairs']), 'pair')} compared: " + ", ".join(found)


LINES: tuple[Line, ...] = (
    Line("keywords", ("generate_keywords", "keywords_fallback"), False, detail=_listed("keywords")),
    Line("searches", ("search_keyword", "search_query"), one="search"),
    Line("queries planned", ("plan_queries",), False, detail=_listed("queries")),
    Line("results ranked", ("rank_urls",), one="result ranked"),
    Line(
        "pages read",
        ("read_page",),
        notes=(("fallback", "failed"), ("rejected", "rejected")),
        one="page read",
    ),  # fmt: skip
    Line("chunks summarised", ("summarise_chunk",), one="chunk summarised"),
    Line("pages merged", ("reduce_page",), notes=(("dropped", "not relevant"),), one="page merged"),
    Line("research rounds", ("reflect",), False, detail=_round),
    Line("sources", ("collect_sources",), False, detail=_sources),
    Line("evidence weighed", ("weigh_evidence",), False, detail=_weighed),
    Line(
        "report outline",
        ("plan_report",),
        False,
        (("fallback", "one call instead"),),
        _counted("sections", "section"),
    ),  # fmt: skip
    Line("report sections", ("write_section", "write_report"), one="report section"),
    Line(
        "citations checked",
        (
            "check_citations",
            "judge_citations",
            "settle_citations",
            "repair_report",
            "recheck_citations",
            "finish_report",
        ),
        False,
        detail=_citations,
    ),  # fmt: skip
)


@dataclass(frozen=True)
class Row:
    """What one line of the panel shows now (a line not reached yet has none)."""

    label: str
    done: bool  # False: still running
    finished: int
    started: int
    counted: bool  # show finished / started
    extra: str  # its notes ("2 failed") and its detail, "; " between
    seconds: float  # from its first event to its last (to now while it runs)


@dataclass
class LineState:
    """What one line has seen so far."""

    started: int = 0
    finished: int = 0
    first: float | None = None
    last: float | None = None
    notes: Counter[str] = field(default_factory=Counter)
    detail: str = ""


class Tracker:
    """Turns stream chunks into per-line counts, token totals and per-stage timings.

    Args:
        subgraphs: names of nodes that are subgraphs; their results repeat their inner nodes'
            usage, which is counted where it happens.
    """

    def __init__(self, lines: Iterable[Line] = LINES, subgraphs: Iterable[str] = ()) -> None:
        self.lines = tuple(lines)
        self.subgraphs = frozenset(subgraphs)
        self.start = time.monotonic()
        self.state = {line.label: LineState() for line in self.lines}
        self.clocks: dict[str, StageClock] = {}
        self.usage: list[Usage] = []
        self.events: list[dict[str, Any]] = []
        self._running: dict[str, tuple[str, float]] = {}  # task id → (name, start)
        self.ended = False

    def _lines_of(self, stage: str) -> list[tuple[Line, LineState]]:
        return [(ln, self.state[ln.label]) for ln in self.lines if stage in ln.stages]

    def elapsed(self) -> float:
        """Seconds since the tracker started."""
        return time.monotonic() - self.start

    def custom(self, event: dict[str, Any]) -> None:
        """Take one progress event."""
        self.events.append(event)
        now = self.elapsed()
        for line, st in self._lines_of(str(event.get("stage"))):
            st.first = now if st.first is None else st.first
            st.last = now
            for name, word in line.notes:
                if event.get("event") == name:
                    st.notes[word] += 1
            if line.detail and (text := line.detail(event)):
                st.detail = text
            if not line.counted and event.get("event") == "finished":
                st.started = st.finished = 1

    def task(self, payload: dict[str, Any]) -> None:
        """Take one ``tasks`` stream chunk (a task's start, or its result)."""
        name, task_id, now = str(payload.get("name")), str(payload.get("id")), self.elapsed()
        if name.startswith("__"):
            return
        lines = self._lines_of(name)
        if "result" not in payload and "error" not in payload:  # a start
            self._running[task_id] = (name, now)
            for line, st in lines:
                st.first = now if st.first is None else st.first
                if line.counted:
                    st.started += 1
            return
        _, began = self._running.pop(task_id, (name, now))
        clock = self.clocks.setdefault(name, StageClock())
        clock.tasks += 1
        clock.first = began if clock.first is None else min(clock.first, began)
        clock.last = now
        clock.busy += now - began
        for line, st in lines:
            st.last = now
            if line.counted:
                st.finished += 1
        result = payload.get("result")
        usage = result.get("usage") if isinstance(result, dict) else None
        if name not in self.subgraphs and isinstance(usage, list):  # not a reset (Overwrite)
            self.usage.extend(cast(list[Usage], [u for u in usage if isinstance(u, dict)]))

    def tokens(self) -> tuple[int, int]:
        """Input and output tokens seen so far."""
        return (
            sum(u["input_tokens"] for u in self.usage),
            sum(u["output_tokens"] for u in self.usage),
        )

    def cost(self) -> str:
        """The estimated cost so far, as text."""
        usd, unpriced = estimate(self.usage)
        if unpriced:
            return f"cost: no price for {', '.join(unpriced)}"
        return f"≈ ${usd:.4f}"

    def status(self, label: str) -> str:
        """``pending``, ``running`` or ``done`` for one line."""
        st = self.state[label]
        if st.first is None:
            return "pending"
        if self.ended:
            return "done"
        for line in self.lines:
            if line.label == label:
                break
            if self.status(line.label) == "running":
                return "running"  # more work may still reach this line
        return "done" if st.finished >= st.started and not self._busy(label) else "running"

    def _busy(self, label: str) -> bool:
        stages = next(ln.stages for ln in self.lines if ln.label == label)
        # The live view's refresh thread reads while the stream adds tasks: iterate a copy
        # (list() of a dict's values runs without releasing the GIL).
        return any(name in stages for name, _ in list(self._running.values()))

    def rows(self) -> list[Row]:
        """The panel's lines as they stand, in order, those not reached yet left out."""
        now, rows = self.elapsed(), []
        for line in self.lines:
            st, status = self.state[line.label], self.status(line.label)
            if status == "pending":
                continue
            notes = ", ".join(f"{n} {w}" for w, n in list(st.notes.items()) if n)  # see _busy
            end = st.last if status == "done" and st.last is not None else now
            rows.append(Row(line.label, status == "done", st.finished, st.started, line.counted,
                            "; ".join(p for p in (notes, st.detail) if p),
                            end - (st.first or 0.0)))  # fmt: skip
        return rows

    def stage_timings(self) -> dict[str, StageClock]:
        """Per node: tasks run, first start and last end (seconds from the start), busy time."""
        return dict(self.clocks)

    def summary(self) -> str:
        """What was done, in a few words (for the interrupt message)."""
        parts = []
        for line in self.lines:
            st = self.state[line.label]
            if line.counted and st.finished:
                parts.append(line.counted_as(st.finished))
        return ", ".join(parts)
