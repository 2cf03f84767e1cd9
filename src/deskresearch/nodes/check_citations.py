"""check_citations (code) and judge_citations (model calls): is each cited sentence backed?

check_citations decides by words and figures what code can decide; judge_citations asks the
model about the rest, in batches judged at the same time (one branch each, see judge_tasks), and
believes an answer only when the fact it names (by its number) is a fact of the source it names,
and every figure of the sentence is in that fact's quote or in the quotes of the facts the
sentence's source(s) gave the writer; a verdict the facts contradict is disputed, to be asked
again (grounding/weigh.py).
Each branch adds its verdicts to ``judged``; settle_citations merges them.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal

from langgraph.errors import NodeError
from langgraph.runtime import Runtime
from langgraph.types import Command, Overwrite
from pydantic import BaseModel, Field, field_validator

from deskresearch.config.context import Context, resolve
from deskresearch.errors import ServiceError
from deskresearch.grounding.copies import overstated
from deskresearch.grounding.draft import cited_sentences, language_code, parse
from deskresearch.grounding.ledger import ledger_evidence
from deskresearch.grounding.lexical import Evidence, check_sentence
from deskresearch.grounding.weigh import weighed
from deskresearch.nodes.branch_state import JudgeTask
from deskresearch.nodes.fitting import RELEVANT, fit_relevant, fitted_note
from deskresearch.progress import emit
from deskresearch.prompts import judge_citations as prompt
from deskresearch.services.base import ChatService, TokenCounter
from deskresearch.services.model.asking import ask
from deskresearch.state import CheckStatus, ResearchState, SentenceCheck

JUDGE_RESERVE = 1024  # tokens kept free for a batch's verdicts on a local server's window
_LISTED = re.compile(r"\s*\(?\s*(\d+)\s*\)?\s*")  # a fact's number, as listed: "(2)" or "2"
_STATUS: dict[str, CheckStatus] = {
    "supported": "supported",
    "fabricated": "unsupported",
    "undecided": "pending",
}


def lexical_checks(state: ResearchState) -> list[SentenceCheck]:
    """Check every cited sentence of the draft by code (pure; runs off the event loop)."""
    units = parse(state["draft"], state["language"])
    ledger = ledger_evidence(state["sources"], state["pages"])
    language = language_code(state["language"])
    groups = {s["id"]: s.get("origin_group", s["id"]) for s in state["sources"]}
    checks: list[SentenceCheck] = []
    for s in cited_sentences(units):
        if overstated(s.text) and len({groups.get(i, i) for i in s.cites}) < 2:
            checks.append(SentenceCheck(
                unit=s.key[0], index=s.key[1], sentence=s.text, cites=list(s.cites),
                section=s.section, status="unsupported", source=None, quote="",
                decided_by="lexical", candidates=[], replacement="",
                reason="it presents one origin as several: the source(s) it cites carry one text "
                "(copies count once)",
            ))  # fmt: skip
            continue
        found = check_sentence(s.text, s.cites, ledger, language=language)
        checks.append(
            SentenceCheck(
                unit=s.key[0],
                index=s.key[1],
                sentence=s.text,
                cites=list(s.cites),
                section=s.section,
                status=_STATUS[found.outcome],
                source=found.source,
                quote=found.quote,
                decided_by="none" if found.outcome == "undecided" else "lexical",
                reason=found.reason,
                candidates=list(found.candidates),
                replacement="",
            )
        )
    return checks


def _counts(checks: list[SentenceCheck]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for c in checks:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    return counts


async def check_citations(state: ResearchState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Decide each cited sentence by code where words and figures can; leave the rest pending."""
    checks = await asyncio.to_thread(lexical_checks, state)
    emit(runtime, "check_citations", "finished", sentences=len(checks), **_counts(checks))
    # A new pass: no verdict of an earlier one may reach settle_citations.
    return {"checks": checks, "judged": Overwrite([])}


