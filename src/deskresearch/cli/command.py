"""The ``deskresearch`` command: parse, dispatch, and leave at once when done.

``deskresearch TOPIC`` researches (deskresearch.cli.research); the other commands (``runs``,
``batch``, ``mcp``, ``ui``) are dispatched by ``deskresearch.__main__``. This module imports nothing heavy, so
``--help`` and ``--version`` answer in a few hundredths of a second: the research path imports
LangGraph and the model client only once the arguments are known.
Exit codes by kind (session.style): 0 report written, 2 usage, 3 a setting or path, 4 a server
does not answer, 5 insufficient evidence, 1 a bug, 130 interrupted; every error is one line.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext

from deskresearch._version import __version__
from deskresearch.session.options import (
    DEFAULT_OUTPUT,
    FORMATS,
    MAX_CONCURRENCY,
    PROGRESS,
    add_setting_options,
    bounded,
)
from deskresearch.session.style import (
    EXIT_CODES,
    CommandParser,
    report,
)

# The other commands (deskresearch.__main__ dispatches to them) and their summaries for --help.
COMMANDS = {
    "runs": "list earlier runs: topic, date, status, thread id, files",
    "batch": "research many topics from a file: here, on Ray, on a server",
    "mcp": "serve the research tool to MCP clients (stdio)",
    "ui": "a research desk in your browser: ask, watch, read, come back",
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
  deskresearch ui                          the same in your browser (127.0.0.1 only)
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
        type=bounded(int, 1, 1024),
        default=MAX_CONCURRENCY,
        metavar="N",
        help=f"parallel graph tasks per step, 1 to 1024 (default {MAX_CONCURRENCY}); calls to "
        "providers are bounded by --max-model-calls, --max-fetches, --max-fetches-per-host",
    )
    out = parser.add_argument_group("output")
    out.add_argument(
        "-o",
        "--output-dir",
        metavar="DIR",
        help=f"where <slug>.md / .html and <slug>.json go (default: {DEFAULT_OUTPUT}); an existing "
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
    commands = "\n".join(f"  {name:<10} {summary}" for name, summary in COMMANDS.items())
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


def main(argv: Sequence[str] | None = None, *, short_lived: bool = False) -> int:
    """Research a topic or resume a run; return the exit code.

    ``short_lived``: the process ends with the command (``deskresearch.__main__.run``), so the
    research path may be imported without garbage collection and what it built frozen
    (``_imports_uncollected``).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    ns, extra = parser.parse_known_args(args)
    words = [w for w in extra if not w.startswith("-")]
    if ns.topic and words and len(words) == len(extra):  # deskresearch How are ... recycled
        shown = " ".join([ns.topic, *words]).replace('"', "'")
        parser.error(f'the topic is one argument: put it in quotes, e.g. deskresearch "{shown}"')
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
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
            from deskresearch.cli.research import research
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
