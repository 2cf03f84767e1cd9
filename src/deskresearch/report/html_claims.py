"""The report's markdown as HTML, each cited sentence wrapped with its evidence.

markdown-it-py renders the markdown with raw HTML off, so nothing the model or a page wrote can
become markup. Before rendering, each cited sentence is found in the markdown (by its text as it
stands in the report, whitespace-tolerant) and bracketed with private-use markers; after
rendering, the markers become the sentence's element, its evidence toggle and its evidence box.
Every ``[n]`` naming a source in the ledger links to ``#ref-n``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from html import escape
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from deskresearch.grounding.citations import ids_in
from deskresearch.report.html_weighing import weight_line

_OPEN, _MID, _CLOSE, _END = "\ue000", "\ue001", "\ue002", "\ue003"
_MARKERS = re.compile(f"[{_OPEN}{_MID}{_CLOSE}{_END}]")
_START_TAG = re.compile(f"{_OPEN}(\\d+){_MID}")
_END_TAG = re.compile(f"{_CLOSE}(\\d+){_END}")
_CITE = re.compile(r"\[(\d{1,4}(?:\s*[,;]\s*\d{1,4})*)\]")
_CELL = re.compile(r"[^|]+")

GLYPH = {"supported": "✓", "re-cited": "↪", "rewritten": "✎", "unchecked": "?"}
OVERRULED = "⚖"  # after the glyph: the judge model's verdict was weighed and overruled
# What follows the verdict's badge, so the card reads as one phrase that names it once:
# "SUPPORTED by the source it cites".
VERDICT_WORDS = {
    "supported": " by the source it cites",
    "re-cited": ": the source first cited does not say this, the one now cited does",
    "rewritten": " to say what its source says",
    "unchecked": ": treat it with caution",
    "removed": ": no source read for this report states it",
}
DECIDED_WORDS = {
    "lexical": "checked by code (its words and figures are in the quote)",
    "model": "checked by the judge model; code checked the fact it names and its figures",
    "none": "no check decided it",
}


# A disputed verdict, in words that never name the verdict badge's word ("stated", not
# "supported"): the card says its verdict once.
JUDGE_SAID = {
    "supported": "stated by [{n}]",
    "other_source": "stated by [{n}], not the source cited",
    "unsupported": "not stated by any source",
}
SETTLED = {
    (True, "asked_again"): "The judge model's verdict was overruled",
    (True, "code"): "The judge model's verdict was overruled",
    (False, "asked_again"): "The judge model's verdict was disputed and stands",
    (False, "unsettled"): "The judge model's verdict was disputed and not settled",
}


def dispute_html(dispute: Mapping[str, Any]) -> str:
    """What the judge said, what code found against it, who was asked again, and the outcome."""
    said = JUDGE_SAID.get(str(dispute.get("judge")), "").format(n=dispute.get("judge_source"))
    key = (bool(dispute.get("overruled")), str(dispute.get("settled_by")))
    asked = [
        f"{o.get('answer')} ({o.get('model')} model)"
        for o in dispute.get("asked_again") or []
        if isinstance(o, Mapping)
    ]
    text = (
        f"{SETTLED.get(key, SETTLED[(False, 'unsettled')])}: it said “{said}”; code found "
        f"{dispute.get('found', '')}"
        + (f"; asked again, differently: {', '.join(asked)}" if asked else "")
        + "."
    )
    return f'<span class="dispute">{escape(text)}</span>'


def unmarked(text: str) -> str:
    """Return ``text`` without the private-use characters used as markers."""
    return _MARKERS.sub("", text)


def _sentence_span(source: str, sentence: str, start: int) -> tuple[int, int] | None:
    """Where ``sentence`` stands in ``source`` at or after ``start`` (whitespace-tolerant)."""
    words = sentence.split()
    if not words:
        return None
    found = re.compile(r"\s+".join(re.escape(w) for w in words)).search(source, start)
    if not found:
        return None
    if sentence.lstrip().startswith("|"):  # a table row: wrap the first cell that cites
        for cell in _CELL.finditer(found.group(0)):
            if ids_in(cell.group(0)) and cell.group(0).strip():
                lead = len(cell.group(0)) - len(cell.group(0).lstrip())
                begin = found.start() + cell.start() + lead
                return begin, begin + len(cell.group(0).strip())
        return None
    return found.span()


def mark_sentences(markdown: str, citations: Sequence[Mapping[str, Any]]) -> tuple[str, list[int]]:
    """Bracket each cited sentence of ``markdown`` with markers; return it and the indices placed.

    Citations are in reading order, so each is looked for after the previous one first, then
    anywhere not yet taken (a repeated sentence takes the next free occurrence).
    """
    spans: list[tuple[int, int, int]] = []
    cursor = 0
    for i, cite in enumerate(citations):
        sentence = unmarked(str(cite.get("sentence") or ""))
        if cite.get("verdict") == "removed" or not sentence.strip():
            continue
        starts = [cursor, 0]
        for start in starts:
            span = _sentence_span(markdown, sentence, start)
            while span and any(s < span[1] and span[0] < e for s, e, _ in spans):
                span = _sentence_span(markdown, sentence, span[0] + 1)
            if span:
                spans.append((*span, i))
                cursor = span[1]
                break
    out = markdown
    for begin, end, i in sorted(spans, reverse=True):
        out = f"{out[:begin]}{_OPEN}{i}{_MID}{out[begin:end]}{_CLOSE}{i}{_END}{out[end:]}"
    return out, sorted(i for _, _, i in spans)


def link_cites(escaped: str, ids: Collection[int]) -> str:
    """Turn each ``[n]`` / ``[n, m]`` of escaped text into links to the references it names."""

    def link(m: re.Match[str]) -> str:
        parts = re.split(r"\s*([,;])\s*", m.group(1))
        if not all(int(p) in ids for p in parts[::2]):
            return m.group(0)  # an id the ledger lacks stays text: it must not look verified
        html = "".join(
            f'<a href="#ref-{int(p)}">{int(p)}</a>' if k % 2 == 0 else f"{p} "
            for k, p in enumerate(parts)
        )
        return f'<span class="cites">[{html}]</span>'

    return _CITE.sub(link, escaped)


def markdown_renderer(ids: Collection[int]) -> MarkdownIt:
    """CommonMark with tables and strikethrough; raw HTML escaped, images shown as their text."""
    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])

    def text(
        self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        return link_cites(escape(tokens[idx].content, quote=False), ids)

    def image(
        self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:  # the page loads nothing: an image is named, not shown
        alt = "".join(t.content for t in tokens[idx].children or [])
        return f'<span class="img-alt">[image: {escape(alt)}]</span>'

    def link_open(
        self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        tokens[idx].attrSet("rel", "noopener noreferrer")
        return str(self.renderToken(tokens, idx, options, env))

    md.add_render_rule("text", text)
    md.add_render_rule("image", image)
    md.add_render_rule("link_open", link_open)
    return md


def evidence_html(i: int, cite: Mapping[str, Any], titles: Mapping[int, str]) -> str:
    """The toggle and the (hidden) evidence box that follow cited sentence ``i``."""
    verdict = str(cite.get("verdict") or "unchecked")
    parts = [
        f'<span class="badge">{escape(verdict)}</span>{escape(VERDICT_WORDS.get(verdict, ""))}'
    ]
    quote, qsrc = str(cite.get("quote") or ""), cite.get("quote_source")
    if quote:
        where = ""
        if isinstance(qsrc, int) and qsrc in titles:
            where = f'source: <a href="#ref-{qsrc}">[{qsrc}] {escape(titles[qsrc])}</a>'
        parts.append(f"<q>{escape(quote)}</q>{where}")
    decided = DECIDED_WORDS.get(str(cite.get("decided_by") or "none"), "")
    dispute = cite.get("dispute")
    # A disputed verdict's story is told once, by its own line below.
    reason = "" if isinstance(dispute, Mapping) else str(cite.get("reason") or "")
    parts.append(
        f'<span class="why">{escape(decided)}{" — " if reason else ""}{escape(reason)}</span>'
    )
    overruled = isinstance(dispute, Mapping) and bool(dispute.get("overruled"))
    if isinstance(dispute, Mapping):
        parts.append(dispute_html(dispute))
    parts.append(weight_line(cite))
    original = str(cite.get("original") or "")
    if original and original != cite.get("sentence"):
        parts.append(f'<span class="was">As first written: “{escape(original)}”</span>')
    label = escape(
        f"evidence for this sentence: {verdict}"
        + (" (the judge model's verdict was overruled)" if overruled else "")
    )
    mark = " overruled" if overruled else ""
    button = (
        f'<button type="button" class="ev-toggle v-{escape(verdict)}{mark}" id="ev-btn-{i}" '
        f'aria-expanded="false" aria-controls="ev-{i}"><span aria-hidden="true">'
        f'{GLYPH.get(verdict, "?")}{OVERRULED if overruled else ""}</span><span class="sr">{label}</span></button>'
    )
    # The box's own text names the verdict: its label does not say it a second time.
    box = (
        f'<span class="evidence v-{escape(verdict)}" id="ev-{i}" role="note" '
        f'aria-label="evidence for this sentence" hidden>{"".join(parts)}</span>'
    )
    return button + box


def render_body(
    markdown: str, citations: Sequence[Mapping[str, Any]], titles: Mapping[int, str]
) -> tuple[str, list[int]]:
    """Render the report body; return its HTML and the citation indices it shows."""
    marked, placed = mark_sentences(unmarked(markdown), citations)
    html = markdown_renderer(titles).render(marked)

    def opening(m: re.Match[str]) -> str:
        i = int(m.group(1))
        verdict = escape(str(citations[i].get("verdict") or "unchecked"))
        return f'<span class="claim" id="claim-{i}" data-claim="{i}" data-verdict="{verdict}">'

    html = _START_TAG.sub(opening, html)
    html = _END_TAG.sub(
        lambda m: "</span>" + evidence_html(int(m.group(1)), citations[int(m.group(1))], titles),
        html,
    )
    return html, placed
