"""What a finished run is, and when it may say ``ok``: one rule for every entry point.

``status`` is empty while a run works; only the two terminal nodes set it (finish_report,
insufficient_evidence). ``ok`` means a non-empty report that cites at least one source of the
run's ledger, i.e. a page the run read; anything less ends ``insufficient_evidence`` with a
one-line ``reason``. The CLI, batch, the served graph and resumes all ask :func:`finished`,
never the scheduler's ``next`` (a run cancelled between saving a step's writes and its next
checkpoint shows no ``next`` task although it has work left).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from deskresearch.grounding.citations import body_of, ids_in
from deskresearch.records import Source, Status

FINAL: tuple[Status, ...] = ("ok", "insufficient_evidence")


def cited_sources(report: str, sources: Sequence[Source]) -> list[int]:
    """The ledger ids ``report`` cites, in order of first use (ids not in the ledger left out).

    Only the body counts: the References section lists every source with its ``[n]``.
    """
    ledger = {s["id"] for s in sources}
    return [i for i in ids_in(body_of(report)) if i in ledger]


def is_report(report: str, sources: Sequence[Source]) -> bool:
    """The invariant of ``ok``: a non-empty report citing at least one source the run read."""
    return bool(report.strip()) and bool(cited_sources(report, sources))


def finished(values: Mapping[str, Any]) -> bool:
    """Whether a run's saved state is a finished run's: a final status and a report.

    A checkpoint of an older version set ``status`` at the start; its empty report tells.
    """
    return values.get("status") in FINAL and bool(str(values.get("report") or "").strip())


def check(values: Mapping[str, Any]) -> None:
    """Raise when ``values`` break the rule: ``ok`` without a cited, non-empty report.

    The terminal nodes never produce such a result; this guards what is written or returned.

    Raises:
        RuntimeError: the result is not a finished run's, or says ok with nothing.
    """
    if not finished(values):
        raise RuntimeError("the run stopped before it wrote a report or a reason")
    if values["status"] == "ok" and not is_report(values["report"], values.get("sources") or []):
        raise RuntimeError("the run says ok but its report cites no source it read")
