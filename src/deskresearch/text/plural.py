"""A count with its noun: "1 topic", "3 topics", "1 query", "2 queries"."""

from __future__ import annotations


def plural(n: int, word: str, many: str = "") -> str:
    """Return ``n`` and ``word``, plural unless ``n`` is 1 (``many``: an irregular plural).

    >>> plural(1, "topic"), plural(0, "topic"), plural(2, "query", "queries")
    ('1 topic', '0 topics', '2 queries')
    """
    return f"{n} {word if n == 1 else many or word + 's'}"
