"""read_page: fetch and extract one page into chunks; reject blocked or empty pages with a reason.

A page costs a bounded number of model calls whatever its size: at most ``max_page_chunks`` of
its chunks are summarised, the ones that share most words with the queries (no model call to
choose them), and the cut is recorded. A URL the network policy refuses, or one outside the
run's domain scope, is dropped with its reason; it never falls back to its search snippet, so it
can never become a source. With ``since`` set, a page published earlier is dropped right after
extraction, before any of its chunks is summarised; an undated one is kept and marked so.
"""

from __future__ import annotations

import asyncio
import re
from datetime import date
from typing import Any, NamedTuple

from langgraph.errors import NodeError
from langgraph.runtime import Runtime
from langgraph.types import Command

from deskresearch.config.context import Context, resolve, settings_of
from deskresearch.errors import FetchError, OutOfScope, RefusedURL, ServiceError
from deskresearch.progress import emit, note
from deskresearch.records import Extracted, Outcome, Provenance
from deskresearch.safety.injection import clean_line, injection_marker, remove_injections
from deskresearch.safety.scope import before
from deskresearch.services.base import ContentExtractor, PageFetcher, TokenCounter
from deskresearch.services.model.tokens import summary_window
from deskresearch.state import PageDigest, PageTask
from deskresearch.text.clean import text_hash, visible_text
from deskresearch.text.relevance import chunks_to_skip, most_relevant

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


def dating(url: str, published: str, since: str) -> Provenance | None:
    """With ``since`` set: the line that drops a page published before it, or marks it undated."""
    if not since:
        return None
    if not published:
        why = (f"undated: the page gives no publication date (metadata, dateline, URL); kept, "
               f"since={since} cannot apply to it")  # fmt: skip
        return note("read_page", url, "flagged", why)
    if before(published, since):
        why = f"published {published}, before since={since}: dropped before summarising"
        return note("read_page", url, "out_of_scope", why)
    return None


def chunk_tokens(ctx: Context) -> int:
    """Tokens per chunk: what the summary model's window leaves, capped by max_chunk_tokens."""
    window = summary_window(ctx)
    return max(min(ctx.max_chunk_tokens, window - PROMPT_RESERVE - OUTPUT_RESERVE), 200)


def _digest(
    task: PageTask,
    *,
    text: str,
    title: str,
    site: str,
    published: str,
    origin: str,
    date_read: str = "",
    evidence: str = "",
    language: str = "",
) -> PageDigest:
    return PageDigest(
        url=task["url"],
        title=title or task["title"],
        site=site,
        published=published,
        date_read=date_read or date.today().isoformat(),
        queries=task["queries"],
        text_hash=text_hash(text),
        origin=origin,
        facts=[],
        order=task["order"],
        text=evidence or text,
        language=language,
        round=task["round"],
    )


def snippet_fallback(task: PageTask, reason: str, since: str = "") -> dict[str, Any]:
    """Use the search snippet when the page itself could not be read; reject if there is none.

    A snippet has no publication date: with ``since`` set it is kept and marked undated.
    """
    snippet = " ".join(task["snippet"].split())
    if len(snippet) < MIN_SNIPPET_CHARS:
        return {
            "chunks": [],
            "provenance": [
                note("read_page", task["url"], "failed", f"{reason}; no snippet to fall back on")
            ],
        }
    page = _digest(task, text=snippet, title=task["title"], site="", published="", origin="snippet")
    undated = dating(task["url"], "", since)
    return {
        "chunks": [snippet],
        "page": page,
        "provenance": [
            note("read_page", task["url"], "fallback", f"{reason}; using the search snippet"),
            *([undated] if undated else []),
        ],
    }


class Read(NamedTuple):
    """What reading one page gave."""

    extracted: Extracted | None
    crude: str  # visible text for the block check, when nothing could be extracted
    origin: str  # page | corpus
    cache_note: list[Provenance]  # a "cached" line when the body came from the cache
    read_on: str  # ISO date the body was fetched


