"""Evidence-weighing cases: fictional pages with copies, disagreements, old and new figures.

Each case of ``bench/evidence_cases.json`` is a question and pages written for it (invented
names, so nothing can come from a model's memory): a press release and its reprints, two
independent pages giving different values for one thing, a figure from 2018 and one from 2025,
and agreeing pages as controls (the same figure rounded, in other units, or of another scope).
``score`` reads a run's result against what the case expects; the fake model that weighs them
follows generic rules (tests/support/fake_model.py ``compare``), never the expectations.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.loopback import FakeWeb, written_web

CASES_FILE = Path(__file__).parents[2] / "bench" / "evidence_cases.json"


@dataclass(frozen=True)
class Page:
    """One written page of a case."""

    path: str
    title: str
    site: str
    published: str
    paragraphs: list[str]

    def html(self, language: str) -> bytes:
        """The page as a publisher would serve it: its date and site in the metadata."""
        meta = f'<meta property="og:site_name" content="{html.escape(self.site)}">'
        if self.published:
            meta += f'<meta property="article:published_time" content="{self.published}">'
        body = "".join(f"<p>{html.escape(p)}</p>" for p in self.paragraphs)
        return (
            f'<html lang="{language[:2].lower()}"><head><title>{html.escape(self.title)}</title>'
            f"{meta}</head><body><article><h1>{html.escape(self.title)}</h1>{body}</article>"
            "</body></html>"
        ).encode()


@dataclass(frozen=True)
class Case:
    """A question, its pages, and what weighing them should find."""

    id: str
    language: str
    question: str
    pages: list[Page]
    expect: dict[str, Any] = field(default_factory=dict)


def load_cases() -> list[Case]:
    """Every case of the benchmark file."""
    raw: list[dict[str, Any]] = json.loads(CASES_FILE.read_text(encoding="utf-8"))
    return [Case(**{**c, "pages": [Page(**p) for p in c["pages"]]}) for c in raw]


def evidence_web(cases: list[Case], **kw: Any) -> FakeWeb:
    """A loopback web serving the cases' pages among the fixture pages, searched by content."""
    return written_web(cases, **kw)


def _path(url: str) -> str:
    return re.sub(r"^https?://[^/]+", "", url).split("?")[0].split("#")[0]


@dataclass
class Score:
    """What one run got right and wrong against its case."""

    copies: list[bool] = field(default_factory=list)  # per expected group: grouped, alone
    surfaced: list[bool] = field(default_factory=list)  # per expected disagreement
    false: list[str] = field(default_factory=list)  # disagreements the case does not have
    current: list[bool] = field(default_factory=list)  # per expected change
    missing_sources: list[str] = field(default_factory=list)  # case pages that were not read


def _sentences(report: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+|\n", report) if s.strip()]


def _cites(sentence: str) -> set[int]:
    return {int(n) for n in re.findall(r"\[(\d+)\]", sentence)}


def score(case: Case, result: dict[str, Any]) -> Score:
    """Read a run's result (the JSON document) against the case's expectations."""
    out = Score()
    sources = result.get("sources") or []
    by_path = {_path(s["url"]): s for s in sources}
    ids = {sid: _path(s["url"]) for s in sources for sid in [s["id"]]}
    report = str(result.get("report") or "")
    expect = case.expect
    out.missing_sources = [p.path for p in case.pages if p.path not in by_path]
    for group in expect.get("copies", []):
        found = [by_path[p].get("origin_group") for p in group if p in by_path]
        others = {by_path[p].get("origin_group") for p in expect.get("independent", [])
                  if p in by_path}  # fmt: skip
        out.copies.append(len(found) == len(group) and len(set(found)) == 1
                          and found[0] not in others)  # fmt: skip
    matched: set[int] = set()
    for want in expect.get("disagreements", []):
        hit = False
        for n, d in enumerate(result.get("disagreements") or []):
            paths = [{ids.get(i, "") for i in side["sources"]} for side in d["sides"]]
            if all(any(set(w) <= p for p in paths) for w in want["sides"]):
                cited = all(
                    any(_cites(s) & set(side["cites"]) and side["claim"][:30] in s
                        for s in _sentences(report))
                    for side in d["sides"]
                )  # fmt: skip
                hit = hit or cited
                matched.add(n)
        out.surfaced.append(hit)
    out.false = [d["about"] for n, d in enumerate(result.get("disagreements") or [])
                 if n not in matched]  # fmt: skip
    for want in expect.get("changes", []):
        now, was = want["current"], want["earlier"]
        now_id = by_path.get(now["path"], {}).get("id")
        said_now = [s for s in _sentences(report) if now["value"] in s and now_id in _cites(s)]
        current = bool(said_now) and not any(w["year"] in s for s in said_now for w in was)
        for w in was:
            wid = by_path.get(w["path"], {}).get("id")
            said = [s for s in _sentences(report) if w["value"] in s and wid in _cites(s)]
            current = current and all(w["year"] in s for s in said)
        out.current.append(current)
    return out
