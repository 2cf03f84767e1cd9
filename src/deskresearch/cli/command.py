"""The ``deskresearch`` command: parse, dispatch, and leave at once when done.

``deskresearch TOPIC`` researches (deskresearch.cli.session), ``deskresearch runs`` lists earlier
runs; further subcommands are one line in SUBCOMMANDS. This module imports nothing heavy, so
``--help`` and ``--version`` answer in a few hundredths of a second: the research path imports
LangGraph and the model client only once the arguments are known.
Exit codes by kind (cli.style): 0 report written, 2 usage, 3 a setting or path, 4 a server does
not answer, 5 insufficient evidence, 1 a bug, 130 interrupted; every error is one line.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from importlib import import_module
from typing import NoReturn

from deskresearch._version import __version__
from deskresearch.cli.options import OPTIONS
from deskresearch.cli.style import (
    EXIT_BROKEN_PIPE,
    EXIT_CODES,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    CommandParser,
    report,
)

FORMATS = ("md", "html", "md+html")  # the report's formats (the JSON is always written)
PROGRESS = ("auto", "live", "plain")

# name → (module with ``main(argv) -> int``, summary for --help). Imported only when used.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "runs": ("deskresearch.cli.runs", "list earlier runs: topic, date, status, thread id, files"),
    "batch": (
        "deskresearch.batch.cli",
        "research many topics from a file: here, on Ray, on a server",
    ),
    "mcp": ("deskresearch.mcp.stdio", "serve the research tool to MCP clients (stdio)"),
}

EXAMPLES = (
    """\
examples:
  deskresearch "How are lithium-ion batteries from electric cars recycled?"
  deskresearch "Wie entwickelt sich der Nachtzugverkehr?" --language German -o ~/reports
  deskresearch "topic" --summary-model ollama:llama3.1 --report-model ollama:llama3.1
  deskresearch "topic" --search corpus --corpus-dir ~/papers --no-cache
  deskresearch "topic" --review            pause after ranking to drop pages
  deskresearch runs                        earlier runs and their thread ids
  deskresearch mcp -o ~/reports            the research tool for Claude Desktop & co.
  deskresearch --resume 3f2c9a...          continue an interrupted run

