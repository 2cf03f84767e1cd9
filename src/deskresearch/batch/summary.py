"""The batch's summary: ``batch.json`` and ``batch.csv``, one row a topic (and a bad line).

Both files are rewritten (atomically) whenever a topic ends, so a batch killed half-way still
says which topics are done, where their reports are, and which thread to resume.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from deskresearch.batch.topics import BadLine, Topic
from deskresearch.records import Usage
from deskresearch.report.contract import totals
from deskresearch.safety.masking import mask_secrets, masked

_CITE = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_WORD = re.compile(r"\w[\w'’-]*")
JSON_NAME, CSV_NAME = "batch.json", "batch.csv"


@dataclass
class Row:
    """One topic's outcome (status: ok, insufficient_evidence, failed, pending, bad_line)."""

    line: int
    topic: str
    status: str = "pending"
    run: str = ""  # new, resumed (continued from checkpoints), earlier (finished before)
    words: int = 0
    sources: int = 0
    cited: int = 0  # distinct sources the report cites
    citations: dict[str, int] = field(default_factory=dict)  # verdict → sentences, when checked
    # Over every attempt of this batch at the topic (batch.ledger), a lost Ray task's included.
    tokens_in: int = 0
    tokens_out: int = 0
    model_calls: int = 0
    cached_calls: int = 0
    cost_usd: float | None = None  # at list prices (config.pricing); None: a model has no price
    wall_s: float = 0.0
    thread_id: str = ""
    node: str = ""  # where it ran: a Ray node id, the server's URL; "" locally
    rss_mb: float | None = None  # peak memory of the Ray worker process that ran it
    files: list[str] = field(default_factory=list)  # the report (md, html) and its JSON
    error: str = ""
    reason: str = ""  # why an insufficient_evidence run wrote no report


def row_for(
    topic: Topic,
    values: dict[str, Any],
    *,
    run: str,
    wall_s: float,
    files: Sequence[Path],
    usage: Sequence[Usage] | None = None,
) -> Row:
    """The row of a topic that ended with a result.

    ``usage``: the calls of every attempt (batch.ledger); by default the result's own.
    """
    report = str(values.get("report") or "")
    ids = {int(i) for group in _CITE.findall(report) for i in group.split(",")}
    known = {s.get("id") for s in values.get("sources") or []}
    verdicts = Counter(
        str(c.get("verdict")) for c in values.get("citations") or [] if isinstance(c, dict)
    )
    row = Row(
        line=topic.line,
        topic=topic.topic,
        status=str(values.get("status")),
        run=run,
        words=len(_WORD.findall(_CITE.sub("", report))),  # citation marks are no words
        sources=len(known),
        cited=len(ids & known),
        citations=dict(verdicts),
        wall_s=round(wall_s, 2),
        thread_id=topic.thread_id,
        files=[str(f) for f in files],
        reason=str(values.get("reason") or ""),
    )
    return _spent(row, values.get("usage") or [] if usage is None else usage)


def failed_row(
    topic: Topic, error: str, *, wall_s: float, run: str = "", usage: Sequence[Usage] = ()
) -> Row:
    """The row of a topic whose run raised (its checkpoints stay: a re-run resumes it)."""
    row = Row(topic.line, topic.topic, "failed", run, wall_s=round(wall_s, 2),
              thread_id=topic.thread_id, error=error)  # fmt: skip
    return _spent(row, usage)


def _spent(row: Row, usage: Sequence[Usage]) -> Row:
    """Fill the row's calls, tokens and estimated cost from ``usage``."""
    spent = totals(usage)  # the result JSON's rule
    row.tokens_in, row.tokens_out = spent["input_tokens"], spent["output_tokens"]
    row.model_calls, row.cached_calls = spent["calls"], spent["cached_calls"]
    row.cost_usd = spent["estimated_cost_usd"]
    return row


class BatchSummary:
    """The rows of one batch, written to ``batch.json`` and ``batch.csv`` on every change."""

    def __init__(
        self, out_dir: Path, meta: dict[str, Any], topics: list[Topic], bad: list[BadLine]
    ) -> None:
        self.out_dir = out_dir
        self.meta = {**meta, "started": _now()}
        self.rows: dict[int, Row] = {t.line: Row(t.line, t.topic, thread_id=t.thread_id)
                                     for t in topics}  # fmt: skip
        for b in bad:
            self.rows[b.line] = Row(b.line, b.text, "bad_line", error=b.error)
        self._earlier = {tid: float(r.get("wall_s") or 0) for tid, r in previous(out_dir).items()}

    def update(self, row: Row) -> None:
        """Record a topic's outcome and rewrite both files."""
        if row.run == "earlier" and not row.wall_s:
            row.wall_s = self._earlier.get(row.thread_id, 0.0)
        self.rows[row.line] = row
        self.write()

    def counts(self) -> Counter[str]:
        """Topics (and bad lines) per status."""
        return Counter(r.status for r in self.rows.values())

    def write(self, *, finished: bool = False) -> None:
        """Write ``batch.json`` and ``batch.csv`` (each replaced in one step)."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        rows = [self.rows[k] for k in sorted(self.rows)]
        meta = {**self.meta, "counts": dict(self.counts())}
        if finished:
            meta["finished"] = _now()
        # A server URL or an error message may carry a credential: masked, as everywhere.
        doc = {**masked(meta), "topics": [_public(r) for r in rows]}
        _replace(self.out_dir / JSON_NAME, json.dumps(doc, ensure_ascii=False, indent=2))
        buf = io.StringIO()
        writer = csv.writer(buf)
        names = [f.name for f in fields(Row)]
        writer.writerow(names)
        for r in rows:
            values = _public(r)
            values["citations"] = " ".join(f"{k}={v}" for k, v in r.citations.items())
            values["files"] = " ".join(r.files)
            writer.writerow(["" if values[n] is None else values[n] for n in names])
        _replace(self.out_dir / CSV_NAME, buf.getvalue())


def _public(row: Row) -> dict[str, Any]:
    """A row fit to write: secrets in its error and node (a server URL) masked."""
    return {**asdict(row), "error": mask_secrets(row.error), "node": mask_secrets(row.node)}


def previous(out_dir: Path) -> dict[str, dict[str, Any]]:
    """The rows a previous run of the batch wrote to ``batch.json`` there, by thread id."""
    try:
        data = json.loads((out_dir / JSON_NAME).read_text(encoding="utf-8"))
        return {
            r["thread_id"]: r for r in data["topics"] if isinstance(r, dict) and r.get("thread_id")
        }
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _replace(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
