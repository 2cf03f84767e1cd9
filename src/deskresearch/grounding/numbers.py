"""Figures in a sentence and in a page, compared by value across number formats.

"3.5", "3,5" and "3.50" are one value; "40,000", "40.000" and "40 000" are one value; "1.000"
may be one thousand (German) or one (English), so it stands for both. A date is its parts, so
"20.06.2019", "2019-06-20" and "20 June 2019" share 20 and 2019. Digits glued to a word
("CO2", "GPT-4", "COVID-19") are names, not figures, and are left out. A number the deciding
quote writes out ("sieben Prozent") backs the digits a translation gives it ("7 percent"); only
unambiguous words count (two to twelve and the tens, in English, German and French; not
"one"/"ein"/"un", which are articles, nor "cent", a coin). Only the quote's words count, not the
whole page's: small numbers are written out everywhere ("drei Euro", "vier Jahre").
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache

# Thousands written with spaces: "40 000", "1 250 000" (also no-break and thin spaces).
_SPACED_THOUSANDS = re.compile(r"(?<=\d)[ \u00a0\u202f\u2009](?=\d{3}(?!\d))")
_NUMBER = re.compile(r"(?<![\w.,/:-])(?<![^\W\d_]-)\d+(?:[.,:/-]\d+)*")
_DATE = re.compile(r"\d{1,2}[./]\d{1,2}[./]\d{2,4}|\d{4}-\d{1,2}-\d{1,2}")

Figure = frozenset[str]  # the values one written number may stand for

_SPELLED = (
    {
        word: str(value)
        for words in (
            "two three four five six seven eight nine ten eleven twelve",
            "zwei drei vier fünf sechs sieben acht neun zehn elf zwölf",
            "deux trois quatre cinq six sept huit neuf dix onze douze",
        )
        for value, word in enumerate(words.split(), start=2)
    }
    | {
        word: str(value)
        for words in (
            "twenty thirty forty fifty sixty seventy eighty ninety",
            "zwanzig dreissig vierzig fünfzig sechzig siebzig achtzig neunzig",
            "vingt trente quarante cinquante soixante soixante-dix quatre-vingt quatre-vingt-dix",
        )
        for value, word in zip(range(20, 100, 10), words.split(), strict=True)
    }
    | {"quatre-vingts": "80"}
)
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


def _canonical(digits: str) -> str:
    try:
        return format(Decimal(digits).normalize(), "f")
    except InvalidOperation:  # pragma: no cover - the regex admits only digits and one point
        return digits


def values(token: str) -> Figure:
    """Return the values ``token`` (digits with separators) may stand for."""
    if _DATE.fullmatch(token) or any(sep in token for sep in ":/-"):
        return frozenset(_canonical(p) for p in re.split(r"[.,:/-]", token) if p)
    dots, commas = token.count("."), token.count(",")
    if dots and commas:  # the last separator is the decimal point: 1,234.5 · 1.234,5
        decimal = "." if token.rfind(".") > token.rfind(",") else ","
        whole, frac = token.rsplit(decimal, 1)
        return frozenset({_canonical(re.sub(r"\D", "", whole) + "." + frac)})
    sep = "." if dots else "," if commas else ""
    if not sep:
        return frozenset({_canonical(token)})
    if token.count(sep) > 1:  # 1.000.000: groups of thousands
        return frozenset({_canonical(token.replace(sep, ""))})
    whole, frac = token.split(sep)
    as_decimal = _canonical(f"{whole}.{frac}")
    if len(frac) == 3:  # 1.000 / 1,000: a thousand or one, depending on the language
        return frozenset({as_decimal, _canonical(whole + frac)})
    return frozenset({as_decimal})


def _written(text: str) -> list[tuple[str, list[Figure]]]:
    """Each number as written in ``text``, with its figures (a date gives one per part)."""
    found = []
    for m in _NUMBER.finditer(_SPACED_THOUSANDS.sub("", text)):
        token = m.group(0).rstrip(".,:/-")
        if _DATE.fullmatch(token) or any(sep in token for sep in ":/-"):
            found.append((token, [frozenset({v}) for v in values(token)]))
        else:
            found.append((token, [values(token)]))
    return found


def figures(text: str) -> list[Figure]:
    """Return each figure written in ``text`` (dates split into their parts)."""
    return [fig for _, figs in _written(text) for fig in figs]


@lru_cache(maxsize=256)
def value_set(text: str) -> frozenset[str]:
    """Every value any figure in ``text`` may stand for (cached: pages are asked many times)."""
    return frozenset(v for fig in figures(text) for v in fig)


@lru_cache(maxsize=256)
def spelled_values(text: str) -> frozenset[str]:
    """The values of the numbers ``text`` writes out in words (see the module docstring)."""
    return frozenset(_SPELLED[w] for w in _WORD.findall(text.casefold()) if w in _SPELLED)


def missing_figures(sentence: str, evidence: str, *, spelled: str = "") -> list[str]:
    """Return the numbers of ``sentence`` (as written) that ``evidence`` does not contain.

    Numbers written out in ``spelled`` (the quote that decides the sentence) count as well.
    """
    have = value_set(evidence) | spelled_values(spelled)
    return [token for token, figs in _written(sentence) if any(not (f & have) for f in figs)]