class Judgement(BaseModel):
    """The model's verdict on one sentence."""

    sentence: int = Field(description="The sentence's number (S1 is 1).")
    verdict: Literal["supported", "other_source", "unsupported"]
    source: int | None = Field(
        default=None,
        description="The source that states it: one it cites (supported) or another (other_source).",
    )
    fact: int | None = Field(
        default=None, description="The number of that source's fact that decides it ((1) is 1)."
    )

    @field_validator("fact", mode="before")
    @classmethod
    def _a_number(cls, value: object) -> object:
        """Read "(2)" as listed as 2; anything else that is no whole number names no fact.

        A sentence whose number is unreadable is then overruled alone, where a validation
        error would leave the whole batch unchecked.
        """
        if isinstance(value, str) and (digits := _LISTED.fullmatch(value)):
            return int(digits.group(1))
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value if isinstance(value, int) and not isinstance(value, bool) else None


class Judgements(BaseModel):
    """The model's verdicts, one per sentence."""

    judgements: list[Judgement]


def named_quote(j: Judgement, ledger: Mapping[int, Evidence]) -> str:
    """The quote of the fact the verdict names ("" when the source has no such fact)."""
    ev = ledger.get(j.source) if j.source is not None else None
    if ev is None or j.fact is None or not 1 <= j.fact <= len(ev.quotes):
        return ""
    return ev.quotes[j.fact - 1]


def verified(
    check: SentenceCheck,
    j: Judgement,
    ledger: Mapping[int, Evidence],
    listed: Mapping[int, Sequence[int]] | None = None,
) -> SentenceCheck:
    """Turn the model's verdict into a status, weighed against what code can check of it.

    The judge names a fact by its number; code weighs the verdict with that fact's quote (a
    number it can look up, where a quote it copied would have to be found in the page).
    ``listed``: when its prompt listed only some facts of each source, their numbers in the
    source, in the order listed (the judge's (1) is the first); a number past them is no fact.
    """
    if j.verdict == "unsupported":
        return weighed(check, j.verdict, j.source, "", ledger)
    if listed is not None and j.fact is not None:
        shown = listed.get(j.source or 0, ())
        if not 1 <= j.fact <= len(shown):
            no_quote = f"the judge named fact ({j.fact}), which its prompt did not list for source [{j.source}]"
            return weighed(check, j.verdict, j.source, "", ledger, no_quote=no_quote)
        j = j.model_copy(update={"fact": shown[j.fact - 1]})  # its number in the source
    no_quote = (
        f"the judge named no fact of source [{j.source}]"
        if j.fact is None
        else f"the judge named fact ({j.fact}), which source [{j.source}] does not have"
    )
    return weighed(check, j.verdict, j.source, named_quote(j, ledger), ledger, no_quote=no_quote)


