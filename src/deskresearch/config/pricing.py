"""An estimate of what a run's tokens cost, from OpenAI's list prices (standard tier).

Only an estimate: prices change, cached-input discounts and batch prices are not applied, and a
model not listed here (a local server's, another provider's) has no price: its cost is unknown
rather than zero. USD per million tokens, (input, output).
"""

from __future__ import annotations

from collections.abc import Iterable

from deskresearch.records import Usage

PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "o3": (2.00, 8.00),
    "o4-mini": (1.10, 4.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
}


def price(model: str) -> tuple[float, float] | None:
    """Return (input, output) USD per million tokens, or None for a model not listed.

    A dated snapshot (``gpt-4o-2024-08-06``) takes its family's price; the longest listed
    name wins, so ``gpt-4o-mini-…`` is not priced as ``gpt-4o``.
    """
    name = model.removeprefix("openai:")
    for known in sorted(PRICES_PER_MTOK, key=len, reverse=True):
        if name == known or name.startswith(known + "-"):
            return PRICES_PER_MTOK[known]
    return None


def estimate(usage: Iterable[Usage]) -> tuple[float, list[str]]:
    """Return (USD for the priced rows, names of models with no price)."""
    total, unpriced = 0.0, []
    for row in usage:
        rate = price(row["model"])
        if rate is None:
            if row["input_tokens"] or row["output_tokens"]:
                unpriced.append(row["model"])
            continue
        total += (row["input_tokens"] * rate[0] + row["output_tokens"] * rate[1]) / 1_000_000
    return total, sorted(set(unpriced))
