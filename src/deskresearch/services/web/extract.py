"""ContentExtractor over trafilatura: main content as markdown, metadata from the same parse.

Every page gets its publication date here (``dates``): the metadata, else a dateline at the
head of its text, else its URL, as YYYY-MM-DD ("" when the page states none).

Extraction is CPU work (~65 ms a page here), so it runs in the worker pool (services.workers).
trafilatura (with lxml, numpy and its date and language helpers) and pypdf are imported by the
workers, not by the process that only hands them pages: that would delay a CLI run's start.
"""

from __future__ import annotations

from deskresearch.errors import FetchError
from deskresearch.records import Extracted
from deskresearch.services.web.dates import html_date_params, text_date
from deskresearch.services.worker_processes import warm_up_with
from deskresearch.services.workers import WorkerCrashed, WorkerPool, WorkerTimeout, shared_pool
from deskresearch.text.langid import detect_language

_HTML_TYPES = ("text/html", "application/xhtml+xml")


def _strip_front_matter(text: str) -> str:
    """Drop the YAML header trafilatura puts before the text when metadata is on."""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end != -1:
            return text[end + 5 :]
    return text


def _decode(body: bytes | str) -> str:
    """Decode plain text of unknown charset: UTF-8 when valid, else windows-1252.

    That is the browsers' fallback (WHATWG) for western pages; statistical detection guessed a
    Cyrillic code page for short German text here. HTML goes through trafilatura's detection.
    """
    if isinstance(body, str):
        return body
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return body.decode("cp1252", errors="replace")


def warm_extraction() -> None:
    """Import trafilatura and load the language model in a worker, before the first page."""
    import trafilatura

    trafilatura.extract("<html><body><article><p>warm up</p></article></body></html>")
    detect_language("The language model is loaded here, before the first page arrives.")


warm_up_with(warm_extraction)


def extract_sync(body: bytes | str, *, url: str, content_type: str) -> Extracted | None:
    """Extract ``body`` in this thread; see TrafilaturaExtractor.extract."""
    import trafilatura

    from deskresearch.services.web.pdf import pdf_text

    if content_type == "application/pdf":
        data = body if isinstance(body, bytes) else body.encode("latin-1", errors="replace")
        found = pdf_text(data)
        if not found:
            return None
        return Extracted(text=found[1], title=found[0], published=text_date(found[1], url),
                         site="", language=detect_language(found[1]))  # fmt: skip
    if not content_type.startswith(_HTML_TYPES):
        text = _decode(body).strip()
        if not text:
            return None
        return Extracted(text=text, title="", published=text_date(text, url), site="",
                         language=detect_language(text))  # fmt: skip
    doc = trafilatura.extract_with_metadata(
        body,
        url=url,
        output_format="markdown",
        include_comments=False,
        include_tables=True,
        include_formatting=True,
        date_extraction_params=html_date_params(),
    )
    if doc is None or not doc.text:
        return None
    text = _strip_front_matter(doc.text).strip()
    if not text:
        return None
    return Extracted(
        text=text,
        title=(doc.title or "").strip(),
        published=(doc.date or "").strip() or text_date(text, url),
        site=(doc.sitename or doc.hostname or "").strip(),
        language=detect_language(text),
    )


class TrafilaturaExtractor:
    """Runs trafilatura off the event loop, in the worker pool."""

    def __init__(self, pool: WorkerPool | None = None, *, deadline_s: float = 60.0) -> None:
        """``pool``: where extraction runs (default: the process-wide shared pool).

        ``deadline_s``: seconds one page may take; a page past it is dropped with that reason
        and its worker killed, so a pathological page can neither hang the run nor hold a worker.
        """
        self.pool = pool or shared_pool()
        self.deadline_s = deadline_s

    def warm(self) -> None:
        """Start the workers now; returns at once."""
        self.pool.warm()

    async def extract(self, body: bytes | str, *, url: str, content_type: str) -> Extracted | None:
        """Return the page's main content as markdown, or None when it has none.

        Plain text and markdown pass through unchanged; HTML goes through trafilatura, which
        also detects the charset of raw bytes; PDF through pypdf (its text layer).

        Raises:
            FetchError: the worker died on this page (a hostile page must not end the run).
        """
        try:
            return await self.pool.run(
                extract_sync, body, url=url, content_type=content_type, deadline_s=self.deadline_s
            )
        except WorkerCrashed:
            raise FetchError(url, "the extractor crashed on this page", transient=False) from None
        except WorkerTimeout:
            reason = f"extraction took longer than {self.deadline_s:g}s (its worker was restarted)"
            raise FetchError(url, reason, transient=False) from None
