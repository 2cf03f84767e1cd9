"""``deskresearch batch FILE``: options, the run in the chosen place, the summary, the exit code.

Exit codes: 0 every topic has a report, 2 some ended with insufficient evidence (none failed),
1 a topic failed, a line was skipped, or the batch could not start (one line: cause and fix).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from deskresearch.batch.board import Board, pick_mode
from deskresearch.batch.outputs import Outputs
from deskresearch.batch.runner import Job, build_job
from deskresearch.batch.summary import CSV_NAME, JSON_NAME, BatchSummary, previous
from deskresearch.batch.topics import BadLine, Topic, default_batch_id, read_batch
from deskresearch.cli.command import FORMATS, PROGRESS, add_setting_options
from deskresearch.cli.settings import context_from, gather, origins
from deskresearch.cli.style import (
    EXIT_CODES,
    EXIT_CONFIG,
    EXIT_INSUFFICIENT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PROVIDER,
    CommandParser,
    report,
)
from deskresearch.config.context import field_names
from deskresearch.errors import ConfigError, Unreachable
from deskresearch.graph import MAX_CONCURRENCY
from deskresearch.services.preflight import check_local, check_network, check_ray_address
from deskresearch.services.storage.checkpoints import CHECKPOINTS_ENV, default_location, describe
from deskresearch.text.plural import plural

LOCAL_CONCURRENCY = 4
STATUSES = ("ok", "insufficient_evidence", "failed", "pending")
EXAMPLES = (
    """\
FILE: one research question a line, or one JSON object a line with that topic's settings:
  How are lithium-ion batteries from electric cars recycled?
  {"topic": "Nachtzüge in Europa", "language": "de", "decomposition_nums": 2}

examples:
  deskresearch batch topics.txt --concurrency 8
  deskresearch batch topics.txt --ray auto --checkpoints postgresql://user:pw@db-host/research
  deskresearch batch topics.txt --server http://localhost:2024

