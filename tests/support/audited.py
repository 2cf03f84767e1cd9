"""``python -m tests.support.audited OUT.json ARGS...``: the ``deskresearch ARGS`` command, watched.

An audit hook (``sys.addaudithook``) records every connection this process's Python code tries
(``socket.connect``) and every name it looks up (``socket.getaddrinfo``); at exit they are written
to OUT.json with Ray's usage-statistics setting as Ray itself reports it (None if Ray was never
imported). The hook sees Python's socket module only: Ray's core and libpq are C++/C, and the Ray
tests run in a network namespace with nothing but loopback for what it cannot see.
"""

from __future__ import annotations

import atexit
import json
import os
import runpy
import sys
from pathlib import Path
from typing import Any, NoReturn


def main() -> None:
    """Run the command with the hook; write what it saw at exit."""
    out, args = Path(sys.argv[1]), sys.argv[2:]
    seen: dict[str, list[Any]] = {"connect": [], "getaddrinfo": [], "opened": []}

    def hook(event: str, details: tuple[Any, ...]) -> None:
        if event == "open" and not seen["opened"]:
            seen["opened"].append(str(details[0]))  # the hook works: it sees the first file
        elif event == "socket.connect":
            seen["connect"].append(details[1])
        elif event == "socket.getaddrinfo":
            seen["getaddrinfo"].append(details[0])

    def write() -> None:
        usage_stats = None
        if "ray" in sys.modules:
            from ray._common.usage import usage_lib

            usage_stats = usage_lib.usage_stats_enabled()
        report = {**seen, "ray_usage_stats": usage_stats}
        out.write_text(json.dumps(report, default=repr), encoding="utf-8")

    real_exit = os._exit

    def exiting(status: int) -> NoReturn:  # the command leaves by os._exit (cli.command.leave)
        write()
        real_exit(status)

    sys.addaudithook(hook)
    atexit.register(write)  # an exit that is not os._exit
    os._exit = exiting
    sys.argv = ["deskresearch", *args]
    runpy.run_module("deskresearch", run_name="__main__")


if __name__ == "__main__":
    main()
