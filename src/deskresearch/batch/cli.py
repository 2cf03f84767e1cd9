"""``deskresearch batch FILE``: options, the run in the chosen place, the summary, the exit code.

Exit codes: 0 every topic has a report, 2 some ended with insufficient evidence (none failed),
1 a topic failed, a line was skipped, or the batch could not start (one line: cause and fix).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from deskresearch.batch.board import Board, pick_mode
from deskresearch.batch.runner import Job, build_job
from deskresearch.batch.summary import CSV_NAME, JSON_NAME, BatchSummary, previous
from deskresearch.batch.topics import BadLine, Topic, default_batch_id, read_batch
from deskresearch.errors import ConfigError, Unreachable
from deskresearch.services.servers import check_ray_address, searches_at_most
from deskresearch.services.storage.checkpoints import CHECKPOINTS_ENV, default_location
from deskresearch.session.options import (
    DEFAULT_OUTPUT,
    FORMATS,
    MAX_CONCURRENCY,
    PROGRESS,
    add_setting_options,
    bounded,
    given_settings,
)
from deskresearch.session.plan import Entry, admit, reach
from deskresearch.session.reports import ReportFiles
from deskresearch.session.run import Session
from deskresearch.session.settings import Sources, gather
from deskresearch.session.style import (
    EXIT_CODES,
    EXIT_CONFIG,
    EXIT_INSUFFICIENT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PROVIDER,
    CommandParser,
    report,
)
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
        type=bounded(int, 1, 10_000),
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
        type=bounded(int, 1, 1024),
        default=MAX_CONCURRENCY,
        help=f"parallel graph tasks per step of one topic, 1 to 1024 (default: {MAX_CONCURRENCY})",
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
        type=bounded(float, 0.01, 1024),
        default=1.0,
        help="CPUs a topic reserves on a node (default 1; 0.5: two per CPU)",
    )
    ray.add_argument(
        "--ray-retries",
        type=bounded(int, 0, 100),
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


def _jobs(topics: list[Topic], sources: Sources, entry: Entry) -> tuple[list[Job], list[BadLine]]:
    jobs, bad = [], []
    for t in topics:
        try:
            jobs.append(build_job(t, sources, entry))
        except ConfigError as exc:
            bad.append(BadLine(t.line, t.topic, str(exc)))
    return jobs, bad


def _say(text: str) -> None:
    print(f"deskresearch: {text}", file=sys.stderr, flush=True)  # noqa: T201 - the CLI's voice


def _session(args: argparse.Namespace, entry: Entry, sources: Sources) -> Session:
    """The batch's session: its store (here, on the cluster's database, or the server's)."""
    settings = gather(sources)
    rows = previous(args.output_dir)  # read before this run's summary replaces the file
    files = ReportFiles(settings["output_dir"], args.format,
                        earlier={t: list(r.get("files") or []) for t, r in rows.items()})  # fmt: skip
    if args.server:
        from deskresearch.session.server import ServerGraph

        engine = ServerGraph(args.server, assistant=args.assistant, detach=True,
                             source="deskresearch batch")  # fmt: skip
        return Session(entry=entry, engine=engine, files=files, check_once=True,
                       again=lambda thread, folder: f"this batch again with -o {folder}")  # fmt: skip
    return Session(entry=entry, store=settings["checkpoints"], files=files,
                   max_concurrency=args.max_concurrency, check_once=True)  # fmt: skip


def _run(
    args: argparse.Namespace, session: Session, jobs: list[Job], summary: BatchSummary, board: Board
) -> None:
    if args.ray:
        from deskresearch.batch.ray_driver import RayOptions, run_ray

        opts = RayOptions(address=args.ray, concurrency=args.concurrency, cpus=args.ray_cpus,
                          retries=args.ray_retries, forward_keys=args.forward_keys,
                          max_concurrency=args.max_concurrency)  # fmt: skip
        run_ray(session, jobs, opts, board=board, summary=summary)
        return
    from deskresearch.batch.local import run_all

    asyncio.run(run_all(session, jobs, concurrency=args.concurrency or LOCAL_CONCURRENCY,
                        board=board, summary=summary, node=args.server or ""))  # fmt: skip


