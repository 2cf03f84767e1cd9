"""Multi-hop research cases: questions whose answer is one or two pages away from the question.

Each case (``bench/multihop_cases.json``) has written pages: the first is found by the question's
own words; each next one only by searching the name the page before mentions (its words share
none with the question), and the last states the answer. The loopback web serves them among the
real fixture pages, with a search that ranks pages by the words they share with the query.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.fake_reflect import words
from tests.support.loopback import FakeWeb, written_web

CASES_FILE = Path(__file__).parents[2] / "bench" / "multihop_cases.json"


@dataclass(frozen=True)
class Page:
    """One written page of a case."""

    path: str
    title: str
    paragraphs: list[str]

    def html(self, language: str) -> bytes:
        body = "".join(f"<p>{html.escape(p)}</p>" for p in self.paragraphs)
        return (
            f'<html lang="{language}"><head><title>{html.escape(self.title)}</title></head>'
            f"<body><article><h1>{html.escape(self.title)}</h1>{body}</article></body></html>"
        ).encode()


@dataclass(frozen=True)
class Case:
    """A question, its answer, and the chain of pages that leads to it."""

    id: str
    language: str
    hops: int
    question: str
    answer: str
    pages: list[Page]

    def answered_in(self, report: str, sources: list[dict[str, Any]]) -> bool:
        """The answer in a cited sentence whose cited source's page states it."""
        texts = {p.path: " ".join(p.paragraphs) for p in self.pages}
        return cited_answer(report, sources, texts, self.answer)

    def hidden_pages(self) -> list[Page]:
        """The pages after the first: reachable only through the names the chain mentions."""
        return self.pages[1:]


def load_cases() -> list[Case]:
    """Every case of the benchmark file."""
    raw: list[dict[str, Any]] = json.loads(CASES_FILE.read_text(encoding="utf-8"))
    return [Case(**{**c, "pages": [Page(**p) for p in c["pages"]]}) for c in raw]


def case(case_id: str) -> Case:
    """One case by id."""
    return next(c for c in load_cases() if c.id == case_id)


def hop_web(cases: list[Case], **kw: Any) -> FakeWeb:
    """A loopback web serving the cases' pages among the fixture pages, searched by content."""
    return written_web(cases, **kw)


def overlap(c: Case) -> dict[str, set[str]]:
    """The question's words each hidden page shares (must be none: the case's premise)."""
    asked = words(c.question)
    return {p.path: asked & words(" ".join([p.title, *p.paragraphs])) for p in c.hidden_pages()}


def cited_answer(
    report: str, sources: list[dict[str, Any]], texts: dict[str, str], answer: str
) -> bool:
    """Whether a sentence of ``report`` states ``answer`` and cites a source whose page states it."""
    by_id = {s["id"]: s["url"] for s in sources}
    for sentence in re.split(r"(?<=[.!?])\s+|\n", report):
        if answer not in sentence:
            continue
        for cited in re.findall(r"\[(\d+)\]", sentence):
            url = by_id.get(int(cited), "")
            path = re.sub(r"^https?://[^/]+", "", url)
            if answer in texts.get(path, ""):
                return True
    return False
