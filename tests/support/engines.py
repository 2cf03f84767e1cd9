"""What the other search engines and file types look like on the wire, for the loopback web."""

from __future__ import annotations

import html
import json
from typing import Any


def searxng_json(results: list[dict[str, Any]]) -> bytes:
    """A SearxNG ``/search?format=json`` answer."""
    rows = [{"url": r["url"], "title": r["title"], "content": r["content"],
             "engine": "fake", "score": r["score"]} for r in results]  # fmt: skip
    return json.dumps({"query": "", "number_of_results": len(rows), "results": rows}).encode()


def ddg_html(results: list[dict[str, Any]]) -> bytes:
    """html.duckduckgo.com's result page, in the markup ddgs' DuckDuckGo engine parses."""
    items = "".join(
        '<div class="result results_links web-result"><div class="links_main result__body">'
        f'<h2 class="result__title"><a class="result__a" href="{html.escape(r["url"])}">'
        f"{html.escape(r['title'])}</a></h2>"
        f'<a class="result__snippet" href="{html.escape(r["url"])}">{html.escape(r["content"])}</a>'
        "</div></div>"
        for r in results
    )
    return f"<html><body><div id='links'>{items}</div></body></html>".encode()


def make_pdf(text: str, title: str = "") -> bytes:
    """A minimal valid one-page PDF whose text layer is ``text`` (Helvetica, one line per line)."""
    lines = text.splitlines() or [""]
    escaped = [ln.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") for ln in lines]
    stream = "BT /F1 11 Tf 50 750 Td 14 TL " + " ".join(f"({ln}) '" for ln in escaped) + " ET"
    info = f"<< /Title ({title}) >>" if title else "<< >>"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        info,
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{off:010d} 00000 n \n".encode() for off in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info 6 0 R >>\n".encode()
    return out + f"startxref\n{xref}\n%%EOF\n".encode()
