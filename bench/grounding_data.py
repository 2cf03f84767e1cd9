"""The grounding benchmark's labelled cases: real pages, their facts, and report drafts.

``grounding_cases.json`` holds hand-written data: for each real page, (claim, quote) facts whose
quote is verbatim from the page's extracted text and whose claim is written in each report
language that uses the page (faithful translations for reports in another language); and for
each report, its language, its sources and its cited sentences, each labelled with its kind.
This module turns that into what the graph would hold after write_report: the ledger (Source
records), what was read of each page (PageDigest), and the draft.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

from deskresearch.grounding.draft import language_code
from deskresearch.grounding.quotes import find_quote
from deskresearch.records import Fact, Source
from deskresearch.safety.injection import remove_injections
from deskresearch.services.web.extract import extract_sync
from deskresearch.state import PageDigest
from deskresearch.text.clean import text_hash

ROOT = Path(__file__).resolve().parents[1]
CASES = Path(__file__).with_name("grounding_cases.json")
CORRECT = ("restated", "paraphrase", "combined", "translated")
FAULTS = ("wrong-source", "figure-changed", "figure-added")
PER_PARAGRAPH = 3  # sentences per paragraph of a draft
_CITE = re.compile(r"\[@(\w+)\]")


@dataclass(frozen=True)
class Page:
    """One real page as the product's extractor reads it."""

    key: str
    path: str
    title: str
    site: str
    published: str
    text: str
    language: str


@dataclass(frozen=True)
class Labelled:
    """One cited sentence of a draft, with its label."""

    report: str
    text: str  # as written in the draft, with [n] markers
    kind: str
    cites: tuple[int, ...]
    cross: bool  # written in another language than a page it cites (or the page that states it)
    true: int | None  # wrong-source: the source that does state it
    held_out: bool  # from a report written after the product was changed on the others

    @property
    def fault(self) -> bool:
        """Whether the sentence is a planted fault."""
        return self.kind in FAULTS


@dataclass(frozen=True)
class Report:
    """One report as write_report would leave it: ledger, pages read, draft, labels."""

    name: str
    topic: str
    language: str
    sources: list[Source]
    pages: list[PageDigest]
    draft: str
    sentences: list[Labelled]


class CaseError(ValueError):
    """The hand-written cases are inconsistent (a quote not in its page, a missing claim...)."""


@cache
def read_page(key: str, path: str) -> Page:
    """Extract one page with the product's extractor (trafilatura + language detection)."""
    body = (ROOT / path).read_bytes()
    found = extract_sync(body, url=f"https://{Path(path).stem}/", content_type="text/html")
    if found is None:
        raise CaseError(f"{path}: the extractor found no text")
    text, _ = remove_injections(found.text)
    return Page(key, path, found.title, found.site, found.published, text, found.language)


def _facts(raw: list[dict[str, str]], page: Page, lang: str, report: str) -> list[Fact]:
    facts = []
    for f in raw:
        if not find_quote(f["quote"], page.text):
            raise CaseError(f"{page.key}: quote not in the page: {f['quote'][:80]!r}")
        if lang not in f:
            raise CaseError(f"{report}: a fact of {page.key} has no claim in {lang!r}")
        facts.append(Fact(claim=f[lang], quote=f["quote"]))
    return facts


def _source(i: int, page: Page, facts: list[Fact], topic: str) -> tuple[Source, PageDigest]:
    url, read_on, hashed = (
        f"https://{Path(page.path).stem}/",
        date.today().isoformat(),
        text_hash(page.text),
    )
    source = Source(
        id=i, url=url, title=page.title, site=page.site, published=page.published,
        date_read=read_on, queries=[topic], text_hash=hashed, origin="page",
        summary="\n".join(f"- {f['claim']}" for f in facts), facts=facts, round=1,
    )  # fmt: skip
    digest = PageDigest(
        url=url, title=page.title, site=page.site, published=page.published, date_read=read_on,
        queries=[topic], text_hash=hashed, origin="page", facts=facts, order=i, text=page.text, round=1,
        language=page.language,
    )  # fmt: skip
    return source, digest


def _report(raw: dict[str, Any], cases: dict[str, Any]) -> Report:
    name, lang = raw["name"], language_code(raw["language"])
    ids = {key: i + 1 for i, key in enumerate(raw["sources"])}
    pages = {key: read_page(key, cases["pages"][key]) for key in raw["sources"]}
    ledger = [
        _source(ids[k], p, _facts(cases["facts"][k], p, lang, name), raw["topic"])
        for k, p in pages.items()
    ]

    def cite(m: re.Match[str]) -> str:
        if m.group(1) not in ids:
            raise CaseError(f"{name}: cites {m.group(1)!r}, not one of its sources")
        return f"[{ids[m.group(1)]}]"

    lines, labelled = [f"# {raw['topic']}", ""], []
    for section in raw["sections"]:
        lines += [f"## {section['heading']}", ""]
        texts = []
        for s in section["sentences"]:
            if s["kind"] not in CORRECT + FAULTS:
                raise CaseError(f"{name}: unknown kind {s['kind']!r}")
            keys = _CITE.findall(s["text"])
            true = s.get("true")
            if (s["kind"] == "wrong-source") != (true is not None) or true in keys:
                raise CaseError(f"{name}: 'true' must name the uncited source of a wrong-source")
            cross = any(pages[k].language != lang for k in [*keys, *([true] if true else [])])
            text = _CITE.sub(cite, s["text"])
            texts.append(text)
            cites, backer = tuple(ids[k] for k in keys), ids[true] if true else None
            held_out = bool(raw.get("held_out"))
            labelled.append(Labelled(name, text, s["kind"], cites, cross, backer, held_out))
        for at in range(0, len(texts), PER_PARAGRAPH):
            lines += [" ".join(texts[at : at + PER_PARAGRAPH]), ""]
    return Report(
        name=name,
        topic=raw["topic"],
        language=raw["language"],
        sources=[s for s, _ in ledger],
        pages=[p for _, p in ledger],
        draft="\n".join(lines).strip() + "\n",
        sentences=labelled,
    )


def load_reports(names: set[str] | None = None) -> list[Report]:
    """Every report of the cases (or those named), checked for consistency."""
    cases = json.loads(CASES.read_text(encoding="utf-8"))
    return [_report(r, cases) for r in cases["reports"] if not names or r["name"] in names]


@dataclass(frozen=True)
class Run:
    """What the graph did with one report."""

    report: str
    path: tuple[str, ...]  # the nodes that ran after the injected state, in order
    wall_s: float
    calls: dict[str, int]  # model calls by stage
    tokens: dict[str, tuple[int, int]]  # input and output tokens by stage
    citations: list[dict[str, Any]]


@dataclass(frozen=True)
class Outcome:
    """The verdict on one labelled sentence."""

    label: Labelled
    verdict: str
    decided_by: str
    sources: tuple[int, ...]
    reason: str
    sentence: str  # as the report has it now
    backed: bool | None  # whether the page it now cites states it (None: removed)
    dispute: dict[str, Any] | None = None  # the judge's verdict code disputed, and the outcome

    @property
    def kept(self) -> bool:
        """A correct sentence left as written, citing its true source(s), as checked or not."""
        return (
            not self.label.fault
            and self.verdict in ("supported", "unchecked")
            and self.sources == self.label.cites
            and " ".join(self.sentence.split()) == " ".join(self.label.text.split())
        )
