"""start_run: validate the input and settings, reset per-run state for a reused thread."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from deskresearch.config.context import Context, resolve
from deskresearch.nodes.chat import as_question, question_of
from deskresearch.progress import emit, note
from deskresearch.records import Provenance
from deskresearch.safety.scope import describe
from deskresearch.services.base import ChatService, ContentExtractor, SearchService, TokenCounter
from deskresearch.state import ResearchState
from deskresearch.text.clean import MAX_TOPIC_CHARS, clean_language, clean_topic, known_language

__all__ = ["MAX_TOPIC_CHARS", "check_settings", "clean_topic", "start_run"]


def check_settings(
    ctx: Context, llm: ChatService, search: SearchService, language: str = ""
) -> None:
    """Raise ConfigError for a setting that cannot work, before any model call."""
    known_language(language or ctx.language)  # reads Babel's data: this runs in a thread
    llm.check(ctx.summary_spec())
    llm.check(ctx.report_spec())
    if ctx.check_citations:
        llm.check(ctx.judge_spec())
    search.check(ctx.search_settings())


def corpus_note(ctx: Context) -> list[Provenance]:
    """Say once that corpus files are not held to the domain scope, when the chain has them."""
    scope = ctx.domain_scope()
    if not (scope.include or scope.exclude) or "corpus" not in ctx.search_settings().backends:
        return []
    why = (f"the corpus ignores the domain scope ({describe(scope)}): its files are searched "
           "and read whatever their names; since still applies to their dates")  # fmt: skip
    return [note("start_run", "corpus", "flagged", why)]


async def start_run(
    state: ResearchState,
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
    raw, message = question_of(state)  # `topic`, or the newest human message (chat front ends)
    topic = clean_topic(raw)
    asked, added = as_question(topic, message)
    given = state.get("language")  # a served caller's input: checked like the setting
    language = clean_language(given if given and str(given).strip() else ctx.language)
    # Checks may touch files (the cache, a corpus folder): off the event loop, whose blocking
    # guard under `langgraph dev` would otherwise fail the run.
    await asyncio.to_thread(check_settings, ctx, llm, search, language)
    tokens.warm()
    extractor.warm()
    emit(runtime, "start_run", "started", topic=topic, language=language)
    return {
        "topic": topic,
        "language": language,
        "asked": asked,
        "messages": added,
        "settings": ctx.resumable_settings(),
        "run_id": uuid.uuid4().hex,
        "keywords": [],
        "keyword_attempts": 0,
        "round": 1,
        "round_started": time.time(),
        "followups": [],
        "open_gaps": [],
        "rounds": [],
        "queries": [],
        "page_tasks": [],
        "dropped_urls": [],
        "sources": [],
        "report": "",
        "status": "",  # set by the run's last node only (outcome.py)
        "reason": "",
        "report_attempts": 0,
        "report_cited": False,
        "draft": "",
        "outline": None,
        "checks": [],
        "citations": [],
        "disagreements_found": [],
        "disagreements": [],
        "changes": [],
        # Reducer lists would otherwise keep the previous run's items on a reused thread.
        "keyword_hits": Overwrite([]),
        "ranked": Overwrite([]),
        "read_urls": Overwrite([]),
        "pages": Overwrite([]),
        "sections": Overwrite([]),
        "judged": Overwrite([]),
        "usage": Overwrite([]),
        "provenance": Overwrite(corpus_note(ctx)),
        "budget_stopped": Overwrite(False),
    }
