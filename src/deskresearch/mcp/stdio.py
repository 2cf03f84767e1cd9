"""``deskresearch mcp``: the research tool as an MCP server on stdio, for desktop clients.

A client (Claude Desktop, Cursor, VS Code, your own agent) starts this command and talks MCP
over its stdin and stdout; nothing else may write to stdout, so messages for people (a setting
that will not work, a cancelled run and how to resume it) go to stderr, the client's log.

Each call is a run of one session in this process (deskresearch.session): one graph and one
checkpoint store for every call (``--checkpoints``, where the CLI's runs are), so calls run
side by side and a cancelled one stays resumable (``deskresearch --resume THREAD_ID``). Settings
are read again at every call (a fixed config file or variable takes effect without a restart,
and a bad one is a tool error, not a server that will not start): the call's own values, this
command's setting flags, its ``--config`` file, the environment, the defaults. The report files
are written like the CLI's: ``<slug>.md`` and ``<slug>.json`` in ``--output-dir``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from platformdirs import user_data_dir

from deskresearch.errors import ConfigError
from deskresearch.services.storage.checkpoints import CHECKPOINTS_ENV, default_location
from deskresearch.session.options import FORMATS, add_setting_options
from deskresearch.session.settings import (
    Sources,
    check_rules,
    context_from,
    gather,
    per_caller,
)
from deskresearch.session.style import EXIT_CONFIG, EXIT_OK, CommandParser

# A client starts the server in a folder of its choosing (often / or $HOME): not "reports".
DEFAULT_OUTPUT = str(Path(user_data_dir("deskresearch")) / "reports")

EXAMPLES = """\
A client configuration (Claude Desktop: claude_desktop_config.json):
  {"mcpServers": {"deskresearch": {
      "command": "deskresearch", "args": ["mcp", "-o", "/home/me/reports"],
      "env": {"OPENAI_API_KEY": "sk-...", "TAVILY_API_KEY": "tvly-..."}}}}

Settings are read at every call: flags given here > --config file > environment
(DESKRESEARCH_<FIELD>) > default; a call may choose language and max_rounds. A bad
setting makes each call return a tool error naming it and the fix."""


def build_parser() -> argparse.ArgumentParser:
    """The mcp command's parser (every research setting too, as for a research)."""
    p = CommandParser(
        prog="deskresearch mcp",
        description="Serve the research tool over MCP on stdin/stdout (for MCP clients).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--config", metavar="FILE", help="a TOML file of settings, as for a research")
    p.add_argument(
        "--checkpoints",
        metavar="PATH_OR_URL",
        help=f"where runs are saved [env {CHECKPOINTS_ENV}; default: the CLI's store]",
    )
    p.add_argument(
        "-o",
        "--output-dir",
        metavar="DIR",
        help=f"where each report's <slug>.md and <slug>.json go (default: {DEFAULT_OUTPUT})",
    )
    p.add_argument("--format", choices=FORMATS, default="md", help="the report's formats")
    add_setting_options(p)
    return p


def sources_for(ns: argparse.Namespace) -> Callable[[dict[str, Any]], Sources]:
    """A call's settings (the tool's arguments) → where the run's settings come from."""
    defaults = {"output_dir": DEFAULT_OUTPUT, "checkpoints": default_location()}
    return per_caller(vars(ns), "the tool call", defaults=defaults)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until the client closes stdin; return the exit code."""
    ns = build_parser().parse_args(argv)
    sources = sources_for(ns)
    places = gather(Sources(flags={"output_dir": ns.output_dir, "checkpoints": ns.checkpoints},
                            defaults=sources({}).defaults))  # fmt: skip
    try:  # said once at start-up, in the client's log; every call says it again
        settings = gather(sources({}))
        check_rules(settings, context_from(settings), reviewer=False)
    except ConfigError as exc:
        print(f"deskresearch mcp: warning: {exc}", file=sys.stderr, flush=True)
    try:
        import anyio

        from deskresearch.mcp.tool import ENTRY, Runner, build_server
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("mcp", "mcp_types"):
            raise
        print(
            "deskresearch mcp: error: the MCP SDK is not installed: pip install '.[mcp]' in deskresearch's folder",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    from deskresearch.session.reports import ReportFiles
    from deskresearch.session.run import Session

    session = Session(entry=ENTRY, store=places["checkpoints"],
                      files=ReportFiles(places["output_dir"], ns.format))  # fmt: skip

    def cancelled(thread: str) -> None:
        print(f"deskresearch mcp: research {thread} cancelled; its finished steps are saved in "
              f"{session.engine.where}: {session.resume_command(thread)}",
              file=sys.stderr, flush=True)  # fmt: skip

    runner = Runner(session, sources, cancelled=cancelled, full_result=lambda outcome: (
        f"{outcome.files[-1].resolve()} (and thread {outcome.thread} in {session.engine.where})"))  # fmt: skip

    async def serve() -> None:
        async with session:
            await build_server(runner).run_stdio_async()

    anyio.run(serve)
    return EXIT_OK
