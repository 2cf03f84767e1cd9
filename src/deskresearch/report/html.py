"""The report as one self-contained HTML page: text, evidence, references, provenance and cost.

``render_html(result, topic=...)`` takes the graph's result (or the JSON sidecar) and returns a
page that loads nothing: CSS and JS are inline and allowed by their hashes in a
Content-Security-Policy that forbids every network load, so even markup that slipped through
could not run a script or call home. Everything that comes from pages or the model is escaped.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from functools import cache
from html import escape
from importlib import resources
from typing import Any

from deskresearch.grounding.citations import render_references
from deskresearch.grounding.draft import language_code
from deskresearch.grounding.ledger import summary_line
from deskresearch.report.html_claims import markdown_renderer, render_body, unmarked
from deskresearch.report.html_weighing import copy_note, weighing_html
from deskresearch.text.clean import inert_label
from deskresearch.text.plural import plural

_SAFE_URL = re.compile(r"^(?:https?|file)://[^\s\x00-\x1f\x7f\"'<>`]+$", re.IGNORECASE)
_REFS_HEADING = re.compile(r"^## References[ \t]*$", re.MULTILINE)
_NEXT_HEADING = re.compile(r"^#{1,2} ", re.MULTILINE)

OUTCOME_WORDS = {
    "removed": "Removed from the report",
    "unverified": "Facts or sentences whose quote was not in the page",
    "failed": "Failed for good",
    "blocked": "Blocked pages (captcha, access denied, near-empty)",
    "not_relevant": "Left out as not relevant",
    "out_of_scope": "Outside the scope you set (domains, since)",
    "duplicate": "Duplicates (read once)",
    "fallback": "Fallbacks used",
    "flagged": "Flagged for caution",
    "skipped": "Skipped (chunks before any model call, follow-ups not searched)",
    "cached": "Answered from the cache",
    "followup": "Follow-up searches of later rounds, and why",
    "weighed": "Evidence weighed: copies of one origin, disagreements, changes over time",
    "issued": "Searches sent",
    "used": "Pages used as sources",
}


@cache
def _asset(name: str) -> str:
    return resources.files("deskresearch.report").joinpath("assets", name).read_text("utf-8")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def safe_href(url: str) -> str | None:
    """Return ``url`` escaped for an href when it is a plain http(s)/file URL, else None."""
    return escape(url, quote=True) if _SAFE_URL.match(url) else None


def split_report(report: str, sources: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """Split the report into its body and what follows the references (the check's appendix).

    The references are rendered here from the ledger, so the markdown list is cut out.
    """
    if sources:
        refs = render_references(sources)  # type: ignore[arg-type]
        at = report.rfind(refs)
        if at >= 0:
            return report[:at], report[at + len(refs) :]
    heads = list(_REFS_HEADING.finditer(report))
    if not heads:
        return report, ""
    after = _NEXT_HEADING.search(report, heads[-1].end())
    return report[: heads[-1].start()], report[after.start() :] if after else ""


def references_html(sources: Sequence[Mapping[str, Any]]) -> str:
    """The ledger as a list whose entries are the targets of every ``[n]`` link."""
    if not sources:
        return ""
    items = []
    for s in sources:
        sid, url = int(s["id"]), str(s.get("url") or "")
        title = escape(inert_label(str(s.get("title") or "")) or url)  # the page's words only
        href = safe_href(url)
        # A new tab: the reader keeps the report (and its frame, in the page of deskresearch ui).
        head = (
            f'<a href="{href}" target="_blank" rel="noopener noreferrer">{title}</a>'
            if href
            else title
        )
        meta = [escape(label) for k in ("site",) if (label := inert_label(str(s.get(k) or "")))]
        if published := inert_label(str(s.get("published") or "")):
            meta.append(f"published {escape(published)}")
        read = "search snippet only" if s.get("origin") == "snippet" else "read"
        meta.append(f"{read} {escape(str(s.get('date_read') or ''))}".strip())
        if note := copy_note(s):
            meta.append(note)
        facts = s.get("facts") or []
        details = ""
        if facts:
            rows = "".join(
                f"<li>{escape(str(f.get('claim', '')))}<br><q>{escape(str(f.get('quote', '')))}</q></li>"
                for f in facts
            )
            details = f"<details><summary>What the report could use from it ({len(facts)})</summary><ul>{rows}</ul></details>"
        items.append(
            f'<li id="ref-{sid}"><span class="ref-n">[{sid}]</span> {head}. {". ".join(meta)}. '
            f'<span class="url">{escape(url)}</span>{details}</li>'
        )
    return f'<section id="references"><h2>References</h2><ol class="refs">{"".join(items)}</ol></section>'


def _num(n: int, about: bool = False) -> str:
    return f'<td class="n">{"≈ " if about else ""}{n:,}</td>'


def usage_html(usage: Sequence[Mapping[str, Any]]) -> str:
    """Calls and tokens per stage and model, with a total row; ≈ on tokens we counted ourselves."""
    if not usage:
        return "<p>No model calls were made.</p>"
    keys = ("calls", "cached_calls", "input_tokens", "output_tokens")
    counted = sum(int(u.get("counted_calls") or 0) for u in usage)

    def cells(row: Mapping[str, Any], about: bool) -> str:
        return "".join(_num(int(row.get(k) or 0), about and k.endswith("tokens")) for k in keys)

    rows = "".join(
        f"<tr><td>{escape(str(u.get('stage', '')))}</td><td>{escape(str(u.get('model', '')))}</td>"
        + cells(u, bool(u.get("counted_calls")))
        + "</tr>"
        for u in usage
    )
    total = cells({k: sum(int(u.get(k) or 0) for u in usage) for k in keys}, bool(counted))
    head = "".join(
        f'<th class="n">{h}</th>' for h in ("calls", "from cache", "input tokens", "output tokens")
    )
    note = (
        f"<p>≈: the server reported no token usage for {counted} of these calls (a streamed "
        "answer); their tokens were counted here with o200k.</p>"
        if counted
        else ""
    )
    return (
        f'<table class="usage"><thead><tr><th>stage</th><th>model</th>{head}</tr></thead>'
        f'<tbody>{rows}</tbody><tfoot><tr><td colspan="2">total</td>{total}</tr></tfoot></table>'
        + note
    )


def provenance_html(provenance: Sequence[Mapping[str, Any]]) -> str:
    """What happened to every query, page and sentence, grouped by outcome, most telling first."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for p in provenance:
        groups[str(p.get("outcome", ""))].append(p)
    order = [o for o in OUTCOME_WORDS if o in groups] + sorted(set(groups) - set(OUTCOME_WORDS))
    out = []
    for outcome in order:
        rows = "".join(
            f"<tr><td>{escape(str(p.get('stage', '')))}</td>"
            f'<td class="subject">{escape(str(p.get("subject", "")))}</td>'
            f"<td>{escape(str(p.get('reason', '')))}</td></tr>"
            for p in groups[outcome]
        )
        label = escape(OUTCOME_WORDS.get(outcome, outcome))
        out.append(
            f'<details data-outcome="{escape(outcome)}"><summary>{label} ({len(groups[outcome])})'
            f"</summary><table><thead><tr><th>stage</th><th>what</th><th>why</th></tr></thead>"
            f"<tbody>{rows}</tbody></table></details>"
        )
    return "".join(out)


def rounds_html(rounds: Sequence[Mapping[str, Any]]) -> str:
    """The chain of leads: each round's searches, the gap each fills and the fact that led to it."""
    if len(rounds) < 2:
        return ""
    items = []
    for r in rounds:
        queries = []
        for q in r.get("queries") or []:
            why = ""
            if q.get("lead"):
                why = (f" — follows <b>{escape(str(q['lead']))}</b>, named in "
                       f"“{escape(str(q.get('fact', '')))}” "
                       f'(<span class="url">{escape(str(q.get("source", "")))}</span>)')  # fmt: skip
            elif q.get("gap"):
                why = f" — for: {escape(str(q['gap']))}"
            queries.append(f"<li>{escape(str(q.get('query', '')))}{why}</li>")
        gaps = "".join(f"<li>{escape(str(g))}</li>" for g in r.get("gaps") or [])
        left = f"<p>Still missing after it:</p><ul>{gaps}</ul>" if gaps else ""
        items.append(
            f"<li>Round {int(r.get('round') or 0)}: {plural(int(r.get('pages') or 0), 'page')} "
            f"read, {int(r.get('tokens') or 0):,} tokens, {float(r.get('seconds') or 0):.1f} s"
            f"<ul>{''.join(queries)}</ul>{left}</li>"
        )
    return f'<h3>Research rounds: the chain of leads</h3><ol class="rounds">{"".join(items)}</ol>'


def appendix_html(result: Mapping[str, Any], missing: Sequence[Mapping[str, Any]]) -> str:
    """The provenance and cost appendix."""
    queries = "".join(f"<li>{escape(str(q))}</li>" for q in result.get("queries") or [])
    lost = ""
    if missing:  # cited sentences the page could not place: listed, never silently dropped
        items = "".join(
            f"<li>“{escape(str(c.get('sentence', '')))}” ({escape(str(c.get('verdict', '')))})</li>"
            for c in missing
        )
        lost = f"<h3>Cited sentences not located in the text</h3><ul>{items}</ul>"
    return (
        '<section id="provenance"><h2>How this report was made</h2>'
        "<h3>Model calls and tokens</h3>"
        + usage_html(result.get("usage") or [])
        + f"<details><summary>Searches ({len(result.get('queries') or [])})</summary>"
        f"<ul>{queries}</ul></details>"
        + rounds_html(result.get("rounds") or [])
        + "<h3>What was dropped, removed or flagged, and why</h3>"
        + provenance_html(result.get("provenance") or [])
        + lost
        + "</section>"
    )


def question_html(topic: str) -> str:
    """The question that was asked, above the report (whose own title is the model's)."""
    if not topic.strip():
        return ""
    return (
        '<header id="question"><span class="label">Question asked</span>'
        f"<p>{escape(topic)}</p></header>"
    )


def render_html(result: Mapping[str, Any], *, topic: str, language: str = "en") -> str:
    """Return the report as one self-contained HTML page (see the module docstring).

    Args:
        result: the graph's output or the JSON sidecar (report, sources, citations, usage,
            provenance, queries, status).
        topic: the research question: the page's title, and shown above the report.
        language: the report's language setting (``en-us``, ``German``), for the page's lang.
    """
    sources = list(result.get("sources") or [])
    citations = list(result.get("citations") or [])
    titles = {
        int(s["id"]): inert_label(str(s.get("title") or "")) or str(s.get("url") or "")
        for s in sources
    }
    body_md, tail_md = split_report(unmarked(str(result.get("report") or "")), sources)
    body, placed = render_body(body_md, citations, titles)
    tail = markdown_renderer(titles).render(tail_md) if tail_md.strip() else ""
    if tail:
        tail = f'<section id="citation-check">{tail}</section>'
    missing = [
        c for i, c in enumerate(citations) if c.get("verdict") != "removed" and i not in placed
    ]
    css, js = _asset("report.css"), _asset("report.js")
    csp = (
        f"default-src 'none'; style-src '{_sha256(css)}'; script-src '{_sha256(js)}'; "
        "img-src 'none'; base-uri 'none'; form-action 'none'"
    )
    status = escape(str(result.get("status") or ""))
    checked = f" · citations: {escape(summary_line(citations))}" if citations else ""
    legend = " ".join(
        f'<span class="v-{v}">{g} {v}</span>'
        for v, g in (("supported", "✓"), ("re-cited", "↪"), ("rewritten", "✎"), ("unchecked", "?"))
    )
    bar = (
        f'<div class="bar"><span>deskresearch · {status} · {plural(len(sources), "source")}{checked}</span>'
        f'<span class="legend">{legend}</span>'
        '<button type="button" id="toggle-all" aria-pressed="false" hidden>Show all evidence'
        "</button></div>"
    )
    return (
        f'<!DOCTYPE html>\n<html lang="{escape(language_code(language))}"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f'<meta name="generator" content="deskresearch"><title>{escape(topic)}</title>'
        f"<style>{css}</style></head>\n<body>{bar}{question_html(topic)}<main id='report'>{body}"
        f"{weighing_html(result, titles)}{references_html(sources)}{tail}"
        f"{appendix_html(result, missing)}</main>"
        f"<script>{js}</script></body></html>\n"
    )
