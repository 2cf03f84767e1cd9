"""ContentExtractor over trafilatura: main content as markdown, metadata from the same parse."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import trafilatura

from deskresearch.records import Extracted

_HTML_TYPES = ("text/html", "application/xhtml+xml")
# One worker: trafilatura copies lxml trees, and concurrent extractions in several threads
# crashed the interpreter (SIGABRT inside lxml) on a clean install. Threads would not be faster
# anyway (the GIL); the event loop stays free either way.
_EXTRACTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trafilatura")


def _strip_front_matter(text: str) -> str:
    """Drop the YAML header trafilatura puts before the text when metadata is on."""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end != -1:
            return text[end + 5 :]
    return text


def _decode(body: bytes | str) -> str:
    if isinstance(body, str):
        return body
    return body.decode("utf-8", errors="replace")


def extract_sync(body: bytes | str, *, url: str, content_type: str) -> Extracted | None:
    """Extract ``body`` in this thread; see TrafilaturaExtractor.extract."""
    if not content_type.startswith(_HTML_TYPES):
        text = _decode(body).strip()
        return Extracted(text=text, title="", published="", site="") if text else None
    doc = trafilatura.extract_with_metadata(
        body,
        url=url,
        output_format="markdown",
        include_comments=False,
        include_tables=True,
        include_formatting=True,
    )
    if doc is None or not doc.text:
        return None
    text = _strip_front_matter(doc.text).strip()
    if not text:
        return None
    return Extracted(
        text=text,
        title=(doc.title or "").strip(),
        published=(doc.date or "").strip(),
        site=(doc.sitename or doc.hostname or "").strip(),
    )


class TrafilaturaExtractor:
    """Runs trafilatura in one worker thread, so parsing never blocks the event loop."""

    async def extract(self, body: bytes | str, *, url: str, content_type: str) -> Extracted | None:
        """Return the page's main content as markdown, or None when it has none.

        Plain text and markdown pass through unchanged; HTML goes through trafilatura, which
        also detects the charset of raw bytes.
        """
        job = partial(extract_sync, body, url=url, content_type=content_type)
        return await asyncio.get_running_loop().run_in_executor(_EXTRACTOR, job)
