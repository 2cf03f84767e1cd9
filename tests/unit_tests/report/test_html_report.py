"""The HTML report: citation links, sentences matched to their evidence, escaping, self-containment."""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from deskresearch.config.context import Context
from deskresearch.grounding.citations import render_references
from deskresearch.nodes.finish_report import appendix
from deskresearch.records import Citation, Dispute, Opinion, Source
from deskresearch.report.html import render_html, split_report
from deskresearch.session.files import report_texts, write_files


class Page(HTMLParser):
    """The parsed page: every element with its attributes, and the text inside each id."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.text_in: dict[str, str] = {}
        self._open: list[tuple[str, str | None]] = []
        self.raw: dict[str, str] = {}  # script/style bodies
        self._raw_tag = ""
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {k: v or "" for k, v in attrs}
        self.elements.append((tag, attributes))
        if tag in ("script", "style"):
            self._raw_tag = tag
        if tag in ("td", "th", "li", "p", "h2", "h3", "summary", "div", "br"):
            self.handle_data(" ")  # cells and blocks read as separate words
        if tag not in ("meta", "br", "img", "input", "link"):
            self._open.append((tag, attributes.get("id")))
            if attributes.get("id"):
                self.text_in[attributes["id"]] = ""

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            if self._open.pop()[0] == tag:
                break
        self._raw_tag = ""

    def handle_data(self, data: str) -> None:
        if self._raw_tag:
            self.raw[self._raw_tag] = self.raw.get(self._raw_tag, "") + data
        for _, ident in self._open:
            if ident:
                self.text_in[ident] += data

    def ids(self) -> set[str]:
        return {a["id"] for _, a in self.elements if "id" in a}

    def find(self, tag: str = "", **attrs: str) -> list[dict[str, str]]:
        return [
            a
            for t, a in self.elements
            if (not tag or t == tag)
            and all(a.get(k.rstrip("_").replace("_", "-")) == v for k, v in attrs.items())
        ]


def source(sid: int, title: str = "", url: str = "", quote: str = "") -> Source:
    return Source(
        id=sid,
        url=url or f"https://example.org/{sid}",
        title=title or f"Page {sid}",
        site="example.org",
        published="2024-01-0" + str(sid),
        date_read="2026-01-02",
        queries=["q"],
        text_hash=f"h{sid}",
        origin="page",
        summary="s",
        facts=[{"claim": f"claim {sid}", "quote": quote or f"quote of page {sid}"}],
        round=1,
    )


def cite(sentence: str, verdict: str, ids: list[int], quote: str = "", **kw: Any) -> Citation:
    return Citation(
        sentence="" if verdict == "removed" else sentence,
        original=kw.get("original", sentence),
        sources=ids,
        verdict=verdict,  # type: ignore[typeddict-item]
        quote=quote,
        quote_source=ids[0] if quote else None,
        decided_by=kw.get("decided_by", "lexical"),
        reason=kw.get("reason", "its words are in the quote"),
        section=kw.get("section", "Findings"),
    )


BODY = """# Battery recycling

## Findings

Lithium recovery reached 80 percent in 2023 [1]. The plants
in Europe recycle cobalt as well [2].

- Nickel prices fell by a third [3].
- Recycling needs less energy than mining [1, 2].
- Recycling needs less energy than mining [1, 2].

| metal | rate |
| --- | --- |
| lithium | 80 percent [1] |