def _preflight(
    args: argparse.Namespace, session: Session, sources: Sources, entry: Entry
) -> Callable[[list[Job]], list[str]]:
    """The pre-flight of a single run, once for the batch's own settings (session.plan).

    With --server the server's settings and endpoints are its own: the output folder here, and
    the server answers; with --ray the nodes' keys and endpoints are theirs: the folder, the
    database, the cluster (each node checks its own when it runs a topic). Returns the network
    part, run once the batch's topics are read (Tavily's credits are held against all their
    searches): it returns its notices.
    """
    settings = gather(sources)
    ctx = admit(settings, entry=entry)
    if args.server:
        from deskresearch.session.server import ServerGraph

        assert isinstance(session.engine, ServerGraph)
        asyncio.run(session.engine.check())
        return lambda jobs: []
    if args.ray:
        from deskresearch.batch.ray_driver import check_location

        check_ray_address(args.ray)
        check_location(settings["checkpoints"])

    def network(jobs: list[Job]) -> list[str]:
        searches = (sum(searches_at_most(job.context()) for job in jobs), "this batch")
        return list(asyncio.run(reach(ctx, settings, entry=entry, searches=searches)).notices)

    return network


def main(argv: Sequence[str] | None = None) -> int:
    """Run a batch; return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    places = {"output_dir": str(args.output_dir), "checkpoints": args.checkpoints}
    if args.server:  # the server's checkpoints are its own
        places["checkpoints"] = None
    sources = Sources(flags={**given_settings(vars(args)), **places}, environ=os.environ,
                      defaults={"output_dir": DEFAULT_OUTPUT} | ({} if args.server else
                                {"checkpoints": default_location()}))  # fmt: skip
    # Nobody answers a review in a batch; on Ray and on a server the providers are elsewhere.
    entry = Entry("deskresearch batch", providers=not (args.ray or args.server))
    say = (lambda text: None) if args.quiet else _say
    try:  # a bad flag, variable or path is named once before any line is read; a server, before
        # any topic runs
        session = _session(args, entry, sources)
        network = _preflight(args, session, sources, entry)
        batch_id = args.batch_id or default_batch_id(args.file)
        topics, bad = read_batch(args.file, batch_id)
        jobs, invalid = _jobs(topics, sources, entry)
        notices = network(jobs)
    except (ConfigError, Unreachable) as exc:
        return report(exc, debug=args.debug, prog="deskresearch batch")
    bad = sorted(bad + invalid, key=lambda b: b.line)
    where = f"Ray cluster {args.ray}" if args.ray else args.server or "this process"
    meta = {"batch_id": batch_id, "file": str(args.file), "where": where,
            "checkpoints": session.engine.where}  # fmt: skip
    summary = BatchSummary(args.output_dir, meta, [j.topic for j in jobs], bad)
    say(f"batch {batch_id}: {plural(len(jobs), 'topic')} in {where}; reports in {args.output_dir}/ "
        "(run the same command again to resume)")  # fmt: skip
    for b in bad:
        say(f"line {b.line} skipped: {b.error} ({b.text!r})")
    for notice in notices:  # shown with --quiet too: it may cost the batch
        _say(f"note: {notice}")
    mode = pick_mode(args.progress, args.quiet, sys.stderr)
    try:
        with Board([j.topic for j in jobs], mode) as board:
            _run(args, session, jobs, summary, board)
    except KeyboardInterrupt:
        summary.write(finished=True)
        _say("interrupted: finished topics are saved; run the same command again to resume")
        return EXIT_INTERRUPTED
    except (ConfigError, Unreachable) as exc:
        summary.write(finished=True)
        return report(exc, debug=args.debug, prog="deskresearch batch")
    summary.write(finished=True)
    return _report(summary, args.output_dir, say)


def _report(summary: BatchSummary, out_dir: Path, say: Callable[[str], None]) -> int:
    counts = summary.counts()
    topics = sum(n for status, n in counts.items() if status != "bad_line")
    parts = [f"{counts[s]} {s.replace('_', ' ')}" for s in STATUSES if counts[s]]
    skipped = f"; {plural(counts['bad_line'], 'line')} skipped" if counts["bad_line"] else ""
    _say(f"{plural(topics, 'topic')}: {', '.join(parts) or 'none run'}{skipped} → "
         f"{out_dir / JSON_NAME}, {out_dir / CSV_NAME}")  # fmt: skip
    if counts["failed"] or counts["pending"]:
        say("run the same command again to resume unfinished topics from their checkpoints")
    print(out_dir / JSON_NAME)  # noqa: T201 - the one result on stdout
    if counts["failed"] or counts["pending"]:
        return EXIT_PROVIDER
    if counts["bad_line"]:
        return EXIT_CONFIG
    return EXIT_INSUFFICIENT if counts["insufficient_evidence"] else EXIT_OK
