"""The README stays true: its diagram, its configuration table, its test command."""

import re
from pathlib import Path

from deskresearch.config.context import field_names
from deskresearch.graph import graph

README = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
CI = (Path(__file__).parents[2] / ".ci" / "run").read_text(encoding="utf-8")


def test_readme_mermaid_diagram_matches_the_graph() -> None:
    block = re.search(r"```mermaid\n(.*?)\n```", README, re.DOTALL)
    assert block is not None
    assert block.group(1).strip() == graph.get_graph().draw_mermaid().strip()


def test_readme_configuration_table_has_every_context_field() -> None:
    for name in field_names():
        assert f"| `{name}` |" in README, name


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    commands = re.findall(r"```bash\n(.*?)\n```", README, re.DOTALL)
    test_command = next(c for c in commands if "pytest" in c)
    assert test_command in CI
