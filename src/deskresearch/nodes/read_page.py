"""read_page: fetch and extract one page into chunks; reject blocked or empty pages with a reason."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from langgraph.errors import NodeError
from langgraph.runtime import Runtime
from langgraph.types import Command

from deskresearch.context import Context, resolve
from deskresearch.errors import FetchError, ServiceError
from deskresearch.progress import emit, note
from deskresearch.records import Extracted, Provenance
from deskresearch.relevance import chunks_to_skip
from deskresearch.services.base import ContentExtractor, PageFetcher, TokenCounter
from deskresearch.services.tokens import context_window
from deskresearch.state import PageDigest, PageTask
from deskresearch.text import injection_marker, remove_injections, text_hash, visible_text

PROMPT_RESERVE = 1500  # tokens of the summarise prompt around a chunk
OUTPUT_RESERVE = 1024  # tokens kept free for the chunk's summary
MIN_SNIPPET_CHARS = 20
BLOCK_CHECK_CHARS = 3000  # longer texts are articles that may mention these words

# The seed's markers plus captcha, Cloudflare and cookie-wall pages.
_BLOCKED = re.compile(
    r"fail(?:ed)? to load page|access denied|403 forbidden|you don.t have permission to access"
    r"|just a moment\.\.\.|checking your browser|attention required!? \| cloudflare"
    r"|ddos protection by cloudflare|enable javascript and cookies to continue"
    r"|captcha|are you a robot|verify (?:that )?you are (?:a )?human|unusual traffic from your"
    r"|please enable cookies|accept (?:all )?cookies to continue|cookies? (?:wall|consent required)",
    re.IGNORECASE,
)


def block_reason(text: str, title: str, min_chars: int) -> str | None:
    """Return why a page's text is unusable (blocked marker or near-empty), or None."""
    if len(text) < BLOCK_CHECK_CHARS:
        m = _BLOCKED.search(f"{title}\n{text}")
        if m:
            return f"blocked page ({m.group(0)!r})"
    if len(text) < min_chars:
        return f"near-empty text ({len(text)} characters, minimum {min_chars})"
    return None


def chunk_tokens(ctx: Context) -> int:
    """Tokens per chunk: what the summary model's window leaves, capped by max_chunk_tokens."""
    window = ctx.summary_context_window or context_window(ctx.summary_spec().model)
    return max(min(ctx.max_chunk_tokens, window - PROMPT_RESERVE - OUTPUT_RESERVE), 200)


def _digest(
    task: PageTask, *, text: str, title: str, site: str, published: str, origin: str
) -> PageDigest:
    return PageDigest(
        url=task["url"],
        title=title or task["title"],
        site=site,
        published=published,
        date_read=date.today().isoformat(),
        queries=task["queries"],
        text_hash=text_hash(text),
        origin=origin,
        summary="",
        order=task["order"],
    )


def snippet_fallback(task: PageTask, reason: str) -> dict[str, Any]:
    """Use the search snippet when the page itself could not be read; reject if there is none."""
    snippet = " ".join(task["snippet"].split())
    if len(snippet) < MIN_SNIPPET_CHARS:
        return {
            "chunks": [],
            "provenance": [
                note("read_page", task["url"], "failed", f"{reason}; no snippet to fall back on")
            ],
        }
    page = _digest(task, text=snippet, title=task["title"], site="", published="", origin="snippet")
    return {
        "chunks": [snippet],
        "page": page,
        "provenance": [
            note("read_page", task["url"], "fallback", f"{reason}; using the search snippet")
        ],
    }


async def _extract(
    task: PageTask, ctx: Context, fetcher: PageFetcher, extractor: ContentExtractor
) -> tuple[Extracted | None, str, str]:
    """Return (extracted, crude text for checks, origin); raises FetchError."""
    if task["raw_content"] is not None:  # the backend already read it (a corpus file)
        body: bytes | str = task["raw_content"]
        ctype, origin, url = task["content_type"] or "text/plain", "corpus", task["url"]
    else:
        fetched = await fetcher.fetch(task["url"], limits=ctx.fetch_limits())
        body, ctype, origin, url = fetched.body, fetched.content_type, "page", fetched.url
    extracted = await extractor.extract(body, url=url, content_type=ctype)
    raw = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    crude = visible_text(raw[:200_000]) if extracted is None else ""
    return extracted, crude, origin


async def read_page(
    state: PageTask,
    runtime: Runtime[Context],
    *,
    fetcher: PageFetcher,
    extractor: ContentExtractor,
    tokens: TokenCounter,
) -> dict[str, Any]:
    """Read one page into chunks; fall back to the snippet when it cannot be read."""
    ctx = resolve(runtime)
    url = state["url"]
    try:
        extracted, crude, origin = await _extract(state, ctx, fetcher, extractor)
    except FetchError as exc:
        if exc.transient:
            raise  # the node's RetryPolicy retries; read_failed falls back after the last try
        update = snippet_fallback(state, f"fetch failed: {exc.reason}")
        emit(runtime, "read_page", "fallback", url=url, reason=exc.reason)
        return update
    if extracted is None:
        reason = block_reason(crude, "", 0)
        if reason:
            emit(runtime, "read_page", "rejected", url=url, reason=reason)
            return {"chunks": [], "provenance": [note("read_page", url, "blocked", reason)]}
        return snippet_fallback(state, "no main content could be extracted")
    reason = block_reason(extracted.text, extracted.title, ctx.min_page_chars)
    if reason:
        emit(runtime, "read_page", "rejected", url=url, reason=reason)
        return {"chunks": [], "provenance": [note("read_page", url, "blocked", reason)]}
    # Sentences that address the model are never facts: they do not reach any prompt. The rest
    # is read as data (the prompts say so), and the reader is told.
    text, removed = remove_injections(extracted.text)
    chunks = await tokens.split(text, max_tokens=chunk_tokens(ctx))
    provenance: list[Provenance] = []
    marker = injection_marker(extracted.text)
    if marker:
        reason = (
            f"page text addresses the model ({marker!r}); {removed} such sentence(s) removed, "
            "the rest summarised as data only"
        )
        provenance.append(note("read_page", url, "flagged", reason))
    questions = [state["topic"], *state["queries"]]
    skip = chunks_to_skip(chunks, questions) if ctx.skip_unrelated_chunks else []
    if skip:
        numbers = ", ".join(str(i + 1) for i in skip)
        provenance.append(
            note("read_page", url, "skipped",
                 f"chunks {numbers} of {len(chunks)} share no word with the queries; not summarised")
        )  # fmt: skip
        chunks = [c for i, c in enumerate(chunks) if i not in skip]
    page = _digest(
        state,
        text=extracted.text,
        title=extracted.title,
        site=extracted.site,
        published=extracted.published,
        origin=origin,
    )
    emit(
        runtime,
        "read_page",
        "finished",
        url=url,
        chunks=len(chunks),
        origin=origin,
        skipped=len(skip),
    )
    return {"chunks": chunks, "page": page, "provenance": provenance}


def read_failed(state: PageTask, error: NodeError) -> Command[Any]:
    """After the last retry of a transient fetch failure, fall back to the snippet."""
    exc = error.error
    if not isinstance(exc, ServiceError):
        raise exc
    reason = exc.reason if isinstance(exc, FetchError) else str(exc)
    return Command(update=snippet_fallback(state, f"fetch failed after retries: {reason}"))
