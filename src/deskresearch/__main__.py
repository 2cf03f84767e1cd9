"""The ``deskresearch`` command (and ``python -m deskresearch``): dispatch, then leave at once.

``deskresearch TOPIC`` and ``--resume`` are the command line's (deskresearch.cli); ``runs``,
``batch``, ``mcp`` and ``ui`` are commands of their own, each imported only when used. This is the one
module above every entry point, so it may import each of them; they never import each other.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from deskresearch.lighter import lighten
from deskresearch.session.style import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, EXIT_USAGE, report


def _runs() -> Callable[[list[str]], int]:
    from deskresearch.cli.runs import main

    return main


def _batch() -> Callable[[list[str]], int]:
    from deskresearch.batch.cli import main

    return main


def _mcp() -> Callable[[list[str]], int]:
    from deskresearch.mcp.stdio import main

    return main


def _ui() -> Callable[[list[str]], int]:
    from deskresearch.ui.command import main

    return main


COMMANDS: dict[str, Callable[[], Callable[[list[str]], int]]] = {
    "runs": _runs,
    "batch": _batch,
    "mcp": _mcp,
    "ui": _ui,
}  # a topic that is also a command's name: deskresearch -- runs


def main(argv: Sequence[str] | None = None, *, short_lived: bool = False) -> int:
    """Run the command the arguments name (a research by default); return the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in COMMANDS:
        try:
            return COMMANDS[args[0]]()(args[1:])
        except (BrokenPipeError, KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # noqa: BLE001 - a command's failure is one line too
            return report(exc, debug="--debug" in args, prog=f"deskresearch {args[0]}")
    from deskresearch.cli.command import main as research

    return research(args, short_lived=short_lived)


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
    lighten()
    try:
        code = main(short_lived=True)
    except SystemExit as exc:  # --help, --version, usage errors
        code = exc.code if isinstance(exc.code, int) else EXIT_USAGE
    except BrokenPipeError:  # `deskresearch runs | head -1`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = EXIT_BROKEN_PIPE
    except KeyboardInterrupt:  # before a run started (cli.research reports its own)
        print(
            "deskresearch: interrupted before the run started; nothing was saved", file=sys.stderr
        )
        code = EXIT_INTERRUPTED
    leave(code)


if __name__ == "__main__":
    run()