async def _extract(
    task: PageTask, ctx: Context, fetcher: PageFetcher, extractor: ContentExtractor
) -> Read:
    """Fetch (unless the backend already read it: a corpus file) and extract; raises FetchError."""
    read_on, cache_note = date.today().isoformat(), []
    if task["raw_content"] is not None:
        body: bytes | str = task["raw_content"]
        ctype, origin, url = task["content_type"] or "text/plain", "corpus", task["url"]
    else:
        fetched = await fetcher.fetch(task["url"], limits=ctx.fetch_limits())
        body, ctype, origin, url = fetched.body, fetched.content_type, "page", fetched.url
        read_on = fetched.read_on or read_on
        if fetched.cached == "hit":
            why = f"page from the cache (fetched {read_on}; not downloaded again)"
            cache_note = [note("read_page", task["url"], "cached", why)]
        elif fetched.cached == "revalidated":
            why = "page from the cache: the server answered 304 Not Modified"
            cache_note = [note("read_page", task["url"], "cached", why)]
    extracted = await extractor.extract(body, url=url, content_type=ctype)
    raw = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    crude = visible_text(raw[:200_000]) if extracted is None else ""
    return Read(extracted, crude, origin, cache_note, read_on)


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
        read = await _extract(state, ctx, fetcher, extractor)
    except RefusedURL as exc:  # never a source: no snippet fallback
        emit(runtime, "read_page", "rejected", url=url, reason=exc.reason)
        outcome: Outcome = "out_of_scope" if isinstance(exc, OutOfScope) else "blocked"
        return {"chunks": [], "provenance": [note("read_page", url, outcome, exc.reason)]}
    except FetchError as exc:
        if exc.transient:
            raise  # the node's RetryPolicy retries; read_failed falls back after the last try
        update = snippet_fallback(state, f"fetch failed: {exc.reason}", ctx.since)
        emit(runtime, "read_page", "fallback", url=url, reason=exc.reason)
        return update
    extracted = read.extracted
    if extracted is None:
        reason = block_reason(read.crude, "", 0)
        if reason:
            emit(runtime, "read_page", "rejected", url=url, reason=reason)
            return {
                "chunks": [],
                "provenance": [*read.cache_note, note("read_page", url, "blocked", reason)],
            }
        return snippet_fallback(state, "no main content could be extracted", ctx.since)
    reason = block_reason(extracted.text, extracted.title, ctx.min_page_chars)
    if reason:
        emit(runtime, "read_page", "rejected", url=url, reason=reason)
        return {
            "chunks": [],
            "provenance": [*read.cache_note, note("read_page", url, "blocked", reason)],
        }
    dated = dating(url, extracted.published, ctx.since)  # before any chunk costs a model call
    if dated is not None and dated["outcome"] == "out_of_scope":
        emit(runtime, "read_page", "rejected", url=url, reason=dated["reason"])
        return {"chunks": [], "provenance": [*read.cache_note, dated]}
    # Sentences that address the model are never facts: they do not reach any prompt. The rest
    # is read as data (the prompts say so), and the reader is told. Off the event loop: a page
    # may be megabytes.
    text, removed = await asyncio.to_thread(remove_injections, extracted.text)
    chunks = await tokens.split(text, max_tokens=chunk_tokens(ctx))
    provenance: list[Provenance] = [*read.cache_note, *([dated] if dated else [])]
    title, title_flagged = clean_line(extracted.title)
    marker = injection_marker(extracted.text) if removed else None
    if title_flagged:
        marker = marker or injection_marker(extracted.title)
        removed += 1
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
    chunks, cut = await asyncio.to_thread(_bounded, chunks, questions, ctx.max_page_chunks)
    provenance += [note("read_page", url, "skipped", cut)] if cut else []
    page = _digest(
        state,
        text=extracted.text,
        title=title,
        site=extracted.site,
        published=extracted.published,
        origin=read.origin,
        date_read=read.read_on,
        evidence="\n\n".join(chunks),
        language=extracted.language,
    )
    emit(
        runtime,
        "read_page",
        "finished",
        url=url,
        chunks=len(chunks),
        origin=read.origin,
        skipped=len(skip),
        cached=bool(read.cache_note),
    )
    return {"chunks": chunks, "page": page, "provenance": provenance}


def _bounded(chunks: list[str], questions: list[str], limit: int) -> tuple[list[str], str]:
    """Keep at most ``limit`` chunks, the most relevant; say which, when some were cut."""
    keep = most_relevant(chunks, questions, limit)
    if len(keep) == len(chunks):
        return chunks, ""
    numbers = ", ".join(str(i + 1) for i in keep)
    why = (
        f"long page: {len(chunks)} chunks; summarised the {len(keep)} sharing most words with "
        f"the queries ({numbers}), the rest cut before any model call (max_page_chunks={limit})"
    )
    return [chunks[i] for i in keep], why


def read_failed(state: PageTask, error: NodeError) -> Command[Any]:
    """After the last retry of a transient fetch failure, fall back to the snippet."""
    exc = error.error
    if not isinstance(exc, ServiceError):
        raise exc
    reason = exc.reason if isinstance(exc, FetchError) else str(exc)
    since = settings_of(state).since
    return Command(update=snippet_fallback(state, f"fetch failed after retries: {reason}", since))
