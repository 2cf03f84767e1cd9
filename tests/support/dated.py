"""Written pages that state their publication date the ways real sites do (or not at all)."""

from __future__ import annotations

import html
import json
from datetime import date

DEFAULT_DAYS = {"meta": "2024-02-03", "jsonld": "2023-11-20", "dateline": "2025-02-03"}


def human(day: str) -> str:
    """``2025-02-03`` as a dateline writes it: ``3 February 2025``."""
    d = date.fromisoformat(day)
    return f"{d.day} {d.strftime('%B')} {d.year}"


def article(kind: str, day: str = "", marker: str = "Lithium", n: int = 6) -> bytes:
    """A lithium recycling article dated by ``kind``.

    ``meta``: ``<meta property="article:published_time">``; ``jsonld``: a NewsArticle's
    ``datePublished``; ``dateline``: ``BERLIN, 3 February 2025 —`` opening the text; ``none``: no
    date anywhere (a date in its URL is the test's to give); ``cites-1998``: no date of its own,
    but the text cites a law of 12 March 1998. ``marker`` names the plants, so a test can tell
    which page's text reached the model.
    """
    day = day or DEFAULT_DAYS.get(kind, "")
    head = f"<title>{marker} recycling report</title>"
    if kind == "meta":
        head += f'<meta property="article:published_time" content="{day}T08:00:00+00:00">'
    if kind == "jsonld":
        data = {"@context": "https://schema.org", "@type": "NewsArticle", "datePublished": day,
                "headline": f"{marker} recycling report"}  # fmt: skip
        head += f'<script type="application/ld+json">{json.dumps(data)}</script>'
    paragraphs = [
        f"The {marker} recycling plant number {i} in Saxony recovered {100 + 7 * i} tonnes of "
        "lithium from used electric car batteries last year."
        for i in range(n)
    ]
    if kind == "dateline":
        paragraphs[0] = f"BERLIN, {human(day)} — {paragraphs[0]}"
    if kind == "cites-1998":
        paragraphs.insert(1, "The battery directive of 12 March 1998 still sets the collection "
                             "targets that every plant in the region must meet.")  # fmt: skip
    body = "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
    return (f"<html><head><meta charset='utf-8'>{head}</head><body><article>"
            f"<h1>{html.escape(marker)} recycling report</h1>{body}</article></body></html>").encode()  # fmt: skip
