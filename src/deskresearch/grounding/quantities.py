"""Quantities in a fact, for telling a disagreement from rounding, units and time.

A quantity is a figure with its scale word ("1.2 million" is 1,200,000; "3,5 Mrd." is
3,500,000,000), whether it is a percentage, and whether it is hedged ("about", "rund",
"environ"). A four-digit year (1800-2100) or a date is not a quantity but *when* a fact holds:
``years()``. Two quantities agree when they are the same value, or one is the other rounded
("about 1,200" and "1,214"): see ``agree``. Values come from ``grounding.numbers.values``,
which knows "3,5", "40.000" and "40 000".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from deskresearch.grounding.numbers import values

HEDGED_TOLERANCE = Decimal("0.05")  # "about 1,200" agrees with anything within 5%
ROUNDED_TOLERANCE = Decimal("0.02")  # "1,200" and "1,214": one a rounding of the other, 2%

_SCALES = {
    "thousand": 3, "thousands": 3, "tausend": 3, "mille": 3, "k": 3,
    "million": 6, "millions": 6, "mio": 6, "millionen": 6, "mn": 6, "m": 6,
    "billion": 9, "billions": 9, "bn": 9, "mrd": 9, "milliarde": 9, "milliarden": 9,
    "milliard": 9, "milliards": 9,
    "trillion": 12, "trillions": 12, "tn": 12,
}  # fmt: skip
_PERCENT = re.compile(r"\s?(?:%|percent\b|per cent\b|prozent\b|pour ?cent\b)", re.IGNORECASE)
_HEDGES = re.compile(
    r"\b(?:about|around|approximately|approx|roughly|nearly|almost|some|over|more than|"
    r"less than|under|up to|circa|ca|estimated|etwa|rund|ungefähr|knapp|fast|über|mehr als|"
    r"weniger als|bis zu|environ|près de|presque|plus de|moins de|quelque|jusqu'à)\W{0,3}$",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"(?<![\w.,])(?<![^\W\d_]-)(?:\d{1,3}(?:[ \u00a0\u202f\u2009]\d{3})+|\d+(?:[.,:/-]\d+)*)(?![\d.,]\d)(?!(?:st|nd|rd|th)\b)"
)
_SCALE_AFTER = re.compile(r"(\s?)([^\W\d_]+)(?!\w)\.?", re.UNICODE)
_DATE = re.compile(r"\d{1,2}[./]\d{1,2}[./]\d{2,4}|\d{4}-\d{1,2}(?:-\d{1,2})?")


@dataclass(frozen=True)
class Quantity:
    """One figure of a fact, scaled, with what kind of figure it is."""

    written: str  # as the fact writes it, scale word and % included
    values: frozenset[Decimal]  # what it may stand for ("1.000": one thousand or one)
    percent: bool
    hedged: bool

    def __str__(self) -> str:
        """The figure as the fact writes it."""
        return self.written


def _is_year(token: str) -> bool:
    return token.isdigit() and len(token) == 4 and 1800 <= int(token) <= 2100


def _scaled(token: str, exponent: int) -> frozenset[Decimal]:
    out = set()
    for v in values(token):
        try:
            out.add((Decimal(v) * (Decimal(10) ** exponent)).normalize())
        except InvalidOperation:  # pragma: no cover - values() gives decimal strings only
            continue
    return frozenset(out)


def quantities(text: str) -> list[Quantity]:
    """Every figure of ``text`` that is an amount (not a year or a date), in order."""
    spaced = text.replace("\u00a0", " ")
    found: list[Quantity] = []
    for m in _NUMBER.finditer(spaced):
        token = m.group(0)
        if _is_year(token) or _DATE.fullmatch(token):
            continue
        if re.search(r"[:/]", token) or re.fullmatch(r"\d+-\d+", token):
            continue  # a time, a ratio or a range: not one amount
        plain = re.sub(r"[ \u202f\u2009]", "", token)
        after = spaced[m.end() :]
        percent = bool(_PERCENT.match(after))
        scale, written = 0, token
        word = _SCALE_AFTER.match(after)
        name = word.group(2).casefold() if word else ""
        # "1.2m" and "5k" are scales; "45 m" is metres and "m3" a unit.
        if not percent and word and name in _SCALES and (len(name) > 1 or not word.group(1)):
            scale = _SCALES[name]
            written = f"{token}{word.group(1)}{word.group(2)}"
        if percent:
            written += "%"
        hedged = bool(_HEDGES.search(spaced[max(0, m.start() - 20) : m.start()]))
        found.append(Quantity(written, _scaled(plain, scale), percent, hedged))
    return found


def years(text: str) -> set[int]:
    """The years ``text`` names (four digits, 1800-2100, or inside a date)."""
    out = {int(t) for t in re.findall(r"(?<!\d)\d{4}(?!\d)", text) if _is_year(t)}
    return out


def _close(a: Decimal, b: Decimal, tolerance: Decimal) -> bool:
    big = max(abs(a), abs(b))
    return big == 0 or abs(a - b) / big <= tolerance


def _rounding_of(rounded: Decimal, exact: Decimal) -> bool:
    """Whether ``rounded`` (with trailing zeros) is ``exact`` rounded at its precision."""
    if rounded == 0 or rounded != rounded.to_integral_value():
        return False
    zeros = len(str(int(abs(rounded)))) - len(str(int(abs(rounded))).rstrip("0"))
    if zeros == 0:
        return False
    step = Decimal(10) ** zeros
    return (exact / step).to_integral_value() * step == rounded


def agree(a: Quantity, b: Quantity) -> bool:
    """Whether two quantities can be the same figure: equal, hedged and close, or rounded."""
    if a.percent != b.percent:
        return False
    if a.values & b.values:
        return True
    for x in a.values:
        for y in b.values:
            if (a.hedged or b.hedged) and _close(x, y, HEDGED_TOLERANCE):
                return True
            rounded = _rounding_of(x, y) or _rounding_of(y, x)
            if rounded and _close(x, y, ROUNDED_TOLERANCE if not (a.hedged or b.hedged)
                                  else HEDGED_TOLERANCE):  # fmt: skip
                return True
    return False


def differing(a: list[Quantity], b: list[Quantity]) -> tuple[Quantity, Quantity] | None:
    """A quantity of ``a`` and one of ``b`` of the same kind that no figure of the other backs.

    None when every figure of each has an agreeing figure in the other, or when they share no
    kind of figure (a percentage and a count are two things).
    """
    lone_a = [q for q in a if not any(agree(q, r) for r in b)]
    lone_b = [r for r in b if not any(agree(q, r) for q in a)]
    for q in lone_a:
        for r in lone_b:
            if q.percent == r.percent:
                return q, r
    return None
