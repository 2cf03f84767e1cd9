"""The README's code examples run as written, against the loopback fakes."""

import re
import subprocess
import sys
from pathlib import Path

from tests.support.loopback import FakeWeb
from tests.support.runs import loopback_env

ROOT = Path(__file__).parents[2]
EXAMPLES = dict(
    re.findall(
        r"```python\n# example: (\w+)\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL
    )
)


def run_example(name: str, web: FakeWeb, **extra: str) -> str:
    env = loopback_env(web, **extra)
    proc = subprocess.run(
        [sys.executable, "-c", EXAMPLES[name]],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_the_readme_has_the_examples() -> None:
    assert {"sdk", "embed", "parent", "tool"} <= set(EXAMPLES)


def test_embed_example(web: FakeWeb) -> None:
    out = run_example("embed", web).splitlines()
    assert out[0].startswith("ok ") and "sources" in out[0]
    assert "[1]" in "\n".join(out[1:-1])
    assert out[-1] == "['ok', 'ok']"


def test_parent_graph_and_lcel_example(web: FakeWeb) -> None:
    out = run_example("parent", web).splitlines()
    assert out[:2] == ["ok", "ok"]  # without and with a context from the parent
    assert "[1]" in "\n".join(out[2:])
    # The parent's Context(url_per_query=1) reached the subgraph: one ranked page per query.
    assert web.model.calls("Ranking")


def test_tool_example(web: FakeWeb) -> None:
    out = run_example("tool", web)
    assert out.startswith("From the research:") and "report" in out
    assert len(web.model.calls("research")) == 2  # the tool call, then the answer


# The "sdk" example needs the dev server: test_server.py runs it.
