"""The ``deskresearch`` command: flags → Context, progress on stderr, report files, exit codes.

Every run is checkpointed (SQLite in the user's data folder unless --checkpoints says otherwise)
under a thread id printed at the start; ``--resume THREAD_ID`` continues it after a crash.
Exit codes: 0 report written, 2 insufficient evidence, 1 error (one line: cause and fix).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import typing
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command
from slugify import slugify

from deskresearch.cli_review import answer_from, show_plan
from deskresearch.context import ENV_PREFIX, Context, field_description, field_names, validated
from deskresearch.errors import ConfigError
from deskresearch.graph import MAX_CONCURRENCY, build_graph
from deskresearch.grounding.ledger import summary_line
from deskresearch.services.checkpoints import (
    CHECKPOINTS_ENV,
    default_location,
    describe,
    open_checkpointer,
)
from deskresearch.tracing import run_config

EXIT_OK, EXIT_ERROR, EXIT_INSUFFICIENT = 0, 1, 2
MAX_SLUG_CHARS = 80


def slug_for(topic: str) -> str:
    """Return a file-name-safe slug for any topic (unicode transliterated, length capped)."""
    return slugify(topic, max_length=MAX_SLUG_CHARS, word_boundary=True) or "research"


def _field_type(name: str) -> tuple[Any, list[str] | None]:
    """Return (argparse type, choices) for a Context field."""
    hint = typing.get_type_hints(Context, include_extras=True)[name]
    base = typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated else hint
    if typing.get_origin(base) is typing.Literal:
        return str, [str(a) for a in typing.get_args(base)]
    return (base if base in (int, float) else str), None


def build_parser() -> argparse.ArgumentParser:
    """Return the parser; one option per Context field, each naming its env var."""
    parser = argparse.ArgumentParser(
        prog="deskresearch",
        description="Research a topic on the web (or in your files) and write a cited markdown report.",
        epilog="Model endpoint: OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL / --base-url "
        "(Ollama, vLLM, llama.cpp). Search: TAVILY_API_KEY. Exit codes: 0 ok, "
        "2 insufficient evidence, 1 error.",
    )
    parser.add_argument("topic", nargs="?", help="the research question (not with --resume)")
    parser.add_argument(
        "--resume",
        metavar="THREAD_ID",
        help="continue an interrupted run (its thread id is printed when it starts); "
        "finished steps are not redone, settings are the run's own unless flags override them",
    )
    parser.add_argument(
        "--review",
        nargs="?",
        const="-",
        metavar="ANSWER_JSON",
        help="pause after ranking to review the planned pages: type numbers to drop, or give a "
        'JSON answer file (true, or {"drop_urls"|"keep_urls"|"drop_queries": [...]})',
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the persistent cache of answers, searches and pages "
        "(the same as --cache false)",
    )
    parser.add_argument(
        "--checkpoints",
        metavar="PATH_OR_URL",
        help="where runs are saved: a SQLite file, a postgresql:// URL, or 'memory' (no resume) "
        f"[env {CHECKPOINTS_ENV}; default: a file in your user data folder]",
    )
    parser.add_argument(
        "-o",
        "--output-dir",
        default="reports",
        help="where <slug>.md / .html and <slug>.json go (default: reports)",
    )
    parser.add_argument(
        "--format",
        choices=("md", "html", "md+html"),
        default="md",
        help="the report as markdown, as one self-contained HTML page with its evidence, "
        "or both (default: md; the JSON is always written)",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no progress on stderr (the thread id still)"
    )
    parser.add_argument(
        "--max-concurrency",
        type=int,
        default=MAX_CONCURRENCY,
        help=f"parallel graph tasks per step (default: {MAX_CONCURRENCY}); calls to providers "
        "are bounded by --max-model-calls, --max-fetches, --max-fetches-per-host",
    )
    defaults = Context()
    settings = parser.add_argument_group("research settings (flag > environment > default)")
    for name in field_names():
        kind, choices = _field_type(name)
        settings.add_argument(
            f"--{name.replace('_', '-')}",
            dest=name,
            type=kind,
            choices=choices,
            default=None,
            help=f"{field_description(name)} [env {ENV_PREFIX}{name.upper()}; default {getattr(defaults, name)!r}]",
        )
    return parser


def _progress(event: dict[str, Any]) -> None:
    details = " ".join(
        f"{k}={v}"
        for k, v in event.items()
        if k not in ("stage", "event") and not isinstance(v, list | dict)
    )
    print(f"[{event.get('stage')}] {event.get('event')} {details}".rstrip(), file=sys.stderr)


async def _stream(
    graph: Any,
    graph_input: dict[str, Any] | Command[Any] | None,
    ctx: Context,
    config: RunnableConfig,
    *,
    banner: str,
    quiet: bool,
) -> dict[str, Any]:
    """Run to the end; print ``banner`` once the run has passed its checks, then progress."""
    final: dict[str, Any] = {}
    async for namespace, mode, chunk in graph.astream(
        graph_input,
        config,
        context=ctx,
        stream_mode=["custom", "values"],
        subgraphs=True,
        durability="sync",  # a step is on disk before the next starts: kill -9 loses no step
    ):
        if mode == "custom" and isinstance(chunk, dict):
            if banner:
                print(banner, file=sys.stderr)
                banner = ""
            if not quiet:
                _progress(chunk)
        elif mode == "values" and not namespace and isinstance(chunk, dict):
            final = chunk
    return final


async def _session(
    args: argparse.Namespace, overrides: dict[str, Any]
) -> tuple[dict[str, Any], Context]:
    """Start or resume one run under a checkpointer; return its final state and settings."""
    location = args.checkpoints or default_location()
    thread = args.resume or uuid.uuid4().hex
    async with open_checkpointer(location) as saver:
        graph = build_graph(checkpointer=saver, max_concurrency=args.max_concurrency)
        graph_input: dict[str, Any] | None = {"topic": args.topic}
        if args.resume:
            saved = await graph.aget_state({"configurable": {"thread_id": thread}})
            if not saved.values:
                raise ConfigError(
                    f"no run with thread id {thread!r} in {describe(location)}: check the id "
                    "printed when the run started, and --checkpoints"
                )
            given = {k: v for k, v in overrides.items() if v is not None}
            ctx = validated({**saved.values.get("settings", {}), **given}, source="the saved run")
            if not saved.next:  # it had finished: write its files again
                return dict(saved.values), ctx
            graph_input = None
        else:
            ctx = Context.from_env(**overrides)
        topic = args.topic or saved.values.get("topic", "")
        config: RunnableConfig = {
            **run_config(topic, ctx, thread_id=thread),
            "configurable": {"thread_id": thread},
        }
        banner = (
            f"deskresearch: thread {thread} in {describe(location)} "
            f"(after a crash: deskresearch --resume {thread})"
        )
        run_input: dict[str, Any] | Command[Any] | None = graph_input
        while True:
            final = await _stream(graph, run_input, ctx, config, banner=banner, quiet=args.quiet)
            banner = ""
            paused = (await graph.aget_state(config)).interrupts
            if not paused:
                return final, ctx
            show_plan(paused[0].value)
            run_input = Command(resume=answer_from(paused[0].value, args.review or "-"))


def write_outputs(
    result: dict[str, Any], ctx: Context, topic: str, out_dir: Path, fmt: str = "md"
) -> list[Path]:
    """Write <slug>.md and/or <slug>.html (``fmt``), then <slug>.json; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    slug = slug_for(topic)
    written: list[Path] = []
    if "md" in fmt:
        written.append(out_dir / f"{slug}.md")
        written[-1].write_text(result.get("report", ""), encoding="utf-8")
    if "html" in fmt:
        from deskresearch.html_report import render_html  # only when asked: keeps start-up light

        written.append(out_dir / f"{slug}.html")
        page = render_html(result, topic=topic, language=ctx.language)
        written[-1].write_text(page, encoding="utf-8")
    keys = ("status", "report", "sources", "queries", "citations", "usage", "provenance")
    payload = {
        "topic": topic,
        "settings": dataclasses.asdict(ctx),
        **{k: result.get(k) for k in keys},
    }
    written.append(out_dir / f"{slug}.json")
    written[-1].write_text(json.dumps(payload, ensure_ascii=False, indent=2), encoding="utf-8")
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if bool(args.topic) == bool(args.resume):
        parser.error("give a topic to start a run, or --resume THREAD_ID to continue one")
    try:
        overrides = {name: getattr(args, name) for name in field_names()}
        if args.review:
            overrides["review_plan"] = True
        if args.no_cache:
            overrides["cache"] = False
        result, ctx = asyncio.run(_session(args, overrides))
        if not result.get("status"):
            raise RuntimeError("the run ended without a result")
        files = write_outputs(
            result, ctx, result.get("topic", args.topic), Path(args.output_dir), args.format
        )
    except KeyboardInterrupt:
        print("deskresearch: interrupted", file=sys.stderr)
        return 130
    except ConfigError as exc:
        print(f"deskresearch: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # noqa: BLE001 - the one place every failure becomes one line
        print(f"deskresearch: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    print(f"{result['status']}: {' '.join(map(str, files))}", file=sys.stderr)
    usage = result.get("usage") or []
    tokens_in = sum(u["input_tokens"] for u in usage)
    tokens_out = sum(u["output_tokens"] for u in usage)
    cached = sum(u.get("cached_calls", 0) for u in usage)
    calls = f"model calls: {sum(u['calls'] for u in usage) + cached} ({cached} from the cache)"
    print(
        f"sources: {len(result.get('sources') or [])}, tokens: {tokens_in} in / {tokens_out} out, "
        + calls,
        file=sys.stderr,
    )
    if result.get("citations"):
        print(f"citations: {summary_line(result['citations'])}", file=sys.stderr)
    print(files[0])
    return EXIT_OK if result["status"] == "ok" else EXIT_INSUFFICIENT


if __name__ == "__main__":
    sys.exit(main())
