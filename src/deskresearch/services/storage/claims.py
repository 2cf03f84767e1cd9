"""Which pages a run has started reading, so each is read once while queries run in parallel.

Query branches read their pages as soon as their own ranking is done, with no barrier between
queries; the first branch to claim a canonical URL reads it, later ones only record that they
share it. A claim is a set insertion with no ``await`` in between, so it is atomic on the event
loop. Claims are kept per run id (``start_run`` draws a fresh one) and forgotten when the run
ends; at most ``keep_runs`` runs are remembered, so a crashed run cannot grow the table.
"""

from __future__ import annotations

from collections import OrderedDict


class PageClaims:
    """First-come claims on canonical URLs, per run."""

    def __init__(self, keep_runs: int = 256) -> None:
        """``keep_runs``: how many runs' claims are kept at most (the oldest go first)."""
        self._runs: OrderedDict[str, set[str]] = OrderedDict()
        self._keep = keep_runs

    def claim(self, run: str, url: str) -> bool:
        """Claim ``url`` for ``run``; True when no branch of that run had claimed it yet."""
        urls = self._runs.setdefault(run, set())
        self._runs.move_to_end(run)
        while len(self._runs) > self._keep:
            self._runs.popitem(last=False)
        if url in urls:
            return False
        urls.add(url)
        return True

    def forget(self, run: str) -> None:
        """Drop a finished run's claims."""
        self._runs.pop(run, None)
