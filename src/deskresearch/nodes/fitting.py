"""The report's prompts fitted to the window a local server gives its model, and the note saying so.

Used by reflect, plan_report, write_section and write_report: each renders its prompt from
groups of facts (``prompts.fit``), and a run on a hosted API (no window to fit) renders it whole
without counting a token.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from langchain_core.messages import BaseMessage

from deskresearch.config.context import Context
from deskresearch.progress import note
from deskresearch.prompts.fit import Fitted, fit_groups
from deskresearch.records import Fact, ModelSpec, Provenance, Source, Stage
from deskresearch.services.base import TokenCounter
from deskresearch.services.model.cut import CONTEXT_FIX
from deskresearch.services.model.tokens import count_tokens, served_window, surely_fits
from deskresearch.services.model.usage import prompt_text
from deskresearch.text.plural import plural
from deskresearch.text.relevance import by_relevance

T = TypeVar("T")
MIN_PROMPT = 1024  # a window smaller than the answer's reserve still gets a prompt
TOKENS_PER_WORD = 2  # a written word is 1.3-1.8 tokens in English and German; room to spare


def answer_reserve(words: int) -> int:
    """Tokens kept free for an answer of about ``words`` words (at least 1,024)."""
    return max(1024, TOKENS_PER_WORD * words)


def prompt_fits(messages: Sequence[BaseMessage], window: int, reserve: int) -> bool:
    """Whether ``messages`` leave ``reserve`` tokens of ``window`` for the answer."""
    budget = max(window - reserve, MIN_PROMPT)
    text = prompt_text(messages)
    return surely_fits(text, budget) or count_tokens(text) <= budget


def halves(items: list[T], fits: Callable[[list[T]], bool]) -> list[list[T]]:
    """``items`` as one part if it ``fits``, else split in halves until each fits (or is one item)."""
    if len(items) <= 1 or fits(items):
        return [items]
    mid = len(items) // 2
    return halves(items[:mid], fits) + halves(items[mid:], fits)


def fact_numbers(sources: Sequence[Source], said: Sequence[str], *, rank: bool) -> list[list[int]]:
    """Each source's fact numbers (from 1); with ``rank``, those sharing most words with ``said`` first.

    A judge prompt fitted to a window keeps the facts that can decide its sentences.
    """
    if not rank:
        return [list(range(1, len(s["facts"]) + 1)) for s in sources]
    return [
        [i + 1 for i in by_relevance([f"{f['claim']} {f['quote']}" for f in s["facts"]], said)]
        for s in sources
    ]


def fit_prompt(
    groups: Sequence[Sequence[T]],
    render: Callable[[list[list[T]]], list[BaseMessage]],
    *,
    window: int | None,
    reserve: int,
    tokens: TokenCounter,
) -> tuple[list[BaseMessage], Fitted[T]]:
    """The prompt rendered from as much of ``groups`` as fits ``window`` less ``reserve`` tokens.

    ``reserve`` is kept for the answer (a local server's window holds the prompt and the answer).
    """
    if window is None:
        whole = [list(g) for g in groups]
        n = sum(len(g) for g in whole)
        return render(whole), Fitted(whole, n, n, None)
    budget = max(window - reserve, MIN_PROMPT)
    fitted = fit_groups(groups, lambda gs: tokens.fits(prompt_text(render(gs)), budget))
    return render(fitted.groups), fitted


def fit_sources(
    sources: Sequence[Source],
    render: Callable[[list[Source]], list[BaseMessage]],
    *,
    ctx: Context,
    spec: ModelSpec,
    reserve: int,
    tokens: TokenCounter,
) -> tuple[list[BaseMessage], Fitted[Fact]]:
    """``fit_prompt`` on the sources' facts: each source keeps its first facts, at least one."""

    def with_facts(groups: list[list[Fact]]) -> list[BaseMessage]:
        return render([Source(**{**s, "facts": g}) for s, g in zip(sources, groups, strict=True)])

    return fit_prompt([s["facts"] for s in sources], with_facts,
                      window=served_window(ctx, spec), reserve=reserve, tokens=tokens)  # fmt: skip


def fitted_note(
    stage: Stage,
    subject: str,
    fitted: Fitted[T],
    ctx: Context,
    spec: ModelSpec,
    group: str = "source",
) -> list[Provenance]:
    """One ``skipped`` line when facts were left out of the prompt (none when all of them fit)."""
    if fitted.kept == fitted.total:
        return []
    window = served_window(ctx, spec) or 0
    first = "fact" if fitted.cap == 1 else plural(fitted.cap or 0, "fact")
    reason = (
        f"{fitted.total - fitted.kept:,} of {plural(fitted.total, 'fact')} left out of the "
        f"prompt (each {group} kept at most its first {first}) to fit the {window:,}-token "
        f"context a local server gives {spec.model}; to give it every fact, {CONTEXT_FIX}"
    )
    return [note(stage, subject, "skipped", reason)]