Running the same command again skips finished topics and resumes the others from their
checkpoints. """
    + EXIT_CODES.replace(
        "4 a server does not answer",
        "4 a server does not answer or a topic failed (see batch.json)",
    ).replace("5 insufficient evidence", "5 some topics found insufficient evidence")
    + ("; 3 also when a line was skipped")
)


def build_parser() -> argparse.ArgumentParser:
    """The batch command's parser (every research setting too; a line's settings win)."""
    p = CommandParser(
        prog="deskresearch batch",
        description="Research many topics: in this process, on a Ray cluster, or on a LangGraph server.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", type=Path, help="the topics file")
    p.add_argument(
        "-o",
        "--output-dir",
        type=Path,
        default=Path("reports"),
        help="where reports, batch.json and batch.csv go (default: reports)",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="md",
        help="each report as markdown, a self-contained HTML page, or both (default: md; "
        "its JSON is always written)",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        default=None,
        help=f"topics in flight at once (default: {LOCAL_CONCURRENCY}; with --ray, "
        "as many as the cluster's CPUs take; with --server, 4)",
    )
    p.add_argument(
        "--checkpoints",
        metavar="PATH_OR_URL",
        help=f"where runs are saved (env {CHECKPOINTS_ENV}); --ray needs postgresql://",
    )
    p.add_argument(
        "--batch-id",
        help="names the batch's threads (default: the file's absolute "
        "path); give the same id to resume a moved file",
    )
    p.add_argument(
        "--progress",
        choices=PROGRESS,
        default="auto",
        help="live table (auto: on a terminal) or one line per topic start and end",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="only the final summary line")
    p.add_argument("--debug", action="store_true", help="on an error, print its traceback")
    p.add_argument(
        "--max-concurrency",
        type=int,
        default=MAX_CONCURRENCY,
        help=f"parallel graph tasks per step of one topic (default: {MAX_CONCURRENCY})",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="run each topic as a task on this Ray cluster ('auto': the one "
        "this machine belongs to); pip install '.[ray]' in deskresearch's folder",
    )
    where.add_argument(
        "--server",
        metavar="URL",
        help="submit the topics to a LangGraph API server (langgraph dev, "
        "a deployment) through langgraph-sdk",
    )
    ray = p.add_argument_group("Ray")
    ray.add_argument(
        "--ray-cpus",
        type=float,
        default=1.0,
        help="CPUs a topic reserves on a node (default 1; 0.5: two per CPU)",
    )
    ray.add_argument(
        "--ray-retries",
        type=int,
        default=3,
        help="times a topic is retried after its node or worker died (default 3)",
    )
    ray.add_argument(
        "--forward-keys",
        action="store_true",
        help="send this shell's OPENAI_API_KEY / TAVILY_API_KEY to the cluster "
        "(they show in Ray's runtime env); default: nodes have their own",
    )
    server = p.add_argument_group("server")
    server.add_argument(
        "--assistant",
        default="researcher",
        help="the graph or assistant id on the server (default: researcher)",
    )
    add_setting_options(p)
    return p  # fmt: skip


def _jobs(topics: list[Topic], flags: dict[str, Any]) -> tuple[list[Job], list[BadLine]]:
    jobs, bad = [], []
    for t in topics:
        try:
            jobs.append(build_job(t, flags))
        except ConfigError as exc:
            bad.append(BadLine(t.line, t.topic, str(exc)))
    return jobs, bad


def _outputs(args: argparse.Namespace) -> Outputs:
    rows = previous(args.output_dir)  # read before this run's summary replaces the file
    return Outputs(
        args.output_dir, args.format, {t: list(r.get("files") or []) for t, r in rows.items()}
    )


def _say(text: str) -> None:
    print(f"deskresearch: {text}", file=sys.stderr, flush=True)  # noqa: T201 - the CLI's voice


def _run(
    args: argparse.Namespace, jobs: list[Job], outputs: Outputs, summary: BatchSummary, board: Board
) -> None:
    location = args.checkpoints or default_location()
    if args.ray:
        from deskresearch.batch.ray_driver import RayOptions, run_ray

        opts = RayOptions(address=args.ray, location=location, concurrency=args.concurrency,
                          cpus=args.ray_cpus, retries=args.ray_retries,
                          forward_keys=args.forward_keys, max_concurrency=args.max_concurrency)  # fmt: skip
        run_ray(jobs, opts, outputs=outputs, board=board, summary=summary)
    elif args.server:
        from deskresearch.batch.server import run_server

        asyncio.run(run_server(jobs, url=args.server, assistant=args.assistant,
                               concurrency=args.concurrency or LOCAL_CONCURRENCY,
                               outputs=outputs, board=board, summary=summary))  # fmt: skip
    else:
        from deskresearch.batch.local import run_local

        asyncio.run(run_local(jobs, location=location,
                              concurrency=args.concurrency or LOCAL_CONCURRENCY,
                              max_concurrency=args.max_concurrency, outputs=outputs,
                              board=board, summary=summary))  # fmt: skip


def _preflight(args: argparse.Namespace, ns: argparse.Namespace) -> None:
    """The pre-flight of a single run, once for the batch's own settings (services.preflight).

    With --server the server's settings and endpoints are its own: only the output folder here;
    with --ray the nodes' keys and endpoints are theirs: the folder, the database, the cluster.
    """
    given = gather(ns, os.environ)
    ctx = context_from(given)
    where = origins(given, ns)
    location = None if args.server else args.checkpoints or default_location()
    local = not args.server and not args.ray
    check_local(ctx, output_dir=str(args.output_dir), checkpoints=location, origins=where,
                providers=local)  # fmt: skip
    if args.server:
        return
    if args.ray:
        check_ray_address(args.ray)
    asyncio.run(check_network(ctx, checkpoints=location, origins=where, providers=local))


def main(argv: Sequence[str] | None = None) -> int:
    """Run a batch; return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.concurrency is not None and args.concurrency < 1:
        parser.error(f"--concurrency {args.concurrency}: give 1 or more topics at once")
    if args.review_plan:
        parser.error(
            "--review-plan pauses each run for a person to review its pages, and a batch has "
            "nobody to answer: leave it out (review single runs with deskresearch --review)"
        )
    flags = {name: getattr(args, name) for name in field_names()}
    ns = argparse.Namespace(**vars(args), config=None, review=None)
    try:  # a bad flag, variable, path or server is named once, before any line is read
        _preflight(args, ns)
        batch_id = args.batch_id or default_batch_id(args.file)
        topics, bad = read_batch(args.file, batch_id)
        jobs, invalid = _jobs(topics, flags)
    except (ConfigError, Unreachable) as exc:
        return report(exc, debug=args.debug, prog="deskresearch batch")
    bad = sorted(bad + invalid, key=lambda b: b.line)
    where = f"Ray cluster {args.ray}" if args.ray else args.server or "this process"
    meta = {"batch_id": batch_id, "file": str(args.file), "where": where,
            "checkpoints": describe(args.checkpoints or default_location())}  # fmt: skip
    outputs = _outputs(args)
    summary = BatchSummary(args.output_dir, meta, [j.topic for j in jobs], bad)
    _say(f"batch {batch_id}: {plural(len(jobs), 'topic')} in {where}; reports in {args.output_dir}/ "
         "(run the same command again to resume)")  # fmt: skip
    for b in bad:
        _say(f"line {b.line} skipped: {b.error} ({b.text!r})")
    mode = pick_mode(args.progress, args.quiet, sys.stderr)
    try:
        with Board([j.topic for j in jobs], mode) as board:
            _run(args, jobs, outputs, summary, board)
    except KeyboardInterrupt:
        summary.write(finished=True)
        _say("interrupted: finished topics are saved; run the same command again to resume")
        return EXIT_INTERRUPTED
    except (ConfigError, Unreachable) as exc:
        summary.write(finished=True)
        return report(exc, debug=args.debug, prog="deskresearch batch")
    summary.write(finished=True)
    return _report(summary, args.output_dir)


def _report(summary: BatchSummary, out_dir: Path) -> int:
    counts = summary.counts()
    topics = sum(n for status, n in counts.items() if status != "bad_line")
    parts = [f"{counts[s]} {s.replace('_', ' ')}" for s in STATUSES if counts[s]]
    skipped = f"; {plural(counts['bad_line'], 'line')} skipped" if counts["bad_line"] else ""
    _say(f"{plural(topics, 'topic')}: {', '.join(parts) or 'none run'}{skipped} → "
         f"{out_dir / JSON_NAME}, {out_dir / CSV_NAME}")  # fmt: skip
    if counts["failed"] or counts["pending"]:
        _say("run the same command again to resume unfinished topics from their checkpoints")
    print(out_dir / JSON_NAME)  # noqa: T201 - the one result on stdout
    if counts["failed"] or counts["pending"]:
        return EXIT_PROVIDER
    if counts["bad_line"]:
        return EXIT_CONFIG
    return EXIT_INSUFFICIENT if counts["insufficient_evidence"] else EXIT_OK
