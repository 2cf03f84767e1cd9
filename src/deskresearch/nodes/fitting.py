"""The report's prompts fitted to the window a local server gives its model, and the note saying so.

Used by reflect, plan_report, write_section and write_report (each source's first facts), and
judge_citations and repair_report (the facts sharing most words with their sentences, through
``fit_relevant``): each renders its prompt from groups of facts (``prompts.fit``). A run on a hosted API (no window
to fit) renders it whole without counting a token; a fitted one counts in a thread, as the
first count loads the tokenizer (about 0.8 s) and the other branches go on meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from langchain_core.messages import BaseMessage

from deskresearch.config.context import Context
from deskresearch.progress import note
from deskresearch.prompts.fit import Fitted, fit_groups
from deskresearch.records import Fact, ModelSpec, Provenance, Source, Stage
from deskresearch.services.base import TokenCounter
from deskresearch.services.model.cut import CONTEXT_FIX
from deskresearch.services.model.tokens import served_window
from deskresearch.services.model.usage import prompt_text
from deskresearch.text.plural import plural
from deskresearch.text.relevance import by_relevance

T = TypeVar("T")
TOKENS_PER_WORD = 2  # a written word is 1.3-1.8 tokens in English and German; room to spare
FIRST = "its first {n}"  # which facts a group keeps, as fitted_note says it
RELEVANT = "the {n} sharing most words with the sentences"


def answer_reserve(words: int) -> int:
    """Tokens kept free for an answer of about ``words`` words (at least 1,024)."""
    return max(1024, TOKENS_PER_WORD * words)


def _fact_numbers(sources: Sequence[Source], said: Sequence[str], *, rank: bool) -> list[list[int]]:
    """Each source's fact numbers (from 1); with ``rank``, those sharing most words with ``said`` first."""
    if not rank:
        return [list(range(1, len(s["facts"]) + 1)) for s in sources]
    return [
        [i + 1 for i in by_relevance([f"{f['claim']} {f['quote']}" for f in s["facts"]], said)]
        for s in sources
    ]


async def fit_prompt(
    groups: Sequence[Sequence[T]],
    render: Callable[[list[list[T]]], list[BaseMessage]],
    *,
    window: int | None,
    reserve: int,
    tokens: TokenCounter,
) -> tuple[list[BaseMessage], Fitted[T]]:
    """The prompt rendered from as much of ``groups`` as fits ``window`` less ``reserve`` tokens.

    ``reserve`` is kept for the answer (a local server's window holds the prompt and the answer),
    but never more than three quarters of it. No ``max_tokens`` is sent: an answer that outgrows
    what is left is the server's to handle (Ollama shifts its context, dropping the prompt's
    start), so the answer's room goes first.
    """
    if window is None:
        whole = [list(g) for g in groups]
        n = sum(len(g) for g in whole)
        return render(whole), Fitted(whole, n, n, None)
    budget = max(window - reserve, window // 4)

    def fit() -> tuple[list[BaseMessage], Fitted[T]]:
        fitted = fit_groups(groups, lambda gs: tokens.fits(prompt_text(render(gs)), budget))
        return render(fitted.groups), fitted

    return await asyncio.to_thread(fit)


async def fit_sources(
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

    return await fit_prompt([s["facts"] for s in sources], with_facts,
                            window=served_window(ctx, spec), reserve=reserve, tokens=tokens)  # fmt: skip


async def fit_relevant(
    sources: Mapping[int, Source],
    said: Sequence[str],
    render: Callable[[dict[int, list[int]]], list[BaseMessage]],
    *,
    ctx: Context,
    spec: ModelSpec,
    reserve: int,
    tokens: TokenCounter,
) -> tuple[list[BaseMessage], Fitted[int]]:
    """``fit_prompt`` on each source's fact numbers, those sharing most words with ``said`` first.

    On a local server's window only (else all, in order). ``render`` takes {source id: the
    numbers of its facts to list}: the judge's and the rewrite's prompts.
    """
    window = served_window(ctx, spec)
    ranked = _fact_numbers(list(sources.values()), said, rank=window is not None)
    return await fit_prompt(
        ranked,
        lambda groups: render(dict(zip(sources, groups, strict=True))),
        window=window,
        reserve=reserve,
        tokens=tokens,
    )


def fitted_note(
    stage: Stage,
    subject: str,
    fitted: Fitted[T],
    ctx: Context,
    spec: ModelSpec,
    *,
    group: str = "source",
    which: str = FIRST,
) -> list[Provenance]:
    """One ``skipped`` line when facts were left out of the prompt (none when all of them fit)."""
    if fitted.kept == fitted.total:
        return []
    window = served_window(ctx, spec) or 0
    kept = "fact" if fitted.cap == 1 else plural(fitted.cap or 0, "fact")
    reason = (
        f"{fitted.total - fitted.kept:,} of {plural(fitted.total, 'fact')} left out of the "
        f"prompt (each {group} kept at most {which.format(n=kept)}) to fit the {window:,}-token "
        f"context a local server gives {spec.model}; to give it more, {CONTEXT_FIX}"
    )
    return [note(stage, subject, "skipped", reason)]
