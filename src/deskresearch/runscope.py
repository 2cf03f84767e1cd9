"""Per-run accounting that lives exactly as long as the run: tokens, retries, the budget.

Every invocation of the compiled graph (``ainvoke``, ``astream``, each input of ``abatch``, a
resume, a served run, a run as a node of a parent graph) gets a fresh ``RunMeter`` in its
config; every node, subgraph and service of that run reaches it with ``current_meter()``.
Nothing about a run is kept in a process-wide table: concurrent runs (a server's) cannot read
or spend each other's budget, and when the run ends its meter goes with it.

Provider limits (slots, pacing, cool-downs) are deliberately *not* per run: they protect a
shared endpoint and live in ``services.limits.Limiter``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.config import get_config
from langgraph.graph.state import CompiledStateGraph
from langgraph.typing import ContextT, InputT, OutputT, StateT

from deskresearch.errors import BudgetExhausted
from deskresearch.records import Stage, Usage

METER_KEY = "__deskresearch_meter"  # "__": LangGraph keeps it out of checkpoint metadata
CallListener = Callable[[Literal["sent", "answered"], Stage, str, Usage | None], None]
"""Hears each model call of a run twice: when it is sent (no usage yet) and when it ends (its
usage, or None when it ended without an answer). A batch counts every attempt's calls with it."""
BUDGETED: frozenset[Stage] = frozenset({"rank_urls", "summarise_chunk", "reduce_page"})
"""Stages that gather evidence: the token budget and the run's retry budget apply to them only,
so a page that eats retries can never leave the keywords, the plan or the report without."""


@dataclass
class RunMeter:
    """What one run has spent: tokens (in flight included) and retries of gathering calls."""

    tokens: int = 0
    retries: int = 0
    budget_stopped: bool = False  # a gathering call was refused for the token budget
    listener: CallListener | None = None  # told of every call sent and answered (a batch's)

    def charge(self, usage: Usage | None) -> None:
        """Add a call's tokens."""
        if usage:
            self.tokens += usage["input_tokens"] + usage["output_tokens"]

    def sending(self, stage: Stage, model: str) -> None:
        """A call is about to be sent (the listener hears it before the provider does)."""
        if self.listener is not None:
            self.listener("sent", stage, model, None)

    def answered(self, stage: Stage, model: str, usage: Usage | None) -> None:
        """A call sent with ``sending`` ended: charge its tokens (None: no answer came)."""
        self.charge(usage)
        if self.listener is not None:
            self.listener("answered", stage, model, usage)

    def check(self, stage: Stage, budget: int) -> None:
        """Refuse a gathering call once ``budget`` (0: none) is spent; the report is always written.

        The budget travels with each call (ModelSpec), so a run resumed in a new process still
        has one (counted afresh there).
        """
        if budget and stage in BUDGETED and self.tokens >= budget:
            self.budget_stopped = True
            raise BudgetExhausted(budget, self.tokens)

    def take_retry(self, stage: Stage, cap: int) -> bool:
        """Count one retry; False once a gathering stage would pass the run's ``cap``."""
        if stage not in BUDGETED:
            return True  # bounded per call by model_attempts
        if self.retries >= cap:
            return False
        self.retries += 1
        return True


def current_meter() -> RunMeter:
    """Return the running graph's meter (a throw-away one outside a scoped run)."""
    try:
        config = get_config()
    except RuntimeError:  # called outside a graph run (a unit test calling a service)
        return RunMeter()
    meter = (config.get("configurable") or {}).get(METER_KEY)
    return meter if isinstance(meter, RunMeter) else RunMeter()


def with_meter(config: RunnableConfig | None) -> RunnableConfig:
    """Return ``config`` carrying a fresh meter (or the enclosing run's, when nested)."""
    given: RunnableConfig = config or {}
    configurable = dict(given.get("configurable") or {})
    if not isinstance(configurable.get(METER_KEY), RunMeter):
        configurable[METER_KEY] = RunMeter()
    return {**given, "configurable": configurable}


@contextmanager
def metered(meter: RunMeter | None = None) -> Iterator[RunMeter]:
    """Count the calls made in the block as one run (services used outside a graph, tests)."""
    meter = meter or RunMeter()
    token = var_child_runnable_config.set({"configurable": {METER_KEY: meter}})
    try:
        yield meter
    finally:
        var_child_runnable_config.reset(token)


class ScopedGraph(CompiledStateGraph[StateT, ContextT, InputT, OutputT]):
    """A compiled graph whose every invocation opens a fresh ``RunMeter``.

    ``ainvoke``/``invoke``/``abatch``/``astream_events`` all go through ``astream``/``stream``.
    """

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """Stream the run, with its own meter."""
        async for chunk in super().astream(input, with_meter(config), **kwargs):
            yield chunk

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """Stream the run, with its own meter."""
        yield from super().stream(input, with_meter(config), **kwargs)
