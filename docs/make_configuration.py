"""Write docs/configuration.md: every setting of ``Context``, generated (a test checks it is current).

Run ``python docs/make_configuration.py`` after changing a setting (and
``python -m deskresearch.session.options --write`` for the CLI's table, from the same source).
"""

from __future__ import annotations

import sys
from pathlib import Path

from deskresearch.session.options import Option, from_context

PAGE = Path(__file__).with_name("configuration.md")
HEAD = """# Configuration

Every setting of a run, generated from `deskresearch.config.context.Context` (the same
descriptions Studio shows in its form and `deskresearch --help` prints). Set one:

- on the command line: `--url-per-query 2` (booleans: `--cache` / `--no-cache`);
- in a TOML file given with `--config FILE`: `url_per_query = 2`;
- in the environment: `DESKRESEARCH_URL_PER_QUERY=2`;
- from code: `Context(url_per_query=2)`, passed as `context=` to `ainvoke`/`astream`;
- per run of a served graph (Studio, langgraph-sdk): the run's `context`, except the deployment
  settings (marked below), which only the server's environment sets ([security](security.md)).

Precedence on the command line: flag > `--config` file > environment > default. A bad value
stops the run before any call, naming where it came from and how to fix it.
"""


def render(options: tuple[Option, ...]) -> str:
    """The page's markdown for ``options``."""
    parts = [HEAD]
    groups: dict[str, list[Option]] = {}
    for o in options:
        groups.setdefault(o.group, []).append(o)
    for group, members in groups.items():
        title = group[:1].upper() + group[1:]
        parts.append(f"\n## {title}\n")
        parts.append("| setting | flag / environment | default | what it does |")
        parts.append("| --- | --- | --- | --- |")
        for o in members:
            flag = o.flag if o.kind != "bool" else f"{o.flag} / --no-{o.flag[2:]}"
            choices = f" One of: {', '.join(o.choices)}." if o.choices else ""
            text = (o.help + choices).replace("|", "\\|")
            parts.append(f"| `{o.name}` | `{flag}`<br>`{o.env}` | `{o.default}` | {text} |")
    return "\n".join(parts) + "\n"


def main() -> int:
    """Write the page; say whether it changed."""
    text = render(from_context())
    changed = not PAGE.exists() or PAGE.read_text(encoding="utf-8") != text
    PAGE.write_text(text, encoding="utf-8")
    print("updated" if changed else "already current")  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
