"""``deskresearch mcp``: the research tool as an MCP server on stdio, for desktop clients.

A client (Claude Desktop, Cursor, VS Code, your own agent) starts this command and talks MCP
over its stdin and stdout; nothing else may write to stdout, so messages for people (a setting
that will not work, a cancelled run and how to resume it) go to stderr, the client's log.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from platformdirs import user_data_dir

from deskresearch.cli.command import FORMATS, add_setting_options
from deskresearch.cli.settings import context_from, gather
from deskresearch.cli.style import EXIT_CONFIG, EXIT_OK, CommandParser
from deskresearch.errors import ConfigError
from deskresearch.services.storage.checkpoints import CHECKPOINTS_ENV, default_location

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
        default=DEFAULT_OUTPUT,
        metavar="DIR",
        help=f"where each report's <slug>.md and <slug>.json go (default: {DEFAULT_OUTPUT})",
    )
    p.add_argument("--format", choices=FORMATS, default="md", help="the report's formats")
    add_setting_options(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until the client closes stdin; return the exit code."""
    ns = build_parser().parse_args(argv)
    ns.review = None  # settings are gathered as for a research, which has --review
    ns.checkpoints = ns.checkpoints or default_location()
    try:  # said once at start-up, in the client's log; every call says it again
        context_from(gather(ns, os.environ))
    except ConfigError as exc:
        print(f"deskresearch mcp: warning: {exc}", file=sys.stderr, flush=True)
    try:
        import anyio

        from deskresearch.mcp.local import LocalRunner
        from deskresearch.mcp.tool import build_server
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("mcp", "mcp_types"):
            raise
        print(
            "deskresearch mcp: error: the MCP SDK is not installed: pip install '.[mcp]' in deskresearch's folder",
            file=sys.stderr,
        )
        return EXIT_CONFIG

    async def serve() -> None:
        async with LocalRunner(ns) as runner:
            await build_server(runner).run_stdio_async()

    anyio.run(serve)
    return EXIT_OK
