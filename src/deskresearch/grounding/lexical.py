"""The code path of the citation check: decide what words and figures can decide.

A sentence is *supported* when every figure in it is in a source it cites and the best
passages of those sources (fact quotes first, then sentences of the text we read) hold most of
its content words, no such passage offering other figures besides its own — and only when
sentence and source are in the same language. A figure that
no source of the whole ledger contains is a *fabrication*. Everything else (paraphrase,
another language, a figure found only in a source it does not cite) is *undecided* and goes to
the model, with the sources worth showing it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from deskresearch.grounding.citations import without_citations
from deskresearch.grounding.draft import split_sentences
from deskresearch.grounding.numbers import missing_figures, value_set
from deskresearch.text.relevance import stems

SUPPORT_COVERAGE = 0.7  # share of the sentence's content words its best passages must hold
MIN_CONTENT_WORDS = 3  # fewer say too little to decide by words
PASSAGES_PER_SOURCE = 2  # best passages per cited source that may add up to the coverage
CANDIDATES = 2  # uncited sources shown to the judge besides the cited ones
PLAINLY = 0.6  # share of a claim's content words at most two facts hold: "plainly carried"
DOUBT = 1 / 3  # below this share in its best fact, a source does not carry a claim


@dataclass(frozen=True)
class Evidence:
    """What one source lets us check against: the text we read and its facts' quotes."""

    id: int
    text: str
    quotes: tuple[str, ...]
    claims: tuple[str, ...]  # the facts in the report's language: for finding, never for proof
    language: str  # two-letter code of the page ("" when unknown)
    published: str = ""  # the page's publication date, ISO ("" when undated)

    @property
    def statements(self) -> tuple[str, ...]:
        """What the source states in so many words: its facts' quotes, and its year.

        The year counts, so a sentence may date a source's figure by it ("in 2018, ... [2]");
        the day and month do not: as figures they would back any small number ("5 percent").
        """
        year = self.published[:4]
        return self.quotes + ((f"published in {year}",) if year.isdigit() else ())


@dataclass(frozen=True)
class Finding:
    """What code could tell about one cited sentence."""

    outcome: Literal["supported", "fabricated", "undecided"]
    quote: str = ""
    source: int | None = None
    reason: str = ""
    candidates: tuple[int, ...] = ()  # uncited sources worth showing the judge


@lru_cache(maxsize=1024)
def fact_stems(claim: str, quote: str) -> frozenset[str]:
    """The content words (stems) of one fact: its claim's and its quote's together."""
    return frozenset(stems(claim) | stems(quote))


@lru_cache(maxsize=64)
def _passages(text: str, quotes: tuple[str, ...]) -> tuple[tuple[str, frozenset[str]], ...]:
    """Fact quotes, then the text's sentences, each with its stems (cached per source)."""
    pieces = [*quotes, *split_sentences(" ".join(text.split()), "en")]
    return tuple((p, frozenset(stems(p))) for p in pieces if p.strip())


def _best(words: set[str], ev: Evidence, n: int) -> list[tuple[str, frozenset[str]]]:
    ranked = sorted(_passages(ev.text, ev.quotes), key=lambda p: -len(words & p[1]))
    return [p for p in ranked[:n] if words & p[1]]


def evidence_text(ev: Evidence) -> str:
    """Everything a source lets us check against: the text we read and its quotes."""
    return "\n".join([ev.text, *ev.statements])


def _candidates(sentence: str, words: set[str], cited: Sequence[int],
                ledger: Mapping[int, Evidence]) -> tuple[int, ...]:  # fmt: skip
    """Uncited sources that hold the sentence's figures, or most of its words."""
    others = [ev for i, ev in ledger.items() if i not in cited]

    def score(ev: Evidence) -> tuple[int, int]:
        figures_held = -len(missing_figures(sentence, evidence_text(ev)))
        # Claims are in the report's language: they find a source across languages.
        said = [stems(c) for c in ev.claims] + [p[1] for p in _best(words, ev, 1)]
        return figures_held, max((len(words & s) for s in said), default=0)

    ranked = sorted(others, key=score, reverse=True)
    return tuple(ev.id for ev in ranked[:CANDIDATES] if score(ev)[1] > 0)


def _loose_figures(sentence: str, best: Sequence[tuple[int, str, frozenset[str]]]) -> bool:
    """Whether a passage that gives a figure of ``sentence`` gives other figures too.

    Code can find a figure but cannot bind it to its words: in "70 percent less energy and 40
    percent less CO2", "40 percent less energy" finds both its figure and its words. Such a
    sentence goes to the model, whose quote must then hold the figure.
    """
    mine = value_set(sentence)
    return any((have := value_set(p)) & mine and have - mine for _, p, _ in best)


def check_sentence(
    sentence: str, cited: Sequence[int], ledger: Mapping[int, Evidence], *, language: str
) -> Finding:
    """Decide ``sentence`` (citing ``cited``) by code, or leave it to the model.

    ``language`` is the report's two-letter language code.
    """
    plain = without_citations(sentence)
    sources = [ledger[i] for i in cited if i in ledger]
    words = stems(plain)
    missing = missing_figures(plain, "\n".join(evidence_text(ev) for ev in sources))
    if missing:
        absent = [f for f in missing if all(missing_figures(f, evidence_text(ev))
                                            for ev in ledger.values())]  # fmt: skip
        if absent:
            reason = f"figure(s) {', '.join(absent)} in no source read for this report"
            return Finding("fabricated", reason=reason)
        holders = tuple(i for i, ev in ledger.items()
                        if i not in cited and not missing_figures(plain, evidence_text(ev)))  # fmt: skip
        reason = f"figure(s) {', '.join(missing)} not in the cited source(s)"
        return Finding("undecided", reason=reason,
                       candidates=holders[:CANDIDATES] or _candidates(plain, words, cited, ledger))  # fmt: skip
    same_language = [ev for ev in sources if ev.language and ev.language == language]
    if len(words) >= MIN_CONTENT_WORDS and same_language:
        best = [(ev.id, *p) for ev in same_language for p in _best(words, ev, PASSAGES_PER_SOURCE)]
        held = words & set().union(*(b[2] for b in best)) if best else set()
        if len(held) >= SUPPORT_COVERAGE * len(words) and _loose_figures(plain, best):
            reason = "its passages give other figures besides its own: which goes with what?"
            return Finding("undecided", reason=reason,
                           candidates=_candidates(plain, words, cited, ledger))  # fmt: skip
        if len(held) >= SUPPORT_COVERAGE * len(words):
            owner, quote, _ = max(best, key=lambda b: len(words & b[2]))
            share = f"{len(held)} of {len(words)} content words"
            return Finding("supported", quote=quote, source=owner,
                           reason=f"{share} and every figure found in the cited source(s)")  # fmt: skip
    why = "another language than its source" if sources and not same_language else "paraphrase"
    return Finding("undecided", reason=why, candidates=_candidates(plain, words, cited, ledger))
