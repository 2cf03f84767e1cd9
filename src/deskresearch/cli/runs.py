"""``deskresearch runs``: earlier runs from the checkpoint store, newest first.

Each run is a thread in the store: its input checkpoint gives the topic and start time, its
latest checkpoint whether it finished (and how), failed, stopped part-way or awaits a review.
Files are found by thread id in the output folder (each JSON document records its thread).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from deskresearch.cli.style import CommandParser
from deskresearch.report.outcome import finished
from deskresearch.resume_fix import is_cancellation
from deskresearch.services.storage.checkpoints import (
    CHECKPOINTS_ENV,
    default_location,
    describe,
    open_checkpointer,
)

OUTPUT_DIR_KEY = "deskresearch_output_dir"  # checkpoint metadata: where the CLI wrote files


@dataclass
class RunRow:
    """One earlier run."""

    thread_id: str
    started: str  # ISO time, UTC
    topic: str
    status: str  # ok, insufficient_evidence, unfinished, failed, awaiting review
    files: list[str]
    folder: str = ""  # where the run's files were written (its -o), when it says


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


async def list_runs(location: str, limit: int) -> list[RunRow]:
    """Return up to ``limit`` runs saved at ``location``, newest first."""
    rows: list[RunRow] = []
    async with open_checkpointer(location) as saver:
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
            rows.append(RunRow(thread, tup.checkpoint["ts"], str(topic or ""), status, [], folder))
    return rows


def _documents(out_dir: Path) -> dict[str, list[str]]:
    """The files of each thread id whose result document is in ``out_dir`` (report first)."""
    found: dict[str, list[str]] = {}
    for js in sorted(out_dir.glob("*.json")) if out_dir.is_dir() else []:
        try:
            doc = json.loads(js.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and doc.get("thread_id"):
            named = doc.get("files") or {}
            files = [str(out_dir / named[k]) for k in ("report", "html") if named.get(k)]
            found.setdefault(str(doc["thread_id"]), []).extend([*files, str(js)])
    return found


def files_of(thread_id: str, out_dir: Path) -> list[str]:
    """The files a run wrote in ``out_dir``, its report first ([] when none is there)."""
    return _documents(out_dir).get(thread_id, [])


def attach_files(rows: list[RunRow], out_dir: Path | None) -> None:
    """Fill each row's files from the result documents in its own folder (or ``out_dir``)."""
    folders = {Path(r.folder) for r in rows if r.folder} | ({out_dir} if out_dir else set())
    found: dict[str, list[str]] = {}
    for folder in sorted(folders):
        for thread, files in _documents(folder).items():
            found.setdefault(thread, []).extend(f for f in files if f not in found.get(thread, []))
    for row in rows:
        row.files += found.get(row.thread_id, [])


def _local(ts: str) -> str:
    try:
        return datetime.fromisoformat(ts).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return ts


def main(argv: Sequence[str]) -> int:
    """List earlier runs; return the exit code."""
    parser = CommandParser(prog="deskresearch runs", description="List earlier runs, newest first.")
    parser.add_argument(
        "--checkpoints",
        metavar="PATH_OR_URL",
        help=f"the checkpoint store [env {CHECKPOINTS_ENV}; default: the one runs use]",
    )
    parser.add_argument("-o", "--output-dir", default="reports", help="where to look for files")
    parser.add_argument("-n", "--limit", type=int, default=20, help="how many (default 20)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--debug", action="store_true", help="on an error, print its traceback")
    args = parser.parse_args(argv)
    if args.limit < 1:
        parser.error(f"-n {args.limit}: give how many runs to list, 1 or more")
    location = args.checkpoints or default_location()
    path = location.removeprefix("sqlite:///")
    if location == "memory" or ("://" not in path and not Path(path).expanduser().exists()):
        print(f"no runs saved in {describe(location)}", file=sys.stderr)
        return 0
    rows = asyncio.run(list_runs(location, args.limit))
    attach_files(rows, Path(args.output_dir))
    if args.json:
        for row in rows:
            print(json.dumps(asdict(row), ensure_ascii=False))
        return 0
    print(f"{'started':<16}  {'status':<21}  {'thread id':<32}  topic / files")
    for row in rows:
        print(f"{_local(row.started):<16}  {row.status:<21}  {row.thread_id:<32}  {row.topic}")
        for file in row.files:
            print(f"{'':<73}  {file}")
    if not rows:
        print(f"no runs saved in {describe(location)}", file=sys.stderr)
    return 0
