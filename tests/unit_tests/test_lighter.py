"""lighter: the command's own processes put off langsmith.types' package init, names intact."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
SCRIPT = """
import sys, threading
from deskresearch.lighter import lighten

lighten()
import langchain_core.tracers.schemas  # imports langsmith.types.run_select_field
import langsmith

def types_loaded():
    return sorted(m for m in sys.modules if m.startswith("langsmith.types."))

print("before", types_loaded())
found = []
threads = [threading.Thread(target=lambda: found.append(langsmith.types.Agent.__name__))
           for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
from langsmith.types import Run
print("after", found, Run.__module__, len(types_loaded()) > 100)
try:
    langsmith.types.NoSuchName
except AttributeError as exc:
    print("missing", exc)
"""


def test_names_of_the_put_off_package_resolve_in_every_thread(tmp_path: Path) -> None:
    script = tmp_path / "lighter_check.py"
    script.write_text(SCRIPT)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    before, after, missing = proc.stdout.splitlines()
    assert before == "before ['langsmith.types.run_select_field']"
    assert after == f"after {['Agent'] * 8} langsmith.types.run True"
    assert missing == "missing module 'langsmith.types' has no attribute 'NoSuchName'"
