"""Weigh the judge's verdict against what code can check of it, before taking it.

The judge reads paraphrases and translations, which code cannot; but code can check what a
verdict implies. The sentence is split into its claims (the parts its citation markers close),
and each claim's content words (by stem) and figures are held against the facts of the
source(s) it cites: each fact's quote (verbatim from the page) and its claim (the summariser's
words in the report's language, which lets code compare across languages). The facts find for
or against a verdict; they never prove a paraphrase on their own (a claim is a model's words):

- a "supported" verdict (or "another source") is *doubted* when, for some claim of the
  sentence, no fact of the source it would stand on (two facts, for a claim citing several)
  holds even a third of its content words: neither the fact the judge named nor the page's
  other facts carry it;
- an "unsupported" verdict is *doubted* when every claim of the sentence is plainly carried:
  most of its content words in at most two facts of the sources it cites, and every figure of it
  in those facts' quotes.

A doubted verdict is *disputed*, not taken as it stands: repair_report asks again, with a
prompt built differently, and when that answer sides with the judge against the facts,
recheck_citations asks the report model once (docs/grounding.md, "How a verdict is weighed").
What code finds for certain (a fact the source does not have, a quote not in the source, a
figure not in the quote) overrules the judge by itself, as before: unless the cited facts
plainly carry the sentence, then it too is disputed (the judge's verdict may be right where the
fact it named is not). A verdict taken whose named fact plainly does not say the sentence, where
another fact of its source does, is shown with that other fact's quote.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from deskresearch.grounding.citations import claims_of, without_citations
from deskresearch.grounding.lexical import (
    DOUBT,
    MIN_CONTENT_WORDS,
    PLAINLY,
    Evidence,
    evidence_text,
    fact_stems,
)
from deskresearch.grounding.numbers import missing_figures
from deskresearch.grounding.pointer import shown_quote
from deskresearch.grounding.quotes import find_quote
from deskresearch.records import Dispute, JudgeVerdict, Settled
from deskresearch.state import SentenceCheck
from deskresearch.text.relevance import stems


@dataclass(frozen=True)
class Carried:
    """How well the facts of some sources hold one claim of a sentence."""

    claim: str
    words: int  # the claim's content words
    best: float  # share of them the best single fact holds
    pair: float  # share the best two facts hold together
    source: int | None  # the source of the best fact
    quotes: tuple[str, ...]  # the quotes of the best two facts
    facts: tuple[tuple[int, str, str], ...] = ()  # those facts: (source, quote, claim)


def carried(claim: str, sources: Sequence[Evidence]) -> Carried:
    """How well the facts of ``sources`` hold the content words of ``claim``."""
    words = stems(claim)
    facts = [
        (ev.id, q, c, fact_stems(c, q))
        for ev in sources
        for c, q in zip(ev.claims, ev.quotes, strict=True)
    ]
    if not words or not facts:
        return Carried(claim, len(words), 0.0, 0.0, None, ())
    first = max(facts, key=lambda f: len(words & f[3]))
    held = words & first[3]
    second = max(facts, key=lambda f: len(words & f[3] - held))
    pair = [first, second] if words & second[3] - held else [first]
    both = set().union(*(f[3] for f in pair)) & words
    return Carried(
        claim,
        len(words),
        len(held) / len(words),
        len(both) / len(words),
        first[0],
        tuple(f[1] for f in pair),
        tuple((f[0], f[1], f[2]) for f in pair),
    )


def _claims(
    sentence: str, cites: Sequence[int], source: int | None = None
) -> list[tuple[str, list[int]]]:
    """The sentence's claims, each with the sources it stands on.

    Those it cites (a claim citing nothing: the sentence's), or ``source`` alone when that is
    not one the sentence cites (the judge moved it there).
    """
    moved = source is not None and source not in cites
    return [
        (text, [source] if moved and source is not None else ids or list(cites))
        for text, ids in claims_of(sentence)
    ]


def closest_facts(
    sentence: str, cites: Sequence[int], source: int | None, ledger: Mapping[int, Evidence]
) -> list[Carried]:
    """Each claim of ``sentence`` with the (at most two) facts of its sources closest to it."""
    return [
        carried(text, [ledger[i] for i in on if i in ledger])
        for text, on in _claims(sentence, cites, source)
    ]


def outvoted(check: SentenceCheck) -> bool:
    """Whether a disputed verdict was settled by two answers of the judge model against the facts.

    The judge and the second look (the same model, asked differently) agree, the facts say
    otherwise: recheck_citations asks the other model role once more.
    """
    d = check.get("dispute")
    return bool(
        d and d["settled_by"] == "asked_again" and not d["overruled"] and len(d["asked_again"]) == 1
    )


def plainly_carried(
    sentence: str, cites: Sequence[int], ledger: Mapping[int, Evidence]
) -> Carried | None:
    """The claim-by-claim evidence that the cited sources' facts carry ``sentence``, or None.

    Every claim needs MIN_CONTENT_WORDS content words at least (fewer say too little to tell),
    PLAINLY of them held by at most two facts of the sources it cites, and every figure of it
    in those facts' quotes (a number they write out counts). Returns the claim carried least.
    """
    weakest: Carried | None = None
    for found in closest_facts(sentence, cites, None, ledger):
        quotes = "\n".join(found.quotes)
        if found.words < MIN_CONTENT_WORDS or found.pair < PLAINLY:
            return None
        if missing_figures(found.claim, quotes, spelled=quotes):
            return None
        if weakest is None or found.pair < weakest.pair:
            weakest = found
    return weakest


def doubt(sentence: str, cites: Sequence[int], source: int, ledger: Mapping[int, Evidence]) -> str:
    """Why the facts do not bear out "``source`` states ``sentence``" ("" when they do).

    A cited ``source`` (supported) answers for the claims it is cited for, the other cited
    sources for theirs; an uncited one (another source) would stand for the whole sentence.
    A claim with too few content words to tell is not held against the verdict.
    """
    claims = _claims(sentence, cites, source)
    for text, on in claims:
        found = carried(text, [ledger[i] for i in on if i in ledger])
        share = found.pair if len(on) > 1 else found.best  # a claim citing two joins two facts
        if found.words >= MIN_CONTENT_WORDS and share < DOUBT:
            held = round(share * found.words)
            which = f"its {found.words}" if len(claims) == 1 else f"the {found.words}"
            of = "" if len(claims) == 1 else f" of “{text}”"
            return f"no fact of {_ids(on)} holds more than {held} of {which} content words{of}"
    return ""


def _ids(ids: Sequence[int]) -> str:
    return "".join(f"[{i}]" for i in ids)


def _carries(found: Carried, cites: Sequence[int]) -> str:
    share = int(found.pair * 100)  # of the claim carried least
    return (
        f"the facts of {_ids(cites)} carry it ({share}% of each claim's content words at "
        "least, and every figure)"
    )


def unbacked(
    check: SentenceCheck,
    source: int | None,
    quote: str,
    ledger: Mapping[int, Evidence],
    *,
    no_quote: str = "",
) -> str:
    """What code finds against "``source`` states it" for certain ("" when nothing).

    The quote must be in the source it names, and every figure of the sentence in that quote or
    in the quotes of the facts of the source(s) the sentence would stand on: a long page holds
    most small numbers somewhere, so the page at large does not count.
    """
    ev = ledger.get(source) if source is not None else None
    if ev is None:
        return f"the judge named no source in the ledger ({source})"
    if not quote.strip():  # ``no_quote`` says why there is none (a fact the source lacks)
        return no_quote or f"no quote of source [{ev.id}] was given"
    if not find_quote(quote, evidence_text(ev)):
        return f"the quote given is not in source [{ev.id}]"
    cites = check["cites"]
    backing = [ev] if ev.id not in cites else [ledger[i] for i in cites if i in ledger]
    stated = "\n".join([quote, *(q for b in backing for q in b.statements)])
    if missing := missing_figures(without_citations(check["sentence"]), stated, spelled=quote):
        return f"figure(s) {', '.join(missing)} not in the quotes of the source(s) named"
    return ""


def weighed(
    check: SentenceCheck,
    verdict: JudgeVerdict,
    source: int | None,
    quote: str,
    ledger: Mapping[int, Evidence],
    *,
    no_quote: str = "",
) -> SentenceCheck:
    """The judge's verdict on ``check``, weighed against the facts (see the module docstring).

    ``quote`` is that of the fact the judge named; ``no_quote`` says why there is none.

    Taken as it stands when code finds nothing against it (shown with the quote of the fact
    that says the sentence when the one named plainly does not: ``shown_quote``); turned down
    when code finds for certain that the fact it named or a figure is not the source's, unless
    the cited facts plainly carry the sentence; disputed (asked again by repair_report) when
    the facts contradict it.
    """

    def dispute(found: str, settled_by: Settled = "unsettled") -> Dispute:
        return Dispute(judge=verdict, judge_source=source, judge_quote=quote, found=found,
                       asked_again=[], settled_by=settled_by, overruled=settled_by == "code")  # fmt: skip

    def disputed(found: str, reason: str, by: Carried | None = None) -> SentenceCheck:
        quote_now = by.quotes[0] if by else quote
        return {**check, "status": "disputed", "decided_by": "model", "reason": reason,
                "source": by.source if by else source, "quote": quote_now,
                "dispute": dispute(found)}  # fmt: skip

    sentence, cites = check["sentence"], check["cites"]
    if verdict == "unsupported":
        if by := plainly_carried(sentence, cites, ledger):
            found = _carries(by, cites)
            return disputed(found, f"the judge found no source stating it, but {found}", by)
        return {**check, "status": "unsupported", "decided_by": "model", "quote": quote,
                "reason": "the judge found no source stating it"}  # fmt: skip
    if certain := unbacked(check, source, quote, ledger, no_quote=no_quote):
        if by := plainly_carried(sentence, cites, ledger):
            found = f"{certain}, but {_carries(by, cites)}"
            return disputed(found, found, by)
        return {**check, "status": "unsupported", "decided_by": "model", "quote": quote,
                "reason": certain, "dispute": dispute(certain, "code")}  # fmt: skip
    assert source is not None  # unbacked found it in the ledger
    if contrary := doubt(sentence, cites, source, ledger):
        return disputed(contrary, f"the judge: stated by source [{source}]; but {contrary}")
    moved = source not in cites
    shown, pointer = shown_quote(sentence, source, quote, ledger)
    return {
        **check,
        "status": "re-cited" if moved else "supported",
        "source": source,
        "quote": shown,
        "decided_by": "model",
        "reason": f"stated by source [{source}]"
        + (", not the one cited" if moved else "")
        + (f"; {pointer}" if pointer else ""),
    }
