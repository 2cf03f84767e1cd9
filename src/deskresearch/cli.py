"""The ``deskresearch`` command: flags → Context, progress on stderr, report files, exit codes.

Exit codes: 0 report written, 2 insufficient evidence, 1 error (one line: cause and fix).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from slugify import slugify

from deskresearch.context import ENV_PREFIX, Context, field_description, field_names
from deskresearch.errors import ConfigError
from deskresearch.graph import MAX_CONCURRENCY, build_graph

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
    parser.add_argument("topic", help="the research question")
    parser.add_argument(
        "-o",
        "--output-dir",
        default="reports",
        help="where <slug>.md and <slug>.json go (default: reports)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
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


async def _run(topic: str, ctx: Context, *, quiet: bool, max_concurrency: int) -> dict[str, Any]:
    graph = build_graph(max_concurrency=max_concurrency)
    final: dict[str, Any] = {}
    async for namespace, mode, chunk in graph.astream(
        {"topic": topic}, context=ctx, stream_mode=["custom", "values"], subgraphs=True
    ):
        if mode == "custom" and not quiet and isinstance(chunk, dict):
            _progress(chunk)
        elif mode == "values" and not namespace and isinstance(chunk, dict):
            final = chunk
    return final


def write_outputs(
    result: dict[str, Any], ctx: Context, topic: str, out_dir: Path
) -> tuple[Path, Path]:
    """Write <slug>.md and <slug>.json; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    slug = slug_for(topic)
    md, js = out_dir / f"{slug}.md", out_dir / f"{slug}.json"
    md.write_text(result.get("report", ""), encoding="utf-8")
    keys = ("status", "report", "sources", "queries", "usage", "provenance")
    payload = {
        "topic": topic,
        "settings": dataclasses.asdict(ctx),
        **{k: result.get(k) for k in keys},
    }
    js.write_text(json.dumps(payload, ensure_ascii=False, indent=2), encoding="utf-8")
    return md, js


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code."""
    args = build_parser().parse_args(argv)
    try:
        overrides = {name: getattr(args, name) for name in field_names()}
        ctx = Context.from_env(**overrides)
        result = asyncio.run(
            _run(args.topic, ctx, quiet=args.quiet, max_concurrency=args.max_concurrency)
        )
        if not result.get("status"):
            raise RuntimeError("the run ended without a result")
        md, js = write_outputs(result, ctx, result.get("topic", args.topic), Path(args.output_dir))
    except KeyboardInterrupt:
        print("deskresearch: interrupted", file=sys.stderr)
        return 130
    except ConfigError as exc:
        print(f"deskresearch: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # noqa: BLE001 - the one place every failure becomes one line
        print(f"deskresearch: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    print(f"{result['status']}: {md} {js}", file=sys.stderr)
    usage = result.get("usage") or []
    tokens_in = sum(u["input_tokens"] for u in usage)
    tokens_out = sum(u["output_tokens"] for u in usage)
    print(
        f"sources: {len(result.get('sources') or [])}, tokens: {tokens_in} in / {tokens_out} out",
        file=sys.stderr,
    )
    print(md)
    return EXIT_OK if result["status"] == "ok" else EXIT_INSUFFICIENT


if __name__ == "__main__":
    sys.exit(main())
