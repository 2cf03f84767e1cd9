"""The HTML report's view of the weighed evidence: origins and dates, disagreements, changes.

A cited sentence's evidence card says how many independent origins stand behind it (copies of
one text count once) and when its sources were published; a reference that copies another says
so; one panel sets out each disagreement with both sides' evidence (their words, their sources
and dates), and each figure that changed over time. Everything here is escaped: values, claims
and quotes are the pages' words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from deskresearch.text.plural import plural


def _dates(published: Sequence[Any]) -> str:
    known = sorted({str(p) for p in published if p})
    if not known:
        return "undated"
    return "published " + ", ".join(known)


def weight_line(cite: Mapping[str, Any]) -> str:
    """One line for an evidence card: its independent origins and its sources' dates."""
    if "origins" not in cite:  # a result written before weighing existed
        return ""
    origins = int(cite.get("origins") or 0)
    pages = len(cite.get("sources") or [])
    if cite.get("verdict") == "unchecked":  # what it cites, not what was found to state it
        said = plural(origins, "independent origin") + " cited, not checked"
    else:
        said = plural(origins, "independent origin") + (
            " state it" if origins != 1 else " states it"
        )
    if pages > origins and cite.get("verdict") != "removed":
        said += f" (of {plural(pages, 'source')} cited: copies of one text count once)"
    return f'<span class="weight">{escape(said)} · {escape(_dates(cite.get("published") or []))}</span>'


def copy_note(source: Mapping[str, Any]) -> str:
    """What a reference says when it copies another source ("" for an original)."""
    of = source.get("copy_of")
    if not isinstance(of, int):
        return ""
    why = str(source.get("copy_reason") or "")
    text = f"one origin with [{of}]" + (f": {why}" if why else "")
    return f'<span class="copy">{escape(text)}</span>'


def _ref(i: int, titles: Mapping[int, str]) -> str:
    title = titles.get(i, "")
    return f'<a href="#ref-{i}">[{i}]</a>' + (f" {escape(title)}" if title else "")


def _side(side: Mapping[str, Any], titles: Mapping[int, str], label: str = "") -> str:
    sources = [int(i) for i in side.get("sources") or []]
    dates = [str(d) for d in side.get("published") or []]
    refs = "; ".join(
        f"{_ref(i, titles)} ({escape(d) if d else 'undated'})"
        for i, d in zip(sources, dates + [""] * len(sources), strict=False)
    )
    origins = plural(int(side.get("origins") or 0), "independent origin")
    head = f"{escape(label)} " if label else ""
    return (
        f'<li class="side">{head}<strong class="value">{escape(str(side.get("value", "")))}'
        f"</strong> — {escape(str(side.get('claim', '')))}<q>{escape(str(side.get('quote', '')))}"
        f'</q><span class="who">{refs} · {escape(origins)}</span></li>'
    )


def weighing_html(result: Mapping[str, Any], titles: Mapping[int, str]) -> str:
    """The panel of disagreements and changes over time ("" when the run found none)."""
    parts = []
    for d in result.get("disagreements") or []:
        sides = "".join(_side(s, titles) for s in d.get("sides") or [])
        checked = "" if d.get("checked") else ' <span class="why">(not checked)</span>'
        parts.append(
            f'<li class="disagreement"><span class="about">{escape(str(d.get("about", "")))}'
            f"</span>{checked}<ul>{sides}</ul></li>"
        )
    changes = []
    for c in result.get("changes") or []:
        now = c.get("current") or {}
        rows = _side(now, titles, f"as of {now.get('as_of') or 'the latest source'}:")
        rows += "".join(
            _side(s, titles, f"in {s.get('as_of') or 'an earlier year'}:")
            for s in c.get("earlier") or []
        )
        changes.append(
            f'<li class="change"><span class="about">{escape(str(c.get("about", "")))}</span>'
            f"<ul>{rows}</ul></li>"
        )
    if not parts and not changes:
        return ""
    html = '<section id="weighing"><h2>The evidence weighed</h2>'
    if parts:
        html += (
            "<h3>Where independent sources disagree: both sides</h3>"
            f'<ol class="disagreements">{"".join(parts)}</ol>'
        )
    if changes:
        html += (
            "<h3>Figures that changed over time: the newest is current</h3>"
            f'<ol class="changes">{"".join(changes)}</ol>'
        )
    return html + "</section>"
