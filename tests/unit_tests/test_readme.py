"""The README and docs stay true: the diagram, the configuration page, the test command, links."""

import re
from pathlib import Path

from deskresearch.config.context import field_names
from deskresearch.served import graph

ROOT = Path(__file__).parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (Path(__file__).parents[2] / ".ci" / "run").read_text(encoding="utf-8")


def test_readme_mermaid_diagram_matches_the_graph() -> None:
    block = re.search(r"```mermaid\n(.*?)\n```", README, re.DOTALL)
    assert block is not None
    assert block.group(1).strip() == graph.get_graph().draw_mermaid().strip()


def test_the_configuration_page_is_current_and_has_every_setting() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "make_configuration", ROOT / "docs" / "make_configuration.py"
    )
    assert spec is not None and spec.loader is not None
    make_configuration = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_configuration)
    PAGE, render = make_configuration.PAGE, make_configuration.render

    from deskresearch.session.options import from_context

    text = PAGE.read_text(encoding="utf-8")
    assert text == render(from_context()), "run python docs/make_configuration.py"
    for name in field_names():
        assert f"| `{name}` |" in text, name


def test_every_local_link_of_the_readme_and_docs_resolves() -> None:
    for page in [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+\.(?:md|png))(?:#[^)]*)?\)", text):
            assert (page.parent / target).exists(), (page.name, target)


def test_the_readme_is_a_guide_that_fits_in_ten_minutes() -> None:
    assert len(README.splitlines()) <= 450


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    commands = re.findall(r"```bash\n(.*?)\n```", README, re.DOTALL)
    test_command = next(c for c in commands if "pytest" in c)
    assert test_command in CI
