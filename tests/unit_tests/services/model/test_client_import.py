"""The import thread also does the first call's one-time work, and sends nothing."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[4]

SCRIPT = """
import socket, sys
def refuse(*args, **kwargs):
    raise AssertionError("the warm-up opened a connection")
socket.socket.connect = refuse
socket.create_connection = refuse
from deskresearch.services.model.client_import import FIRST_CALL_MODULES, import_client_soon
missing = [m for m in FIRST_CALL_MODULES if m in sys.modules]
assert not missing, missing  # not imported before: the test would prove nothing
import_client_soon().join()
print(sorted(m for m in FIRST_CALL_MODULES if m not in sys.modules))
print("ChatOpenAI" in dir(sys.modules["langchain_openai"]))
"""


def test_the_import_thread_warms_the_first_call_without_a_connection() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, cwd=ROOT, timeout=120,
        check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["[]", "True"], proc.stdout + proc.stderr