def split_batches(
    keys: Sequence[tuple[str, int]],
    size: int,
    shown: Sequence[Collection[int]] = (),
    weight: Mapping[int, int] | None = None,
) -> list[list[int]]:
    """Split sentences, in draft order, into runs judged one call each.

    ``keys`` gives each sentence's (section, paragraph), ``shown`` the sources its prompt
    shows, ``weight`` the size of each source's evidence (default 1). As few batches as
    ``size`` allows (ceil(n/size)), none over an even share (the slowest call sets the time);
    of those splits, the one that sends the least evidence (a batch repeats the evidence of
    every source it shows), then the one that cuts fewest sections and paragraphs.
    """
    n = len(keys)
    if n == 0:
        return []
    k = -(-n // size)
    most = -(-n // k)
    sets = [frozenset(x) for x in shown] if shown else [frozenset[int]()] * n
    w = weight or {}

    def cut(i: int) -> int:  # a batch starting at sentence i: 0 a new section, 2 mid-paragraph
        return 0 if keys[i][0] != keys[i - 1][0] else 1 if keys[i][1] != keys[i - 1][1] else 2

    none = (1 << 60, 0)
    # best[j][i]: least (evidence, cuts) of the first i sentences in j batches; start: last batch's
    best = [[none] * (n + 1) for _ in range(k + 1)]
    start = [[0] * (n + 1) for _ in range(k + 1)]
    best[0][0] = (0, 0)
    for j in range(1, k + 1):
        for i in range(1, n + 1):
            union: set[int] = set()
            for b in range(i - 1, max(0, i - most) - 1, -1):  # the batch b..i-1, grown leftwards
                union |= sets[b]
                if (prev := best[j - 1][b]) == none:
                    continue
                cost = (prev[0] + sum(w.get(x, 1) for x in union), prev[1] + (cut(b) if b else 0))
                if cost < best[j][i]:
                    best[j][i], start[j][i] = cost, b
    out: list[list[int]] = []
    i = n
    for j in range(k, 0, -1):
        out.append(list(range(start[j][i], i)))
        i = start[j][i]
    return out[::-1]


def judge_tasks(state: ResearchState, size: int) -> list[JudgeTask]:
    """One task per batch of the sentences check_citations left pending (see split_batches)."""
    pending = [c for c in state["checks"] if c["status"] == "pending"]
    by_id = {s["id"]: s for s in state["sources"]}
    shown = [sorted({*c["cites"], *c["candidates"]} & set(by_id)) for c in pending]
    weight = {sid: len(prompt.format_evidence({sid: by_id[sid]}, numbered=True)) for sid in by_id}
    keys = [(c["section"], c["unit"]) for c in pending]
    groups = split_batches(keys, size, shown, weight)
    read = {p["text_hash"]: p for p in state["pages"]}
    tasks = []
    for n, group in enumerate(groups):
        sources = [by_id[sid] for sid in sorted({sid for i in group for sid in shown[i]})]
        hashes = dict.fromkeys(s["text_hash"] for s in sources if s["text_hash"] in read)
        tasks.append(JudgeTask(batch=n + 1, batches=len(groups), pending=len(pending),
                               checks=[pending[i] for i in group], sources=sources,
                               pages=[read[h] for h in hashes]))  # fmt: skip
    return tasks


async def judge_citations(
    state: JudgeTask, runtime: Runtime[Context], *, llm: ChatService, tokens: TokenCounter
) -> dict[str, Any]:
    """Ask the model, in one call, about one batch of the sentences code left pending.

    On a local server's window, a prompt too long keeps of each source the facts that share
    most words with the batch's sentences (at least one a source), numbered as listed.
    """
    ctx = resolve(runtime)
    batch, spec = state["checks"], ctx.judge_spec()
    sentences = [(n + 1, c["sentence"], c["cites"]) for n, c in enumerate(batch)]
    sources = {s["id"]: s for s in state["sources"]}
    messages, fitted = await fit_relevant(
        sources, [c["sentence"] for c in batch],
        lambda shown: prompt.render(sentences=sentences, sources=sources, shown=shown),
        ctx=ctx, spec=spec, reserve=JUDGE_RESERVE, tokens=tokens,
    )  # fmt: skip
    emit(runtime, "judge_citations", "started", sentences=len(batch), batch=state["batch"],
         batches=state["batches"], pending=state["pending"])  # fmt: skip
    answer = await ask(llm, messages, Judgements, spec=spec, stage="judge_citations")
    ledger = ledger_evidence(state["sources"], state["pages"])
    verdicts = {j.sentence: j for j in answer.value.judgements} if answer.value else {}
    out: list[SentenceCheck] = []
    listed = (
        {sid: sorted(g) for sid, g in zip(sources, fitted.groups, strict=True)}
        if fitted.cap
        else None
    )
    for n, check in enumerate(batch):
        j = verdicts.get(n + 1)
        if j is None:
            why = answer.problem or "the judge gave no verdict for it"
            out.append({**check, "status": "unchecked", "reason": f"not checked: {why}"})
        else:
            out.append(verified(check, j, ledger, listed))
    emit(runtime, "judge_citations", "finished", batch=state["batch"], **_counts(out))
    subject = f"batch {state['batch']} of {state['batches']}"
    provenance = fitted_note("judge_citations", subject, fitted, ctx, spec, which=RELEVANT)
    return {"judged": out, "usage": answer.usage, "provenance": provenance}


def judge_failed(state: JudgeTask, error: NodeError) -> Command[Any]:
    """A judge call failed for good: its batch stays in the report, marked unchecked.

    The branch goes on to settle_citations as a finished one would (an error handler's branch
    has no edges of its own: without the ``goto``, a draft whose every batch failed would never
    be settled), and settle_citations, after every branch, decides where the report goes.
    """
    if not isinstance(error.error, ServiceError):
        raise error.error
    reason = f"not checked: the judge call failed ({error.error})"
    judged = [{**c, "status": "unchecked", "reason": reason} for c in state["checks"]]
    return Command(update={"judged": judged}, goto="settle_citations")
