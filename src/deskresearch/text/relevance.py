"""A cheap lexical test that lets a page skip chunks that cannot bear on its queries.

Conservative by design: a chunk is skipped only when it shares no content word (by stem) with
the topic and the queries *while another chunk of the same page shares several*, which shows
the page is written in the queries' language. A page in another language, or with one chunk,
is never filtered: the summary model decides.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

STEM_CHARS = 6  # "recycling", "recycled" and "Recycling" meet at "recycl"
MIN_WORD_CHARS = 4
MIN_PAGE_SCORE = 2  # the best chunk must share this many stems before others may be skipped

_WORD = re.compile(r"\w+", re.UNICODE)


def _plain(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in folded if not unicodedata.combining(ch))


# Question and function words that would make every chunk look relevant (en, de, fr).
_STOP = frozenset(
    _plain(w)
    for w in """what which when where does have with from that this they their them about into than
    there these those were will would could should your more most some such only also other
    been being over under after before because while much many very well just like make made
    sind wird werden wurde eine einer einem einen nicht auch oder wenn dass sich mehr nach
    über durch wie welche warum dans pour avec sont plus cette leur mais comme nous vous elle
    tout quels quelle quelles comment pourquoi""".split()
)


def stems(text: str) -> set[str]:
    """Return the content-word stems of ``text``: casefolded, accents removed, cut short."""
    return {
        w[:STEM_CHARS]
        for w in _WORD.findall(_plain(text))
        if len(w) >= MIN_WORD_CHARS and not w.isdigit() and w not in _STOP
    }


def chunks_to_skip(chunks: Sequence[str], questions: Sequence[str]) -> list[int]:
    """Return the indices of chunks that share no stem with ``questions`` (see module doc)."""
    wanted = set().union(*(stems(q) for q in questions)) if questions else set()
    if len(chunks) < 2 or not wanted:
        return []
    scores = [len(stems(c) & wanted) for c in chunks]
    if max(scores) < MIN_PAGE_SCORE:
        return []
    return [i for i, score in enumerate(scores) if score == 0]


def most_relevant(chunks: Sequence[str], questions: Sequence[str], limit: int) -> list[int]:
    """Return the indices of the ``limit`` chunks sharing most stems with ``questions``.

    In document order; ties go to the earlier chunk (an article states its point early). Costs
    one pass over the text, no model call: this is how a long page is cut before summarising.
    """
    if len(chunks) <= limit:
        return list(range(len(chunks)))
    wanted = set().union(*(stems(q) for q in questions)) if questions else set()
    scores = [len(stems(c) & wanted) for c in chunks]
    best = sorted(range(len(chunks)), key=lambda i: (-scores[i], i))[:limit]
    return sorted(best)


def by_relevance(texts: Sequence[str], questions: Sequence[str]) -> list[int]:
    """Return the indices of ``texts``, those sharing most stems with ``questions`` first.

    Ties keep document order. How a judge prompt too long for its window keeps, of each
    source's facts, those that share words with the sentences judged.
    """
    wanted = set().union(*(stems(q) for q in questions)) if questions else set()
    scores = [len(stems(t) & wanted) for t in texts]
    return sorted(range(len(texts)), key=lambda i: (-scores[i], i))