A sentence cites a source the ledger lacks [9].
"""


def result_for(
    sources: list[Source], citations: list[Citation], body: str = BODY
) -> dict[str, Any]:
    report = "\n\n".join(p for p in (body, render_references(sources), appendix(citations)) if p)
    return {
        "report": report + "\n",
        "status": "ok",
        "sources": sources,
        "citations": citations,
        "queries": ["battery recycling rates", "cobalt recovery"],
        "usage": [
            {
                "stage": "summarise_chunk",
                "model": "m",
                "input_tokens": 1200,
                "output_tokens": 30,
                "calls": 4,
                "cached_calls": 2,
            },
            {
                "stage": "judge_citations",
                "model": "j",
                "input_tokens": 300,
                "output_tokens": 70,
                "calls": 1,
            },
        ],  # fmt: skip
        "provenance": [
            {
                "stage": "read_page",
                "subject": "https://blocked.example",
                "outcome": "blocked",
                "reason": "captcha",
            },
            {
                "stage": "finish_report",
                "subject": "Cobalt is mined on the moon [2].",
                "outcome": "removed",
                "reason": "no source states it",
            },
        ],  # fmt: skip
    }


SOURCES = [source(1, quote="Lithium recovery reached 80 percent in 2023."), source(2), source(3)]
CITATIONS = [
    cite("Lithium recovery reached 80 percent in 2023 [1].", "supported", [1],
         "Lithium recovery reached 80 percent in 2023."),
    cite("The plants in Europe recycle cobalt as well [2].", "re-cited", [2], "cobalt as well",
         original="The plants in Europe recycle cobalt as well [3].", decided_by="model"),
    cite("Nickel prices fell by a third [3].", "rewritten", [3], "fell by a third",
         original="Nickel prices fell by half [3]."),
    cite("Recycling needs less energy than mining [1, 2].", "unchecked", [1, 2],
         decided_by="none", reason="the judge call failed"),
    cite("Recycling needs less energy than mining [1, 2].", "supported", [1, 2], "less energy"),
    cite("| lithium | 80 percent [1] |", "supported", [1], "80 percent"),
    cite("Cobalt is mined on the moon [2].", "removed", [2], reason="no source states it"),
]  # fmt: skip


def test_every_citation_link_resolves_to_a_reference() -> None:
    html = render_html(result_for(SOURCES, CITATIONS), topic="Battery recycling")
    page = Page(html)
    links = [a["href"] for a in page.find("a") if a.get("href", "").startswith("#")]
    assert links and all(href[1:] in page.ids() for href in links)
    cited = re.findall(r'<span class="cites">\[(.*?)\]</span>', html)
    # the body's [1], [2], [3], [1, 2] twice and the table's [1], then the appendix's removed
    # [2] and unchecked [1, 2]: every marker a link
    assert [re.findall(r'href="#ref-(\d+)"', c) for c in cited] == [
        ["1"],
        ["2"],
        ["3"],
        ["1", "2"],
        ["1", "2"],
        ["1"],
        ["2"],
        ["1", "2"],
    ]
    assert {f"ref-{s['id']}" for s in SOURCES} <= page.ids()
    assert "lacks [9]." in page.text_in["report"]
    assert "#ref-9" not in links, "an id the ledger lacks must not look like a reference"


def test_every_cited_sentence_is_one_element_with_its_verdict_and_evidence() -> None:
    page = Page(render_html(result_for(SOURCES, CITATIONS), topic="t"))
    for i, c in enumerate(CITATIONS):
        claims = page.find("span", id=f"claim-{i}")
        if c["verdict"] == "removed":
            assert not claims
            continue
        assert len(claims) == 1 and claims[0]["data-verdict"] == c["verdict"], c
        text = c["sentence"].split("|")[-2] if c["sentence"].startswith("|") else c["sentence"]
        assert " ".join(page.text_in[f"claim-{i}"].split()) == text.strip()
        [button] = page.find("button", aria_controls=f"ev-{i}")
        assert button["aria-expanded"] == "false"
        [box] = page.find(id=f"ev-{i}")
        assert "hidden" in box
        evidence = page.text_in[f"ev-{i}"]
        assert c["verdict"] in evidence and c["quote"] in evidence and c["reason"] in evidence
        assert evidence.lower().count(c["verdict"]) == 1, f"the verdict said once: {evidence}"
        assert c["verdict"] not in box["aria-label"]  # nor again in the name read out for it
        if c["original"] != c["sentence"]:
            assert c["original"] in evidence
    assert "Cobalt is mined on the moon" in page.text_in["citation-check"]
    assert "not located" not in "".join(page.text_in.values())


def test_an_overruled_verdict_shows_on_its_evidence_card() -> None:
    found = "the facts of [1] carry it (<b>5</b> of 6 words)"
    dispute = Dispute(judge="unsupported", judge_source=None, judge_quote="", found=found,
                      settled_by="asked_again", overruled=True,
                      asked_again=[Opinion(stage="repair_report", model="judge", answer="stated")])  # fmt: skip
    citations = [Citation(**{**CITATIONS[0], "decided_by": "model", "dispute": dispute}),
                 *CITATIONS[1:]]  # fmt: skip
    html = render_html(result_for(SOURCES, citations), topic="t")
    page = Page(html)
    card = " ".join(page.text_in["ev-0"].split())
    assert (
        "The judge model's verdict was overruled: it said “not stated by any source”; code "
        f"found {found}; asked again, differently: stated (judge model)." in card
    )
    assert card.lower().count("supported") == 1, "the verdict is still named once"
    [button] = page.find("button", aria_controls="ev-0")
    assert "overruled" in button["class"].split() and "overruled" in page.text_in["ev-btn-0"]
    assert "<b>5</b>" not in html, "code's finding quotes the page: it stays text"
    assert "overruled" not in page.text_in["ev-1"], "a verdict no one disputed says nothing"
    assert "overruled" in page.text_in["citation-check"], "and the appendix lists it"


def test_the_question_asked_is_shown_above_the_report_escaped() -> None:
    topic = "How are <b>EV</b> batteries recycled?"
    page = Page(render_html(result_for(SOURCES, CITATIONS), topic=topic))
    assert " ".join(page.text_in["question"].split()) == f"Question asked {topic}"
    order = [a.get("id") for _, a in page.elements if a.get("id") in ("question", "report")]
    assert order == ["question", "report"]
    assert "b" not in [t for t, _ in page.elements]  # the question is text, not markup
    assert "question" not in Page(render_html(result_for(SOURCES, CITATIONS), topic=" ")).ids()


def test_a_sentence_not_found_in_the_text_is_listed_not_dropped() -> None:
    lost = cite("A sentence the report does not contain [1].", "supported", [1], "x")
    page = Page(render_html(result_for(SOURCES, [*CITATIONS, lost]), topic="t"))
    assert "A sentence the report does not contain" in page.text_in["provenance"]
    assert not page.find(id=f"claim-{len(CITATIONS)}")


HOSTILE = '"><img src=x onerror=alert(1)><script>alert(2)</script>'


def test_hostile_page_and_model_text_stays_text() -> None:
    sources = [
        source(1, title=f"<script>alert('title')</script>{HOSTILE}", url="javascript:alert(3)",
               quote=HOSTILE),
        source(2, title="ok", url='https://a.example/"onmouseover="alert(4)'),
        source(3, title="ok", url="https://fine.example/path?a=1&b=2"),
    ]  # fmt: skip
    body = (
        f"# Report\n\n<script>alert(5)</script> and {HOSTILE} [1].\n\n"
        "[click](javascript:alert(6)) ![x](https://tracker.example/p.png) \ue0000\ue001 [2].\n"
    )
    citations = [cite(f"<script>alert(5)</script> and {HOSTILE} [1].", "supported", [1], HOSTILE)]
    result = result_for(sources, citations, body)
    result["provenance"][0]["subject"] = HOSTILE
    result["queries"] = [HOSTILE]
    html = render_html(result, topic=f"</title><script>alert(7)</script>{HOSTILE}")
    page = Page(html)
    tags = [t for t, _ in page.elements]
    assert tags.count("script") == 1 and "img" not in tags and "link" not in tags
    assert not [a for _, a in page.elements if any(k.startswith("on") for k in a)]
    hrefs = [a["href"] for a in page.find("a")]
    assert not [h for h in hrefs if not h.startswith(("#", "https://"))], hrefs
    assert "https://fine.example/path?a=1&b=2" in hrefs
    assert not [a for _, a in page.elements if "src" in a]
    assert "alert(5)" not in page.raw["script"] and "alert" not in page.raw["style"]
    assert HOSTILE in page.text_in["claim-0"] and HOSTILE in page.text_in["ev-0"]
    assert len(page.find("span", class_="claim")) == 1, (
        "marker characters in the text forge nothing"
    )


def test_the_page_loads_nothing_and_allows_only_its_own_style_and_script() -> None:
    page = Page(render_html(result_for(SOURCES, CITATIONS), topic="t"))
    [csp] = page.find("meta", http_equiv="Content-Security-Policy")
    policy = dict(p.strip().split(" ", 1) for p in csp["content"].split(";"))
    assert policy["default-src"] == "'none'" and policy["img-src"] == "'none'"

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    assert policy["script-src"] == digest(page.raw["script"])
    assert policy["style-src"] == digest(page.raw["style"])
    assert "@media print" in page.raw["style"]
    assert not re.search(r"url\(|@import|https?://", page.raw["style"] + page.raw["script"])


def test_the_appendix_shows_calls_tokens_and_what_was_dropped() -> None:
    page = Page(render_html(result_for(SOURCES, CITATIONS), topic="t"))
    text = " ".join(page.text_in["provenance"].split())
    assert "total 5 2 1,500 100" in text
    assert "captcha" in text and "https://blocked.example" in text and "no source states it" in text
    assert "cobalt recovery" in text


def test_split_report_finds_the_references_even_when_they_differ_from_the_ledger() -> None:
    report = "# T\n\nBody [1].\n\n## References\n\n[1] older rendering\n\n## Citation check\n\nX.\n"
    body, tail = split_report(report, [source(1)])
    assert body.strip() == "# T\n\nBody [1]." and tail.startswith("## Citation check")


def write_outputs(result: dict[str, Any], topic: str, out: Path, fmt: str) -> list[Path]:
    texts = report_texts(result, topic=topic, language=Context().language, fmt=fmt)
    return write_files(out, "battery-recycling", texts, lambda paths: {})


def test_write_outputs_writes_the_formats_asked_for(tmp_path: Path) -> None:
    result = result_for(SOURCES, CITATIONS)
    html_only = write_outputs(result, "Battery recycling", tmp_path / "a", "html")
    assert [p.name for p in html_only] == ["battery-recycling.html", "battery-recycling.json"]
    assert not (tmp_path / "a" / "battery-recycling.md").exists()
    both = write_outputs(result, "Battery recycling", tmp_path / "b", "md+html")
    assert [p.suffix for p in both] == [".md", ".html", ".json"]
    assert both[1].read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_an_insufficient_evidence_result_renders_without_references() -> None:
    result = {
        "report": "# Insufficient evidence: t\n\n## Pages considered\n\n- https://a.example: blocked\n",
        "status": "insufficient_evidence",
        "sources": [],
        "citations": [],
        "usage": [],
        "provenance": [],
        "queries": [],
    }
    page = Page(render_html(result, topic="t", language="German"))
    assert page.find("html", lang="de") and "references" not in page.ids()
    assert "https://a.example: blocked" in page.text_in["report"]
    assert "No model calls were made" in page.text_in["provenance"]
