"""Text of a PDF through pypdf, bounded: a hostile or huge PDF cannot hold a worker for long."""

from __future__ import annotations

import io
import logging

MAX_PAGES = 300


def pdf_text(data: bytes, *, max_pages: int = MAX_PAGES) -> tuple[str, str] | None:
    """Return ``(title, text)`` of a PDF's first ``max_pages`` pages, or None when unreadable.

    Scanned PDFs (images only) have no text layer and come back as None, like a cut-off file.
    """
    # Imported here: only extraction workers and corpus indexing read PDFs, not the CLI's start.
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # malformed PDFs log at WARNING per object
    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages[:max_pages]]
        title = str(reader.metadata.get("/Title") or "").strip() if reader.metadata else ""
    except (PyPdfError, ValueError, KeyError, TypeError, OSError, RecursionError):
        return None
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    return (title, text) if text else None
