"""``deskresearch ui`` as a command: where it listens, and what it says when it cannot."""

import socket
import subprocess
import sys

import pytest

from deskresearch.ui.command import exposed


@pytest.mark.parametrize(("host", "beyond"), [
    ("127.0.0.1", False), ("127.0.0.2", False), ("::1", False), ("[::1]", False),
    ("localhost", False), ("0.0.0.0", True), ("::", True), ("192.168.1.20", True),
    ("desk.example", True),
])  # fmt: skip
def test_only_a_loopback_address_keeps_the_desk_to_this_machine(host: str, beyond: bool) -> None:
    assert exposed(host) is beyond


def test_a_port_in_use_is_one_line_naming_the_fix() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "deskresearch", "ui", "--port", str(port), "--no-browser"],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    assert proc.returncode == 3 and proc.stdout == ""
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"deskresearch ui: error: cannot listen on 127.0.0.1:{port}")
    assert "--port" in line
