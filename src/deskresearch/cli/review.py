"""The command line's side of ``review_plan``: show the planned pages, read the reviewer's typing.

An answer given as a file (``--review answers.json``) is the session's: read and checked in the
pre-flight (deskresearch.session.review).
"""

from __future__ import annotations

import sys
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


def answer_at_terminal(plan: dict[str, Any], stdin: TextIO = sys.stdin) -> Any:
    """Return the resume value from numbers typed on stdin: the pages to drop.

    Raises:
        ConfigError: a typed word is not a number, or a number is not on the list.
    """
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
