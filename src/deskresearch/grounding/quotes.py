"""Is a quote really in a text? Verbatim up to typography, tolerant to a typo, strict on meaning.

Both sides are normalised first (Unicode compatibility form, case, quotation marks, dashes,
hyphenation at line ends, soft hyphens, whitespace) and cut into word tokens. A quote is found
when some run of the text's tokens has exactly its length and differs from it only by a few
substituted words that are near-identical spellings (``recyceln``/``recycelen``): no word may be
added or left out (that is how "not" slips in or out), and numbers must be equal. rapidfuzz
finds the region and scores the spellings; this module only decides what counts as the same.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

MIN_WORD_SIMILARITY = 0.8  # normalised Levenshtein similarity of two spellings of one word
WORDS_PER_TYPO = 8  # at most one near-identical substitution per this many quote words
MIN_QUOTE_WORDS = 3  # shorter "quotes" prove nothing (any page has "in the year")

_QUOTES = str.maketrans({c: "'" for c in "‘’‚‛′`´"} | {c: '"' for c in "“”„‟″«»‹›"})
_DASHES = re.compile(r"[\u2010-\u2015\u2212]")
_HYPHEN_BREAK = re.compile(r"(\w)-\s*\n\s*(\w)")
_INVISIBLE = re.compile(r"[\u00ad\u200b-\u200f\u2060\ufeff]")
# A word, or a number with its internal separators (3,5 · 1.000 · 2019-06-20 stays whole).
TOKEN = re.compile(r"\d+(?:[.,:/-]\d+)*|[^\W\d_]+(?:['-][^\W\d_]+)*", re.UNICODE)


def normalise(text: str) -> str:
    """Fold what differs between a page and a faithful copy of it: form, case, marks, breaks."""
    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    text = _HYPHEN_BREAK.sub(r"\1\2", text)
    text = _DASHES.sub("-", text.translate(_QUOTES)).casefold()
    return " ".join(text.split())


def tokens(text: str) -> list[str]:
    """Return the word and number tokens of ``text``, normalised."""
    return TOKEN.findall(normalise(text))


def _same_word(a: str, b: str) -> bool:
    """Two spellings of one word: no digits involved, and close enough to be a typo."""
    if any(ch.isdigit() for ch in a + b):
        return False
    return Levenshtein.normalized_similarity(a, b) >= MIN_WORD_SIMILARITY


def _matches_at(quote: Sequence[str], text: Sequence[str], start: int) -> bool:
    if start < 0 or start + len(quote) > len(text):
        return False
    typos = 0
    for q, t in zip(quote, text[start : start + len(quote)], strict=True):
        if q == t:
            continue
        if not _same_word(q, t):
            return False
        typos += 1
    return typos <= len(quote) // WORDS_PER_TYPO


@lru_cache(maxsize=256)
def _indexed(text: str) -> tuple[tuple[str, ...], str, tuple[int, ...]]:
    """Tokens of ``text``, their joined form, and where each token starts in it.

    Cached: one page is searched for many quotes.
    """
    toks = tuple(tokens(text))
    starts, pos = [], 0
    for tok in toks:
        starts.append(pos)
        pos += len(tok) + 1
    return toks, " ".join(toks), tuple(starts)


def find_quote(quote: str, text: str) -> bool:
    """Tell whether ``quote`` occurs in ``text`` (see the module docstring for what counts)."""
    q = tokens(quote)
    if len(q) < MIN_QUOTE_WORDS:
        return False
    t, joined, starts = _indexed(text)
    needle = " ".join(q)
    if f" {needle} " in f" {joined} ":
        return True
    # Candidate starts: where the quote's first words occur, and the region rapidfuzz aligns.
    candidates = {i - k for k in range(min(3, len(q))) for i, tok in enumerate(t) if tok == q[k]}
    best = fuzz.partial_ratio_alignment(needle, joined, score_cutoff=80)
    if best is not None:
        first = next((i for i, s in enumerate(starts) if s >= best.dest_start), len(t))
        candidates.update(range(first - 2, first + 3))
    return any(_matches_at(q, t, start) for start in sorted(candidates))
