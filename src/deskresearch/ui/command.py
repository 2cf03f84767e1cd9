"""``deskresearch ui``: the research desk in the browser, served from this machine.

Prints the page's link (with its key) and, where there is a desktop, opens it. Runs are the
command line's: the same checkpoint store (``--checkpoints``) and report folder (``-o``), so
``deskresearch runs`` lists them and ``deskresearch --resume`` continues one the page started,
and the other way round. This command's flags, ``--config`` file and environment are the
deployment: the page may change the research settings of a run, never a locked one (endpoints,
files, network policy). Ctrl-C stops the server; a research still running stays resumable.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import os
import secrets
import socket
import sys
import threading
import webbrowser
from collections.abc import Sequence
from types import FrameType

import uvicorn

from deskresearch.errors import ConfigError
from deskresearch.services.storage.checkpoints import CHECKPOINTS_ENV, default_location
from deskresearch.session.options import (
    DEFAULT_OUTPUT,
    add_setting_options,
    bounded,
)
from deskresearch.session.settings import per_caller
from deskresearch.session.style import EXIT_OK, CommandParser
from deskresearch.ui.app import build_app
from deskresearch.ui.desk import Desk
from deskresearch.ui.guard import WILDCARDS, Policy, bracketed, hosts_for

DEFAULT_PORT = 8765
EXAMPLES = """\
examples:
  deskresearch ui                        open the desk (http://127.0.0.1:8765/?token=...)
  deskresearch ui --port 9000 --no-browser
  deskresearch ui --search corpus --corpus-dir ~/papers -o ~/reports

The page may change a run's language, rounds, dates, domains, length and models; endpoints,
files and the network policy are this command's (flags > --config file > environment).
Listening on anything but 127.0.0.1 lets whoever reaches it, with the link, spend your keys."""


def build_parser() -> argparse.ArgumentParser:
    """The ui command's parser (every research setting too, as the page's deployment)."""
    p = CommandParser(
        prog="deskresearch ui",
        description="A research desk in your browser: ask, watch, read, and come back to runs.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--port", type=bounded(int, 0, 65535), default=None,
                   help=f"the port (default {DEFAULT_PORT}, or a free one when it is taken; "
                   "0: any free port)")  # fmt: skip
    p.add_argument("--host", default="127.0.0.1",
                   help="the address to listen on (default 127.0.0.1: this machine only)")  # fmt: skip
    p.add_argument("--no-browser", action="store_true", help="print the link, open no browser")
    p.add_argument("--config", metavar="FILE", help="a TOML file of settings, as for a research")
    p.add_argument("--checkpoints", metavar="PATH_OR_URL",
                   help=f"where runs are saved [env {CHECKPOINTS_ENV}; default: the CLI's store]")  # fmt: skip
    p.add_argument("-o", "--output-dir", metavar="DIR",
                   help=f"where each report's .md, .html and .json go (default: {DEFAULT_OUTPUT})")  # fmt: skip
    add_setting_options(p)
    return p


def listen(host: str, port: int | None) -> socket.socket:
    """A listening socket on ``host``: ``port``, or the default port, or else any free one.

    Raises:
        ConfigError: the address cannot be used (a port given and taken, a host not here).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    for attempt in [port] if port is not None else [DEFAULT_PORT, 0]:
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, attempt))
        except OSError as exc:
            sock.close()
            if port is None and attempt == DEFAULT_PORT:
                continue
            raise ConfigError(f"cannot listen on {host}:{attempt} ({exc.strerror or exc}): give "
                              "another --port, or a --host of this machine") from None  # fmt: skip
        sock.listen(128)
        sock.setblocking(False)
        return sock
    raise AssertionError("unreachable")  # the last attempt returns or raises


def exposed(host: str) -> bool:
    """Whether listening on ``host`` reaches beyond this machine (a name: whatever it means)."""
    if host.lower() == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return True


def _desktop() -> bool:
    """Whether a browser can open here (a console browser would take the terminal)."""
    return sys.platform in ("darwin", "win32") or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )


def _open(link: str, policy: Policy, key: str) -> None:
    """Open the page in the desktop's browser; a key no browser took opens nothing."""
    if not webbrowser.open(link):
        policy.once.discard(key)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve the page until Ctrl-C; return the exit code."""
    ns = build_parser().parse_args(argv)
    defaults = {"output_dir": DEFAULT_OUTPUT, "checkpoints": default_location()}
    sources = per_caller(vars(ns), "the page", defaults=defaults)
    sock = listen(ns.host, ns.port)
    port = int(sock.getsockname()[1])
    desk = Desk(sources)
    policy = Policy(hosts_for(ns.host, port), secrets.token_urlsafe(24), port)
    shown = "127.0.0.1" if ns.host in WILDCARDS else bracketed(ns.host)
    url = f"http://{shown}:{port}/?token={policy.token}"
    if ns.port is None and port != DEFAULT_PORT:
        print(
            f"deskresearch ui: port {DEFAULT_PORT} is taken; listening on {port}", file=sys.stderr
        )
    if exposed(ns.host):
        print(f"deskresearch ui: warning: listening on {ns.host}: anyone who can reach this "
              "machine and has the link can start research on your API keys and read your "
              "reports (leave out --host to keep it to this machine)", file=sys.stderr)  # fmt: skip
    print(f"deskresearch ui: runs are saved in {desk.engine.where}, reports in "
          f"{desk.files.path.resolve()}; Ctrl-C stops (a running research stays resumable)",
          file=sys.stderr)  # fmt: skip
    print(url, flush=True)
    if not ns.no_browser and _desktop():
        # A browser's command line shows in `ps` while it runs: its link opens the page once.
        opening = secrets.token_urlsafe(24)
        policy.once.add(opening)
        link = f"http://{shown}:{port}/?token={opening}"
        threading.Thread(target=_open, args=(link, policy, opening), daemon=True).start()
    server = _Server(uvicorn.Config(build_app(desk, policy), log_level="warning",
                                    access_log=False, http="h11", ws="none", lifespan="on",
                                    timeout_graceful_shutdown=3), desk)  # fmt: skip
    try:
        asyncio.run(server.serve(sockets=[sock]))
    except KeyboardInterrupt:  # uvicorn raises the Ctrl-C it caught again once it has stopped
        pass
    return EXIT_OK


class _Server(uvicorn.Server):
    """uvicorn's server, ending the page's event streams when told to stop.

    uvicorn waits for open responses before it shuts the app down; an event stream is open
    until the page goes, so the desk ends them first.
    """

    def __init__(self, config: uvicorn.Config, desk: Desk) -> None:
        super().__init__(config)
        self.desk = desk

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """Stop: end the streams (from the signal handler, safely), then as uvicorn does."""
        try:
            asyncio.get_running_loop().call_soon_threadsafe(self.desk.stop_streams)
        except RuntimeError:  # no loop running yet
            pass
        super().handle_exit(sig, frame)
