"""review_plan: optionally pause for a person to accept, trim or drop the planned pages.

With ``review_plan`` on, the run stops here with ``interrupt()``, showing the queries and the
candidate URLs; it continues when resumed with ``Command(resume=...)``:

- ``True``: go on with every page (``None``, ``"accept"`` and ``{}`` mean the same in an answer
  file or the page, which hand the run ``True``: LangGraph cannot resume with ``None`` or ``{}``);
- ``{"drop_urls": [...]}``: leave those pages out;
- ``{"keep_urls": [...]}``: read only those pages;
- ``{"drop_queries": [...]}``: leave out the pages that serve only those queries.

Whatever is left out is recorded in provenance (``not_relevant``, "dropped at review").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from deskresearch.config.context import Context, resolve
from deskresearch.errors import ConfigError
from deskresearch.progress import emit, note
from deskresearch.safety.urls import canonical_url
from deskresearch.state import PageTask, ResearchState

_KEYS = {"drop_urls", "keep_urls", "drop_queries"}


def accepts(answer: object) -> bool:
    """Whether ``answer`` is one of the ways to go on with every page."""
    return answer in (None, True, "accept") or answer == {}


def dropped_by(answer: object, tasks: list[PageTask]) -> set[str]:
    """Return the page URLs a reviewer's answer leaves out.

    Raises:
        ConfigError: the answer is not one of the documented shapes (names them).
    """
    if accepts(answer):
        return set()
    if (
        not isinstance(answer, Mapping)
        or not set(answer) <= _KEYS
        or not all(_texts(v) for v in answer.values())
    ):
        raise ConfigError(
            f"review answer {answer!r} not understood: resume with True to accept, or a dict "
            "with drop_urls, keep_urls or drop_queries (lists of text)"
        )
    urls = {t["url"] for t in tasks}
    dropped = {canonical_url(u) for u in answer.get("drop_urls") or []} & urls
    if "keep_urls" in answer:
        dropped |= urls - {canonical_url(u) for u in answer["keep_urls"] or []}
    gone = set(answer.get("drop_queries") or [])
    dropped |= {t["url"] for t in tasks if gone and set(t["queries"]) <= gone}
    return dropped


def _texts(value: object) -> bool:
    """None, or a list of strings (a string alone would be read letter by letter)."""
    return value is None or (isinstance(value, list) and all(isinstance(v, str) for v in value))


async def review_plan(state: ResearchState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Pause for review when the Context asks for it (each round); otherwise pass straight through."""
    if not resolve(runtime).review_plan or not state["page_tasks"]:
        return {}
    tasks = state["page_tasks"]
    answer = interrupt(
        {
            "queries": state["queries"],
            "pages": [
                {"url": t["url"], "title": t["title"], "queries": t["queries"]} for t in tasks
            ],
            "how": "resume with True to accept, or {drop_urls|keep_urls|drop_queries: [...]}",
        }
    )
    dropped = sorted(dropped_by(answer, tasks))
    emit(runtime, "review_plan", "finished", pages=len(tasks) - len(dropped), dropped=len(dropped))
    return {
        "dropped_urls": [*state["dropped_urls"], *dropped],
        "provenance": [
            note("review_plan", u, "not_relevant", "dropped at review") for u in dropped
        ],
    }
