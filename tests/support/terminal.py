"""Run the CLI with stderr on a pseudo-terminal, as in a user's shell (the live panel's path)."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

ROOT = Path(__file__).parents[2]


def in_terminal(args: list[str], env: dict[str, str], *, columns: int = 120) -> tuple[int, str]:
    """Run ``python -m deskresearch *args`` on a 40-line terminal; return its exit code and screen."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "deskresearch", *args], env={**env, "TERM": "xterm-256color"},
        cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave,
    )  # fmt: skip
    os.close(slave)
    screen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        screen += chunk
    os.close(master)
    return proc.wait(timeout=120), screen.decode("utf-8", errors="replace")
