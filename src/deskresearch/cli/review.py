"""The CLI's side of ``review_plan``: show the planned pages, read the reviewer's answer."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

from deskresearch.errors import ConfigError


def show_plan(plan: dict[str, Any], out: TextIO = sys.stderr) -> None:
    """Print the queries and the numbered candidate pages."""
    print("Planned queries:", file=out)
    for q in plan.get("queries", []):
        print(f"  - {q}", file=out)
    print("Pages to read:", file=out)
    for i, page in enumerate(plan.get("pages", []), 1):
        print(f"  {i:>2}. {page['url']}  {page.get('title', '')}", file=out)


def answer_from(plan: dict[str, Any], source: str, stdin: TextIO = sys.stdin) -> Any:
    """Return the resume value: from a JSON file, or from numbers typed on stdin ("-").

    Raises:
        ConfigError: the file is missing or not JSON, or a typed number is not on the list.
    """
    if source != "-":
        try:
            return json.loads(Path(source).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"--review {source}: cannot read a JSON answer ({exc})") from None
    pages = plan.get("pages", [])
    print("Numbers of pages to drop (e.g. 2 5), or Enter to accept all: ", end="", file=sys.stderr)
    typed = stdin.readline().replace(",", " ").split()
    try:
        picked = sorted({int(t) for t in typed})
    except ValueError:
        raise ConfigError(f"--review: expected page numbers, got {' '.join(typed)!r}") from None
    if any(not 1 <= n <= len(pages) for n in picked):
        raise ConfigError(f"--review: page numbers go from 1 to {len(pages)}")
    return {"drop_urls": [pages[n - 1]["url"] for n in picked]} if picked else True
