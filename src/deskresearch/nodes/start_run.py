"""start_run: validate the input and settings, reset per-run state for a reused thread."""

from __future__ import annotations

import asyncio
import unicodedata
import uuid
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from deskresearch.context import Context, resolve
from deskresearch.errors import ConfigError
from deskresearch.progress import emit
from deskresearch.services.base import ChatService, ContentExtractor, SearchService, TokenCounter
from deskresearch.state import ResearchInput

MAX_TOPIC_CHARS = 2000


def clean_topic(topic: object) -> str:
    """Return the topic with control characters removed and whitespace collapsed.

    Raises:
        ConfigError: the topic is missing, empty or longer than MAX_TOPIC_CHARS.
    """
    if not isinstance(topic, str):
        raise ConfigError("topic is missing: pass a research question as the input's 'topic'")
    kept = "".join(
        " " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") else ch for ch in topic
    )
    text = " ".join(kept.split())
    if not text:
        raise ConfigError(
            "topic is empty: pass a research question, e.g. 'How are EV batteries recycled?'"
        )
    if len(text) > MAX_TOPIC_CHARS:
        raise ConfigError(
            f"topic is {len(text)} characters; the limit is {MAX_TOPIC_CHARS}: "
            "state the question and leave background material out"
        )
    return text


def _check(ctx: Context, llm: ChatService, search: SearchService) -> None:
    """Raise ConfigError for a setting that cannot work, before any model call."""
    llm.check(ctx.summary_spec())
    llm.check(ctx.report_spec())
    if ctx.check_citations:
        llm.check(ctx.judge_spec())
    search.check(ctx.search_settings())


async def start_run(
    state: ResearchInput,
    runtime: Runtime[Context],
    *,
    llm: ChatService,
    search: SearchService,
    extractor: ContentExtractor,
    tokens: TokenCounter,
) -> dict[str, Any]:
    """Check everything that can be checked before spending a token; reset reducer lists.

    Also starts the slow local set-up (tokenizer, extraction workers) so it overlaps the first
    model call instead of delaying the steps that need it.
    """
    ctx = resolve(runtime)
    topic = clean_topic(state.get("topic"))
    language = " ".join(str(state.get("language") or ctx.language).split()) or ctx.language
    # Checks may touch files (the cache, a corpus folder): off the event loop, whose blocking
    # guard under `langgraph dev` would otherwise fail the run.
    await asyncio.to_thread(_check, ctx, llm, search)
    tokens.warm()
    extractor.warm()
    emit(runtime, "start_run", "started", topic=topic, language=language)
    return {
        "topic": topic,
        "language": language,
        "settings": ctx.resumable_settings(),
        "run_id": uuid.uuid4().hex,
        "keywords": [],
        "keyword_attempts": 0,
        "queries": [],
        "page_tasks": [],
        "dropped_urls": [],
        "sources": [],
        "report": "",
        "status": "ok",
        "report_attempts": 0,
        "report_cited": False,
        "draft": "",
        "outline": None,
        "checks": [],
        "citations": [],
        # Reducer lists would otherwise keep the previous run's items on a reused thread.
        "keyword_hits": Overwrite([]),
        "ranked": Overwrite([]),
        "read_urls": Overwrite([]),
        "pages": Overwrite([]),
        "sections": Overwrite([]),
        "usage": Overwrite([]),
        "provenance": Overwrite([]),
        "budget_stopped": Overwrite(False),
    }
