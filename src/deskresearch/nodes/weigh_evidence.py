"""weigh_evidence: find where independent sources disagree, and which figures changed over time.

Runs beside plan_report, on the facts already taken (claims and quotes, never whole pages).
Code pairs the facts of different origins that give different values for much the same thing
(grounding.conflicts); only when there is such a pair is the model asked, once, which pairs are
about the same thing. Code then splits each thing's facts by value and decides from the dates
whether the values disagree or one replaced the other. No pair, no call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.errors import NodeError
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BaseModel, Field

from deskresearch.config.context import Context, resolve
from deskresearch.errors import ServiceError
from deskresearch.grounding.conflicts import (
    Cluster,
    FactRef,
    Kind,
    Pair,
    candidate_pairs,
    clusters,
    when,
)
from deskresearch.grounding.conflicts import value_of as side_value
from deskresearch.progress import emit, note
from deskresearch.prompts import weigh_evidence as prompt
from deskresearch.records import Change, Disagreement, Provenance, Source, ValueSide
from deskresearch.services.base import ChatService
from deskresearch.services.model.asking import ask
from deskresearch.state import ResearchState
from deskresearch.text.plural import plural

MAX_CITED_ORIGINS = 3  # origins a side's sentence cites (its sources list keeps them all)


class SameThing(BaseModel):
    """The model's answer for one pair."""

    pair: int = Field(description="The pair's number (P1 is 1).")
    same: bool = Field(description="Both facts state the same thing for the same scope.")
    about: str = Field(default="", description="What it is about, in a few words (when same).")


class Comparisons(BaseModel):
    """The model's answers, one per pair."""

    pairs: list[SameThing]


def fact_refs(sources: Sequence[Source]) -> list[FactRef]:
    """Every fact of the ledger, numbered, with its source's origin group and date."""
    refs: list[FactRef] = []
    for s in sources:
        for f in s["facts"]:
            refs.append(FactRef(len(refs) + 1, s["id"], s.get("origin_group", s["id"]),
                                f["claim"], f["quote"], s["published"]))  # fmt: skip
    return refs


def _side(facts: Sequence[FactRef], kind: Kind, sources: Sequence[Source]) -> ValueSide:
    """A value with every source that states it: its facts' sources and their copies."""
    by_id = {s["id"]: s for s in sources}
    groups = list(dict.fromkeys(f.group for f in facts))
    members = [s for s in sources if s.get("origin_group", s["id"]) in groups]
    cites = list(dict.fromkeys(f.source for f in facts))
    one_each: dict[int, int] = {}
    for sid in cites:
        one_each.setdefault(by_id[sid].get("origin_group", sid), sid)
    return ValueSide(
        value=side_value(facts, kind),
        claim=facts[0].claim,
        quote=facts[0].quote,
        sources=[s["id"] for s in members],
        cites=list(one_each.values())[:MAX_CITED_ORIGINS],
        origins=len(groups),
        published=[s["published"] for s in members],
        urls=[s["url"] for s in members],
        as_of=str(when(facts) or ""),
    )


def records_of(
    found: Sequence[Cluster], sources: Sequence[Source]
) -> tuple[list[Disagreement], list[Change]]:
    """Turn clusters into the run's disagreements and changes over time."""
    disagreements: list[Disagreement] = []
    changes: list[Change] = []
    for c in found:
        sides = [_side(s, c.kind, sources) for s in c.sides]
        if c.change:
            changes.append(Change(about=c.about, current=sides[0], earlier=sides[1:]))
        else:
            disagreements.append(
                Disagreement(about=c.about, kind=c.kind, sides=sides, checked=False)
            )
    return disagreements, changes


