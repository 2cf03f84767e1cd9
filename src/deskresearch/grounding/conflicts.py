"""Disagreements between independent sources: candidates found by code, settled by dates.

Code finds the pairs worth asking about: two facts of *different origins* (copies of one text
never disagree with themselves) that speak of much the same thing (their content words
overlap) and give different values: figures that no rounding, hedge or unit reconciles
(``grounding.quantities``), different years for the same event, a yes and a no, or different
names. Whether two such facts are about the same thing for the same scope is the model's
judgement (one call per run, nodes/weigh_evidence); everything else is code:

- a pair the model calls the same thing joins its facts into one cluster;
- a cluster's facts are split by value (agreeing figures are one side);
- when every side holds at a different time (the years the facts name, else the year their
  pages were published), the values are a *change over time*: the newest is current;
- otherwise the sides are a *disagreement*, shown with each side's sources.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from deskresearch.grounding.quantities import Quantity, agree, differing, quantities, years
from deskresearch.text.relevance import stems

MAX_PAIRS = 12  # pairs one weighing call is asked about, the most alike first
MIN_SHARED = 2  # content words two facts must share to be about the same thing
MIN_OVERLAP = 0.25  # and the share of their words that is (Jaccard)
NAME_OVERLAP = 0.6  # two facts differing only in names must otherwise be nearly the same

Kind = Literal["figure", "date", "name", "yes/no"]
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nor|n't|nicht|kein|keine|keinen|keiner|nie|niemals|ne|pas|jamais|"
    r"aucun|aucune|sans)\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-ZÄÖÜÀ-Þ][\w-]+", re.UNICODE)


@dataclass(frozen=True)
class FactRef:
    """One fact of the ledger with what weighing needs to know of its source."""

    number: int  # its number in the weighing prompt (F1 is 1)
    source: int
    group: int  # the source's origin group
    claim: str
    quote: str
    published: str  # the source's publication date, ISO ("" undated)


@dataclass(frozen=True)
class Pair:
    """Two facts code found worth asking about."""

    number: int  # P1 is 1
    a: FactRef
    b: FactRef
    kind: Kind
    overlap: float


def _content(claim: str) -> set[str]:
    return stems(re.sub(r"\d[\d.,\s]*", " ", claim))


def _names(claim: str) -> set[str]:
    return {n.casefold() for n in _NAME.findall(claim)}


def _kind(a: FactRef, b: FactRef, overlap: float) -> Kind | None:
    """What two alike facts differ in, or None when they do not differ in a value."""
    qa, qb = quantities(a.claim), quantities(b.claim)
    if differing(qa, qb):
        return "figure"
    if qa or qb:
        return None  # their figures agree (or are of different kinds): no value differs
    ya, yb = years(a.claim), years(b.claim)
    if ya and yb and not ya & yb:
        return "date"
    if bool(_NEGATION.search(a.claim)) != bool(_NEGATION.search(b.claim)):
        return "yes/no"
    na, nb = _names(a.claim), _names(b.claim)
    if overlap >= NAME_OVERLAP and na and nb and (na - nb) and (nb - na):
        return "name"
    return None


def candidate_pairs(facts: Sequence[FactRef]) -> list[Pair]:
    """The pairs of facts of different origins that may disagree, most alike first."""
    words = {f.number: _content(f.claim) for f in facts}
    found: list[tuple[float, FactRef, FactRef, Kind]] = []
    for i, a in enumerate(facts):
        for b in facts[i + 1 :]:
            if a.group == b.group:
                continue
            shared = words[a.number] & words[b.number]
            union = words[a.number] | words[b.number]
            overlap = len(shared) / len(union) if union else 0.0
            if len(shared) < MIN_SHARED or overlap < MIN_OVERLAP:
                continue
            kind = _kind(a, b, overlap)
            if kind:
                found.append((overlap, a, b, kind))
    found.sort(key=lambda t: (-t[0], t[1].number, t[2].number))
    return [Pair(n, a, b, kind, ov) for n, (ov, a, b, kind) in enumerate(found[:MAX_PAIRS], 1)]


def _value(f: FactRef, kind: Kind) -> str:
    if kind == "figure":
        qs = quantities(f.claim)
        return str(qs[0]) if qs else f.claim
    if kind == "date":
        return ", ".join(str(y) for y in sorted(years(f.claim))) or f.claim
    return f.claim


def _same_value(a: FactRef, b: FactRef, kind: Kind) -> bool:
    if kind == "figure":
        qa, qb = quantities(a.claim), quantities(b.claim)
        return bool(qa) and bool(qb) and differing(qa, qb) is None and _agree_any(qa, qb)
    if kind == "date":
        return years(a.claim) == years(b.claim)
    if kind == "yes/no":
        return bool(_NEGATION.search(a.claim)) == bool(_NEGATION.search(b.claim))
    return _names(a.claim) == _names(b.claim)


def _agree_any(a: list[Quantity], b: list[Quantity]) -> bool:
    return any(agree(q, r) for q in a for r in b)


_ONLY_A_YEAR = re.compile(r"\d{4}")


def _years_of_figure(claim: str) -> set[int]:
    """The years that date a fact's figure: those of its clause or of a short opening one.

    "In 2018, the plant recycled 45,000 t" is 2018; "The plant, opened in 2015, recycled
    45,000 t" is not 2015 (a year elsewhere in the sentence dates something else). A fact
    without a figure: every year it names.
    """
    clauses = [c for c in re.split(r"[,;:()]|\s[–—]\s", claim) if c.strip()]
    with_figure = [c for c in clauses if quantities(c)]
    if not with_figure:
        return years(claim)
    opening = clauses[0] if len(clauses[0].split()) <= 4 else ""
    # A clause that is only a year: a date's ("On March 3, 2018, ..." split at its commas), "(2019)".
    dates = [c for c in clauses if _ONLY_A_YEAR.fullmatch(c.strip())]
    return set().union(years(opening), *(years(c) for c in [*with_figure, *dates]))


def when(side: Sequence[FactRef]) -> int | None:
    """The year a side's value holds: the years that date its facts, else their pages' dates."""
    named = set().union(*(_years_of_figure(f.claim) for f in side))
    if named:
        return max(named)
    dated = [int(f.published[:4]) for f in side if f.published[:4].isdigit()]
    return max(dated) if dated else None


@dataclass(frozen=True)
class Cluster:
    """Facts about one thing, split into sides by value, and whether it is a change over time."""

    about: str
    kind: Kind
    sides: list[list[FactRef]]  # each side's facts; change: newest first
    change: bool


def clusters(pairs: Sequence[Pair], same: Mapping[int, str]) -> list[Cluster]:
    """Join the pairs the model called the same thing (``same``: pair number → what about).

    Facts linked by such pairs are one cluster; its sides are its facts split by value. A
    cluster whose sides do not all come from more than one origin, or with one value, is none.
    """
    parent: dict[int, int] = {}

    def root(i: int) -> int:
        parent.setdefault(i, i)
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    asked = [p for p in pairs if p.number in same]
    for p in asked:
        parent[root(p.a.number)] = root(p.b.number)
    members: dict[int, dict[int, FactRef]] = {}
    first: dict[int, Pair] = {}  # each cluster's first pair names its kind and what it is about
    for p in asked:
        r = root(p.a.number)
        members.setdefault(r, {}).update({p.a.number: p.a, p.b.number: p.b})
        first.setdefault(r, p)
    out: list[Cluster] = []
    for r, found in sorted(members.items(), key=lambda kv: min(kv[1])):
        facts = list(found.values())
        kind, label = first[r].kind, same[first[r].number]
        sides: list[list[FactRef]] = []
        for f in sorted(facts, key=lambda f: f.number):
            home = next((s for s in sides if _same_value(s[0], f, kind)), None)
            if home is None:
                sides.append([f])
            else:
                home.append(f)
        if len(sides) < 2 or len({f.group for f in facts}) < 2:
            continue
        times = [when(s) for s in sides]
        change = kind == "figure" and None not in times and len(set(times)) == len(times)
        if change:
            sides = [
                s for _, s in sorted(zip(times, sides, strict=True), key=lambda t: -(t[0] or 0))
            ]
        out.append(Cluster(label, kind, sides, change))
    return out


def value_of(side: Sequence[FactRef], kind: Kind) -> str:
    """The value a side gives, as its first fact writes it."""
    return _value(side[0], kind)
