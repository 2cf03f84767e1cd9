"""The runs of a checkpoint store: listed newest first, read, deleted.

Each run is a thread in the store: its input checkpoint gives the topic and start time, its
latest checkpoint whether it finished (and how), failed, stopped part-way or awaits a review,
and the tokens it has spent so far with their estimated cost.
Files are found by thread id in the output folder (each JSON document records its thread), in
the folder the run recorded with its checkpoints, or in the one asked.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from deskresearch.config.pricing import estimate
from deskresearch.records import Usage
from deskresearch.report.outcome import finished
from deskresearch.resume_fix import is_cancellation
from deskresearch.services.storage.checkpoints import describe
from deskresearch.session.options import DEFAULT_OUTPUT
from deskresearch.session.reports import documents
from deskresearch.session.settings import Given

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

OUTPUT_DIR_KEY = "deskresearch_output_dir"  # checkpoint metadata: where a run's files go


def resume_command(thread: str, store: Given | None, folder: str | None) -> str:
    """The exact command that continues ``thread``: its store unless the default, its folder."""
    words = ["deskresearch", "--resume", thread]
    if store is not None and store.kind not in ("default", ""):
        words += ["--checkpoints", describe(str(store.value))]
    if folder and folder != DEFAULT_OUTPUT:
        words += ["-o", folder]
    return " ".join(w if w == "DIR" else shlex.quote(w) for w in words)


@dataclass
class RunRow:
    """One earlier run."""

    thread_id: str
    started: str  # ISO time, UTC
    topic: str
    status: str  # ok, insufficient_evidence, unfinished, failed, awaiting review
    files: list[str] = field(default_factory=list)
    folder: str = ""  # where the run's files were written (its -o), when it says
    tokens: int = 0  # input and output tokens spent so far
    cost_usd: float | None = 0.0  # their estimated cost; None: a model has no known price


def _status(values: dict[str, Any], writes: Sequence[Any]) -> str:
    channels = {w[1] for w in writes if len(w) > 2}
    if finished(values):
        return str(values["status"])
    if "__interrupt__" in channels:
        return "awaiting review"
    # LangGraph may save a CancelledError for each task a Ctrl-C cancelled: not a failure.
    if any(w[1] == "__error__" and not is_cancellation(w[2]) for w in writes if len(w) > 2):
        return "failed"
    return "unfinished"


async def list_runs(saver: BaseCheckpointSaver[str], limit: int) -> list[RunRow]:
    """Return up to ``limit`` runs saved in the store ``saver`` opened, newest first."""
    rows: list[RunRow] = []
    starts = []  # collected first: the store's iterator holds its lock while it yields
    async for tup in saver.alist(None, filter={"source": "input"}):
        if not tup.config["configurable"].get("checkpoint_ns"):  # not a page's or query's
            starts.append(tup)
            if len(starts) >= limit:
                break
    for tup in starts:
        thread = str(tup.config["configurable"]["thread_id"])
        start = tup.checkpoint["channel_values"].get("__start__") or {}
        latest = await saver.aget_tuple({"configurable": {"thread_id": thread}})
        values = dict(latest.checkpoint["channel_values"]) if latest else {}
        writes = (latest.pending_writes or []) if latest else []
        topic = values.get("topic") or (start.get("topic") if isinstance(start, dict) else "")
        folder = str((latest.metadata or {}).get(OUTPUT_DIR_KEY) or "") if latest else ""
        status = _status(values, writes)
        usage = cast(list[Usage], [u for u in values.get("usage") or [] if isinstance(u, dict)])
        usd, unpriced = estimate(usage)
        tokens = sum(int(u.get("input_tokens", 0)) + int(u.get("output_tokens", 0)) for u in usage)
        rows.append(RunRow(thread, tup.checkpoint["ts"], str(topic or ""), status, [], folder,
                           tokens, None if unpriced else round(usd, 6)))  # fmt: skip
    return rows


def attach_files(rows: list[RunRow], out_dir: Path | None) -> None:
    """Fill each row's files from the result documents in its own folder (or ``out_dir``)."""
    folders = {Path(r.folder) for r in rows if r.folder} | ({out_dir} if out_dir else set())
    found: dict[str, list[str]] = {}
    for folder in sorted(folders):
        for thread, files in documents(folder).items():
            found.setdefault(thread, []).extend(f for f in files if f not in found.get(thread, []))
    for row in rows:
        row.files += found.get(row.thread_id, [])
