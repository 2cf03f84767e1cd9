"""``deskresearch runs``: earlier runs of a checkpoint store, newest first, as a table or JSON."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime

from deskresearch.services.storage.checkpoints import CHECKPOINTS_ENV
from deskresearch.session.engines import LocalGraph
from deskresearch.session.options import DEFAULT_OUTPUT, bounded
from deskresearch.session.plan import Entry
from deskresearch.session.reports import ReportFiles
from deskresearch.session.run import Session
from deskresearch.session.settings import Sources, gather
from deskresearch.session.store import RunRow
from deskresearch.session.style import CommandParser


def _local(ts: str) -> str:
    try:
        return datetime.fromisoformat(ts).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return ts


async def _rows(session: Session, limit: int) -> list[RunRow]:
    async with session:
        return await session.runs(limit)


def main(argv: Sequence[str]) -> int:
    """List earlier runs; return the exit code."""
    from deskresearch.services.storage.checkpoints import default_location

    parser = CommandParser(prog="deskresearch runs", description="List earlier runs, newest first.")
    parser.add_argument(
        "--checkpoints",
        metavar="PATH_OR_URL",
        help=f"the checkpoint store [env {CHECKPOINTS_ENV}; default: the one runs use]",
    )
    parser.add_argument("-o", "--output-dir", help="where to look for files (default: reports)")
    parser.add_argument("-n", "--limit", type=bounded(int, 1, 100_000), default=20,
                        help="how many (default 20)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--debug", action="store_true", help="on an error, print its traceback")
    args = parser.parse_args(argv)
    settings = gather(Sources(
        flags={"checkpoints": args.checkpoints, "output_dir": args.output_dir},
        environ=os.environ,
        defaults={"checkpoints": default_location(), "output_dir": DEFAULT_OUTPUT},
    ))  # fmt: skip
    store = LocalGraph(str(settings["checkpoints"].value))
    session = Session(entry=Entry("deskresearch runs"), engine=store, store=settings["checkpoints"],
                      files=ReportFiles(settings["output_dir"]))  # fmt: skip
    if store.location == "memory" or not store.exists():
        print(f"no runs saved in {store.where}", file=sys.stderr)
        return 0
    rows = asyncio.run(_rows(session, args.limit))
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
        print(f"no runs saved in {store.where}", file=sys.stderr)
    return 0
