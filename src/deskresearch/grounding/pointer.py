"""The quote shown for a verdict taken: the fact that says the sentence, not only the one named.

The judge names the fact that decides a sentence by its number; that number only points at the
evidence (grounding.weigh decides the verdict). When it points at a fact of the right source
that plainly does not say the sentence, the reader would be shown a quote that does not say
it: code shows the source's fact that does, and says so.
"""

from __future__ import annotations

from collections.abc import Mapping

from deskresearch.grounding.citations import without_citations
from deskresearch.grounding.lexical import DOUBT, MIN_CONTENT_WORDS, PLAINLY, Evidence, fact_stems
from deskresearch.grounding.numbers import missing_figures
from deskresearch.text.relevance import stems


def shown_quote(
    sentence: str, source: int, quote: str, ledger: Mapping[int, Evidence]
) -> tuple[str, str]:
    """The quote shown for "``source`` states ``sentence``", and why it is not the named one.

    The judge's number only points at the evidence. A wrong pointer (a fact of the source that
    holds under DOUBT of the sentence's content words, where another of its facts holds PLAINLY
    of them and every figure) would show the reader a quote that does not say it: the other
    fact's quote is shown instead. Anything less clear keeps the judge's. The whole sentence's
    words count, not only those of the claims citing ``source``: a sentence that also stands on
    other sources then rarely reaches PLAINLY, which keeps the judge's fact.
    """
    ev = ledger[source]
    text = without_citations(sentence)
    words = stems(text)
    if len(words) < MIN_CONTENT_WORDS or quote not in ev.quotes:
        return quote, ""

    def held(i: int) -> int:
        return len(words & fact_stems(ev.claims[i], ev.quotes[i]))

    named = ev.quotes.index(quote)
    best = max(range(len(ev.quotes)), key=held)
    better = ev.quotes[best]
    if better == quote or held(named) >= DOUBT * len(words) or held(best) < PLAINLY * len(words):
        return quote, ""
    if missing_figures(text, better, spelled=better):
        return quote, ""
    return better, (
        f"the judge named fact ({named + 1}), which holds {held(named)} of its {len(words)} "
        f"content words; fact ({best + 1}), which holds {held(best)}, is shown"
    )