commands:
{commands}
  (a topic that is also a command's name: deskresearch -- runs)

settings: flag > --config file > environment (DESKRESEARCH_<FIELD>) > default.
model endpoint: OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL / --base-url (Ollama, vLLM,
llama.cpp). search: TAVILY_API_KEY, else DuckDuckGo. progress is drawn live on a terminal
and printed line by line otherwise; NO_COLOR turns colour off.
"""
    + EXIT_CODES
)


def _run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topic", nargs="?", help="the research question (not with --resume)")
    run = parser.add_argument_group("run")
    run.add_argument(
        "--resume",
        metavar="THREAD_ID",
        help="continue an interrupted run (its thread id is printed when it starts; "
        "`deskresearch runs` lists them); finished steps are not redone, settings are the "
        "run's own unless flags override them",
    )
    run.add_argument(
        "--review",
        nargs="?",
        const="-",
        metavar="ANSWER_JSON",
        help="pause after ranking to review the planned pages: type numbers to drop, or give a "
        'JSON answer file (true, or {"drop_urls"|"keep_urls"|"drop_queries": [...]})',
    )
    run.add_argument(
        "--config",
        metavar="FILE",
        help="a TOML file of settings (field = value, as in the sections below)",
    )
    run.add_argument(
        "--checkpoints",
        metavar="PATH_OR_URL",
        help="where runs are saved: a SQLite file, a postgresql:// URL, or 'memory' (no "
        "resume) [env DESKRESEARCH_CHECKPOINTS; default: a file in your user data folder]",
    )
    run.add_argument(
        "--max-concurrency",
        type=int,
        default=32,  # graph.MAX_CONCURRENCY (not imported: graph.py is heavy)
        metavar="N",
        help="parallel graph tasks per step (default 32); calls to providers are bounded by "
        "--max-model-calls, --max-fetches, --max-fetches-per-host",
    )
    out = parser.add_argument_group("output")
    out.add_argument(
        "-o",
        "--output-dir",
        default="reports",
        metavar="DIR",
        help="where <slug>.md / .html and <slug>.json go (default: reports); an existing "
        "report is kept and the new one named <slug>-2.md, ...",
    )
    out.add_argument(
        "--format",
        choices=FORMATS,
        default="md",
        help="the report as markdown, as one self-contained HTML page with its evidence, "
        "or both (default: md; the JSON is always written)",
    )
    out.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the report files of the same name if they exist (a symlink there is "
        "replaced, never followed)",
    )
    out.add_argument(
        "--progress",
        choices=PROGRESS,
        default="auto",
        help="live: a panel redrawn in place; plain: one line per event; auto (default): "
        "live on a terminal, plain otherwise",
    )
    out.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print only the outcome (one line on stderr, the report's path on stdout)",
    )
    out.add_argument(
        "--debug", action="store_true", help="on an error, print its traceback before the line"
    )
    out.add_argument("--version", action="version", version=f"deskresearch {__version__}")


def build_parser() -> argparse.ArgumentParser:
    """Return the parser: run and output options, then one group per group of settings."""
    commands = "\n".join(f"  {name:<10} {summary}" for name, (_, summary) in SUBCOMMANDS.items())
    parser = CommandParser(
        prog="deskresearch",
        usage="deskresearch [options] TOPIC | --resume THREAD_ID | COMMAND [options]",
        description="Research a topic on the web (or in your files) and write a cited markdown\n"
        "report, with the sources it read and how it got there.",
        epilog=EXAMPLES.format(commands=commands),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _run_options(parser)
    add_setting_options(parser)
    return parser


def add_setting_options(parser: argparse.ArgumentParser) -> None:
    """Add one group per group of settings, one option each (``deskresearch batch`` too)."""
    groups: dict[str, argparse._ArgumentGroup] = {}
    for opt in OPTIONS:
        if opt.group not in groups:
            groups[opt.group] = parser.add_argument_group(f"{opt.group} settings")
        where = f"[env {opt.env}; default {opt.default}]"
        if opt.kind == "bool":
            groups[opt.group].add_argument(
                opt.flag,
                dest=opt.name,
                action=argparse.BooleanOptionalAction,
                default=None,
                help=f"{opt.help} {where}",
            )
            continue
        # Values stay text here: the settings check names the flag in its error, like a
        # variable's or a file's, with the allowed range.
        metavar = "{" + ",".join(opt.choices) + "}" if opt.choices else opt.kind.upper()
        groups[opt.group].add_argument(
            opt.flag, dest=opt.name, metavar=metavar, default=None, help=f"{opt.help} {where}"
        )


def main(argv: Sequence[str] | None = None, *, short_lived: bool = False) -> int:
    """Run the command; return the exit code.

    ``short_lived``: the process ends with the command (``run``), so the research path may be
    imported without garbage collection and what it built frozen (``_imports_uncollected``).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in SUBCOMMANDS:
        try:
            command: int = import_module(SUBCOMMANDS[args[0]][0]).main(args[1:])
        except (BrokenPipeError, KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # noqa: BLE001 - a subcommand's failure is one line too
            return report(exc, debug="--debug" in args, prog=f"deskresearch {args[0]}")
        return command
    parser = build_parser()
    ns = parser.parse_args(args)
    if ns.topic and ns.resume:
        parser.error(
            f"--resume {ns.resume} continues a run with its own topic: leave out the topic "
            f"{ns.topic!r} (or leave out --resume to start a new run)"
        )
    if not ns.topic and not ns.resume:
        parser.error("give a topic to start a run, or --resume THREAD_ID to continue one")
    try:
        prepared = None
        with _imports_uncollected() if short_lived else nullcontext():
            if ns.topic:  # a new run: its first model call goes out while the rest imports
                from deskresearch.cli.headstart import prepare

                prepared = prepare(ns)
            from deskresearch.cli.session import research
        return research(ns, prepared)
    except BrokenPipeError:
        raise
    except Exception as exc:  # noqa: BLE001 - the one place every failure becomes one line
        return report(exc, debug=ns.debug)


@contextmanager
def _imports_uncollected() -> Iterator[None]:
    """No garbage collection while the research path imports; what it built is frozen after.

    Importing it allocates millions of long-lived objects and almost no garbage, yet triggers
    hundreds of collections, three of them full ones that walk everything imported so far:
    about 0.2 s of CPU before the second model call can leave. Frozen, those objects are not
    walked again by the run's own collections. Only for a process that ends with the command:
    in a longer-lived one, garbage among the frozen objects would never be collected.
    """
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def leave(code: int) -> NoReturn:
    """Exit now: streams flushed, workers stopped, no wait for idle threads.

    Everything that matters is on disk by now (reports written and closed, checkpoints
    committed when the checkpointer closed, cache writes committed one by one). What the
    interpreter would still do is join idle pool threads and worker processes: over a second.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # `deskresearch --help | head -1`: the reader has left
            code = code or EXIT_BROKEN_PIPE
        except (OSError, ValueError):
            pass
    if "langchain_core.tracers.langchain" in sys.modules:  # traces queued for LangSmith
        from langchain_core.tracers.langchain import wait_for_all_tracers

        wait_for_all_tracers()
    if "deskresearch.services.workers" in sys.modules:
        from deskresearch.services.workers import terminate_shared_pool

        terminate_shared_pool()
    if "multiprocessing.util" in sys.modules:
        # multiprocessing's exit-time finalizers unlink the pool's named semaphores; skipped,
        # its resource tracker would warn about "leaked semaphore objects" after we are gone.
        import multiprocessing.util

        getattr(multiprocessing.util, "_run_finalizers", lambda minpriority: None)(0)
    os._exit(code)


def run() -> NoReturn:
    """The console entry point: ``main()``, then ``leave()``."""
    try:
        code = main(short_lived=True)
    except SystemExit as exc:  # --help, --version, usage errors
        code = exc.code if isinstance(exc.code, int) else EXIT_USAGE
    except BrokenPipeError:  # `deskresearch runs | head -1`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = EXIT_BROKEN_PIPE
    except KeyboardInterrupt:  # before a run started (cli_session reports its own)
        print(
            "deskresearch: interrupted before the run started; nothing was saved", file=sys.stderr
        )
        code = EXIT_INTERRUPTED
    leave(code)


if __name__ == "__main__":
    run()
