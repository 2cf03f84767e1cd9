"""How the commands speak: exit codes by kind, one error line, "did you mean".

Every command (``deskresearch``, ``runs``, ``batch``, ``mcp``) ends an error the same way:
``deskresearch: error: <cause>. <fix>`` on stderr, one line, the exit code saying which kind of
problem it was, and no Python class name or traceback unless ``--debug`` asks for them.
Light on purpose: ``deskresearch --help`` imports it.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
import traceback
from typing import NoReturn

__all__ = ["CommandParser", "error_line", "report"]

EXIT_OK = 0  # a report was written
EXIT_ERROR = 1  # a bug: the line says so, --debug shows the traceback
EXIT_USAGE = 2  # the command line itself: an unknown flag, a missing topic, a bad value
EXIT_CONFIG = 3  # a setting, path, key or URL (the pre-flight's findings among them)
EXIT_PROVIDER = 4  # a server the run needs failed or does not answer (model, search, database)
EXIT_INSUFFICIENT = 5  # the run ended insufficient_evidence: no report, the reason says why
EXIT_INTERRUPTED = 130  # Ctrl-C: one line says what was saved and how to resume
EXIT_BROKEN_PIPE = 141  # the reader of the output went away (`deskresearch runs | head -1`)

EXIT_CODES = (
    "exit codes: 0 report written, 2 usage, 3 setting or path (checked before any call), "
    "4 a server does not answer, 5 insufficient evidence, 1 bug, 130 interrupted"
)
_UNKNOWN = re.compile(r"unrecognized arguments: (.+)")


class CommandParser(argparse.ArgumentParser):
    """argparse with one error line, the usage exit code, and "did you mean" for a typo."""

    def error(self, message: str) -> NoReturn:
        """Print the problem (with the closest known option for a mistyped one); exit 2."""
        unknown = _UNKNOWN.search(message)
        if unknown:
            known = [s for a in self._actions for s in a.option_strings]
            hints = []
            for word in unknown.group(1).split():
                flag = word.split("=", 1)[0]
                close = difflib.get_close_matches(flag, known, n=1, cutoff=0.6)
                if flag.startswith("-") and close:
                    hints.append(f"{flag}: did you mean {close[0]}?")
            if hints:
                message = f"{message} ({'; '.join(hints)})"
        self.exit(
            EXIT_USAGE, f"{self.prog}: error: {message}. {self.prog} --help lists the options\n"
        )


def error_line(
    exc: BaseException, bug: str = "run again with --debug and report the traceback"
) -> tuple[int, str]:
    """The exit code for ``exc`` and its one line: ours say the cause and the fix; a bug says so.

    ``bug``: what to do about an internal error (where its traceback is to be found).
    """
    from deskresearch.errors import ConfigError, ServiceError

    text = " ".join(str(exc).split())
    if isinstance(exc, ConfigError):
        return EXIT_CONFIG, text
    if isinstance(exc, ServiceError):
        return EXIT_PROVIDER, text
    name = type(exc).__name__
    return EXIT_ERROR, (f"{text or name} (an internal error: {bug})")


def report(exc: BaseException, *, debug: bool = False, prog: str = "deskresearch") -> int:
    """Print ``exc`` as the one error line (its traceback first with ``debug``); return the code."""
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    code, text = error_line(exc)
    print(f"{prog}: error: {text}", file=sys.stderr)
    return code