def _lines(disagreements: Sequence[Disagreement], changes: Sequence[Change]) -> list[Provenance]:
    out = []
    for d in disagreements:
        said = "; ".join(f"{s['value']} ({', '.join(f'[{i}]' for i in s['sources'])})"
                         for s in d["sides"])  # fmt: skip
        out.append(note("weigh_evidence", d["about"], "weighed", f"sources disagree: {said}"))
    for ch in changes:
        now = ch["current"]
        was = "; ".join(f"{s['value']} ({', '.join(s['published'][:1]) or 'undated'})"
                        for s in ch["earlier"])  # fmt: skip
        why = (
            f"changed over time: now {now['value']} ({', '.join(now['published'][:1])}), was {was}"
        )
        out.append(note("weigh_evidence", ch["about"], "weighed", why))
    return out


def _same(answer: Comparisons | None, pairs: Sequence[Pair]) -> dict[int, str]:
    """Pair number → what it is about, for the pairs the model called the same thing."""
    known = {p.number for p in pairs}
    out: dict[int, str] = {}
    for a in answer.pairs if answer else []:
        if a.same and a.pair in known:
            label = " ".join(a.about.replace("#", " ").split())[:120]
            out[a.pair] = label or next(p.a.claim for p in pairs if p.number == a.pair)
    return out


async def weigh_evidence(
    state: ResearchState, runtime: Runtime[Context], *, llm: ChatService
) -> dict[str, Any]:
    """Find disagreements and changes over time among the ledger's independent sources."""
    ctx = resolve(runtime)
    sources = state["sources"]
    pairs = candidate_pairs(fact_refs(sources)) if ctx.weigh_evidence else []
    if not pairs:
        emit(runtime, "weigh_evidence", "finished", pairs=0, disagreements=0, changes=0)
        return {"disagreements_found": [], "changes": []}
    shown = {f.number: f for p in pairs for f in (p.a, p.b)}
    messages = prompt.render(
        topic=state["topic"],
        facts=[(f.number, f.source, f.published, f.claim, f.quote) for f in shown.values()],
        pairs=[(p.number, p.a.number, p.b.number) for p in pairs],
        language=state["language"],
    )
    answer = await ask(llm, messages, Comparisons, spec=ctx.report_spec(), stage="weigh_evidence")
    disagreements, changes = records_of(clusters(pairs, _same(answer.value, pairs)), sources)
    provenance = _lines(disagreements, changes)
    if answer.value is None:
        why = f"no disagreement recorded: the weighing answer was unusable ({answer.problem})"
        provenance.append(note("weigh_evidence", state["topic"], "fallback", why))
    emit(runtime, "weigh_evidence", "finished", pairs=len(pairs),
         disagreements=len(disagreements), changes=len(changes))  # fmt: skip
    found = plural(len(pairs), "pair")
    provenance.append(note("weigh_evidence", state["topic"], "weighed",
                           f"{found} of independent facts with different values compared"))  # fmt: skip
    return {"disagreements_found": disagreements, "changes": changes, "usage": answer.usage,
            "provenance": provenance}  # fmt: skip


def weigh_failed(state: ResearchState, error: NodeError) -> Command[Any]:
    """The weighing call failed for good: the report is written without weighing, saying so."""
    if not isinstance(error.error, ServiceError):
        raise error.error
    why = f"nothing weighed: the weighing call failed ({error.error})"
    return Command(
        update={"disagreements_found": [], "changes": [],
                "provenance": [note("weigh_evidence", state["topic"], "failed", why)]},
        goto="brief_writers",
    )  # fmt: skip


def brief_writers(state: ResearchState) -> dict[str, Any]:
    """The join that closes a round: the reflection, the outline and the weighing are in.

    Its router starts the next round when the reflection planned follow-ups (the outline and
    the weighing, made on the ledger so far, are then set aside: this says so), else hands each
    section writer its sources and the findings that concern them.
    """
    if not state["followups"] or not state["sources"]:
        return {}
    made = "the outline and the weighing" if state.get("outline") else "the weighing"
    why = (
        f"{made} of round {state['round'] - 1} set aside: round {state['round']} follows "
        "leads (their calls are counted in usage)"
    )
    return {"provenance": [note("brief_writers", state["topic"], "skipped", why)]}
