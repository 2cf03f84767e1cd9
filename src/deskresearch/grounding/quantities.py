"""Quantities in a fact, for telling a disagreement from rounding, units and time.

A quantity is a figure with its scale word ("1.2 million" is 1,200,000; "3,5 Mrd." is
3,500,000,000), whether it is a percentage, and whether it is hedged ("about", "rund",
"environ") or a bound ("more than", "up to"). A four-digit year (1800-2100) or a date is not a
quantity but *when* a fact holds: ``years()``. Two quantities agree when they can be one figure
written at two precisions ("3.2%" and "3.24%", "1.2 million" and "1,249,000"), hedged and close
("about 1,200" and "1,214"), or one is a bound the other meets ("more than 1,000" and "1,500"):
see ``agree``. Values come from ``grounding.numbers.values``, which knows "3,5", "40.000" and
"40 000".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from deskresearch.grounding.numbers import values

HEDGED_TOLERANCE = Decimal("0.05")  # "about 1,200" agrees with anything within 5%
# Two precisions of one figure ("1,000" vs "1,400" is not one: a round count is often exact):
# within half the coarser figure's last digit, and within 5% for counts.
ROUNDED_TOLERANCE = Decimal("0.05")

_SCALES = {
    "thousand": 3, "thousands": 3, "tausend": 3, "mille": 3, "k": 3,
    "million": 6, "millions": 6, "mio": 6, "millionen": 6, "mn": 6, "m": 6,
    "billion": 9, "billions": 9, "bn": 9, "mrd": 9, "milliarde": 9, "milliarden": 9,
    "milliard": 9, "milliards": 9,
    "trillion": 12, "trillions": 12, "tn": 12,
}  # fmt: skip
_PERCENT = re.compile(r"\s?(?:%|percent\b|per cent\b|prozent\b|pour ?cent\b)", re.IGNORECASE)
_HEDGES = re.compile(
    r"\b(?:about|around|approximately|approx|roughly|nearly|almost|some|circa|ca|estimated|"
    r"etwa|rund|ungefähr|knapp|fast|environ|près de|presque|quelque)\W{0,3}$",
    re.IGNORECASE,
)
_LOWER = re.compile(
    r"\b(?:over|more than|at least|above|exceeding|upwards of|über|mehr als|mindestens|"
    r"plus de|au moins|más de|al menos|oltre|più di|almeno)\W{0,3}$",
    re.IGNORECASE,
)
# "no more than 100" is a ceiling, "not less than 10" a floor: read before the plain words.
_NEGATED = re.compile(
    r"\b(?:no|not|nicht|pas|non)\s+(?P<dir>more|greater|higher|mehr|plus|più|"
    r"less|fewer|lower|weniger|moins|meno)\s+(?:than|als|de|di)\W{0,3}$",
    re.IGNORECASE,
)
_UPPER = re.compile(
    r"\b(?:under|less than|fewer than|up to|below|at most|unter|weniger als|bis zu|höchstens|"
    r"moins de|jusqu'à|au plus|menos de|hasta|meno di|fino a)\W{0,3}$",
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
    bound: str = ""  # "lower" (more than, at least), "upper" (up to, under) or "" (the figure)
    scale: int = 0  # the power of ten its scale word gives ("million": 6)

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
        before = spaced[max(0, m.start() - 20) : m.start()]
        hedged = bool(_HEDGES.search(before))
        found.append(Quantity(written, _scaled(plain, scale), percent, hedged, _bound(before),
                              scale))  # fmt: skip
    return found


def _bound(before: str) -> str:
    """Whether the words before a figure make it a floor ("lower"), a ceiling ("upper") or not."""
    if m := _NEGATED.search(before):
        up = m["dir"].casefold() in ("more", "greater", "higher", "mehr", "plus", "più")
        return "upper" if up else "lower"
    return "lower" if _LOWER.search(before) else "upper" if _UPPER.search(before) else ""


def years(text: str) -> set[int]:
    """The years ``text`` names (four digits, 1800-2100, or inside a date)."""
    out = {int(t) for t in re.findall(r"(?<!\d)\d{4}(?!\d)", text) if _is_year(t)}
    return out


def _close(a: Decimal, b: Decimal, tolerance: Decimal) -> bool:
    big = max(abs(a), abs(b))
    return big == 0 or abs(a - b) / big <= tolerance


def _step(value: Decimal, scale: int) -> Decimal:
    """The unit of a figure's last written digit: 3.24 → 0.01, 1.2 million → 10^5, 1,200 → 100.

    A whole number under 1,000 is taken as exact ("10%", "20 plants", "150 jobs": 1), one of
    1,000 or more as rounded at its last non-zero digit ("1,200", "45,000").
    """
    digits = (value / (Decimal(10) ** scale)).normalize()
    exponent = digits.as_tuple().exponent
    if not isinstance(exponent, int):  # pragma: no cover - values() gives finite decimals
        return Decimal(1)
    if exponent > 0 and abs(digits) < 1000:
        exponent = 0
    return Decimal(10) ** (exponent + scale)


def _precisions(a: Quantity, b: Quantity, x: Decimal, y: Decimal, *, widen: int = 1) -> bool:
    """Whether ``x`` (of ``a``) and ``y`` (of ``b``) can be one figure at two precisions.

    Within half the coarser one's last digit ("3.2%" and "3.24%", "12" and "12.3 percent",
    "1.2 million" and "1,249,000"; ``widen`` 2: a whole digit, for a hedged figure); a count
    must also be within 5%, so a round "1,000" is not taken for "1,400". Percentages compare
    in points.
    """
    if abs(x - y) * 2 > max(_step(x, a.scale), _step(y, b.scale)) * widen:
        return False
    return a.percent or _close(x, y, ROUNDED_TOLERANCE)


def _meets(bound: Quantity, figure: Quantity) -> bool:
    """Whether a figure meets a bound ("more than 1,000": 1,500 does; "up to 20%": 25% not)."""
    low = bound.bound == "lower"
    return any(y >= x if low else y <= x for x in bound.values for y in figure.values)


def agree(a: Quantity, b: Quantity) -> bool:
    """Whether two quantities can be the same figure.

    Equal; one a rounding or a more precise writing of the other; hedged and within 5% (or half
    a point of a percentage); one a bound the other meets (two bounds agree unless one's floor is
    above the other's ceiling).
    """
    if a.percent != b.percent:
        return False
    if a.values & b.values:
        return True
    if a.bound and b.bound:
        if a.bound == b.bound:
            return True
        low, high = (a, b) if a.bound == "lower" else (b, a)
        return any(x < y for x in low.values for y in high.values)
    if a.bound or b.bound:
        return _meets(a, b) if a.bound else _meets(b, a)
    hedged = a.hedged or b.hedged
    for x in a.values:
        for y in b.values:
            if _precisions(a, b, x, y, widen=2 if hedged else 1):
                return True
            if hedged and _close(x, y, HEDGED_TOLERANCE):
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
