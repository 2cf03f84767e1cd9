"""The code examples of the README and docs/, as a user runs them: saved, then ``python file.py``.

Each makes exactly the model calls its code makes when run inline (``python -c``): a worker
process that imported the user's script (multiprocessing does so with an unguarded
``__main__``) would run the whole research again and show up as extra calls.
"""

import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.loopback import FakeWeb
from tests.support.runs import loopback_env

ROOT = Path(__file__).parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXAMPLES = {
    name: code
    for page in PAGES
    for name, code in re.findall(
        r"```python\n# example: (\w+)\n(.*?)```", page.read_text(encoding="utf-8"), re.DOTALL
    )
}


def run_example(name: str, web: FakeWeb, *, as_file: bool = True, **extra: str) -> tuple[str, int]:
    """Run the example as ``python <name>.py`` (or ``python -c CODE``); (stdout, model calls).

    ``python -c`` is the baseline: its ``__main__`` has no file, so nothing can re-run it.
    """
    before = len(web.model.requests)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.py"
        path.write_text(EXAMPLES[name], encoding="utf-8")
        proc = subprocess.run(
            [sys.executable, *([str(path)] if as_file else ["-c", EXAMPLES[name]])],
            env=loopback_env(web, **extra), cwd=tmp, capture_output=True, text=True,
            timeout=180, check=False,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc.stdout, len(web.model.requests) - before


def test_the_readme_has_the_examples() -> None:
    assert {"sdk", "embed", "parent", "tool", "mcp_stdio", "mcp_http", "chat", "a2a"} <= set(
        EXAMPLES
    )


@pytest.mark.parametrize("name", ["embed", "parent", "tool"])
def test_a_saved_example_makes_the_calls_of_its_code_run_inline(name: str, web: FakeWeb) -> None:
    saved_out, saved_calls = run_example(name, web)
    inline_out, inline_calls = run_example(name, web, as_file=False)
    assert saved_calls == inline_calls > 0
    assert saved_out.splitlines()[0] == inline_out.splitlines()[0]
    print(f"example {name}: {saved_calls} model calls as a file, {inline_calls} inline")  # noqa: T201


def test_embed_example(web: FakeWeb) -> None:
    out = run_example("embed", web)[0].splitlines()
    assert out[0].startswith("ok ") and "sources" in out[0]
    assert "[1]" in "\n".join(out[1:-1])
    assert out[-1] == "['ok', 'ok']"


def test_parent_graph_and_lcel_example(web: FakeWeb) -> None:
    out = run_example("parent", web)[0].splitlines()
    assert out[:2] == ["ok", "ok"]  # without and with a context from the parent
    assert "[1]" in "\n".join(out[2:])
    # The parent's Context(url_per_query=1) reached the subgraph: one ranked page per query.
    assert web.model.calls("Ranking")


def test_tool_example(web: FakeWeb) -> None:
    out = run_example("tool", web)[0]
    assert out.startswith("From the research: ") and '"report": ' in out
    assert len(web.model.calls("research")) == 2  # the tool call, then the answer


# The "sdk" example needs the dev server: test_server.py runs it; "mcp_http", "chat" and "a2a"
# run in test_served_clients.py, "mcp_stdio" and the client configuration in test_mcp_stdio.py.
