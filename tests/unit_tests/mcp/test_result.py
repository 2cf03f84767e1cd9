import json
from typing import Any

from deskresearch.grounding.citations import render_references
from deskresearch.mcp.result import MAX_RESULT_CHARS, compact
from deskresearch.records import Source


def source(i: int, url: str = "") -> Source:
    return Source(
        id=i, url=url or f"https://example.org/{i}", title=f"Page {i}", site="example.org",
        published="", date_read="2025-01-01", queries=["q"], text_hash=str(i), origin="page",
        summary="s" * 500, facts=[], round=1,
    )  # fmt: skip


def values(body: str, sources: list[Source], **kw: Any) -> dict[str, Any]:
    report = f"{body}\n\n{render_references(sources)}\n"
    return {"status": "ok", "reason": "", "topic": "t", "report": report, "sources": sources,
            "citations": [], "usage": [], **kw}  # fmt: skip


def test_a_short_report_comes_back_whole_with_only_the_cited_sources() -> None:
    ledger = [source(1), source(2), source(3)]
    out = compact(values("# R\n\nA fact [1]. Another [3].", ledger), thread_id="t1",
                  full_result="here")  # fmt: skip
    assert out.report.startswith("# R") and "## References" in out.report
    assert not out.report_truncated and out.report_chars == len(out.report)
    assert [s.id for s in out.sources] == [1, 3] and out.sources_read == 3
    assert "s" * 500 not in out.model_dump_json()  # the ledger's summaries stay out


def test_a_long_report_loses_its_references_then_is_cut_at_a_paragraph_within_the_bound() -> None:
    paragraphs = [f'Paragraph {i} says "quoted" things [{i % 5 + 1}]. ' * 8 for i in range(60)]
    body = "# Long\n\n" + "\n\n".join(paragraphs)
    full = values(body, [source(i) for i in range(1, 6)])
    out = compact(full, thread_id="t1", full_result="here")
    text = out.model_dump_json()
    assert len(text) <= MAX_RESULT_CHARS
    assert out.report_truncated and out.report_chars == len(full["report"]) > 15_000
    assert "## References" not in out.report
    kept = out.report.rsplit("\n\n[… shortened", 1)[0]
    assert body.startswith(kept)  # whole paragraphs, cut at a paragraph boundary
    assert kept.endswith(". ") is False and kept.endswith("].")
    assert "deskresearch://report/t1" in out.report and out.report_uri == "deskresearch://report/t1"


def test_a_report_that_fits_without_its_references_keeps_its_whole_body() -> None:
    body = "# R\n\n" + "Claim [1]. " * 500
    ledger = [source(i, url="https://example.org/" + "x" * 300 + str(i)) for i in range(1, 20)]
    out = compact(values(body, ledger), thread_id="t", full_result="f")
    assert out.report_truncated and out.report.strip() == body.strip()
    assert len(out.model_dump_json()) <= MAX_RESULT_CHARS


def test_many_long_cited_sources_never_push_the_result_over_the_bound() -> None:
    ledger = [source(i, url="https://example.org/" + "y" * 900 + str(i)) for i in range(1, 40)]
    body = "# R\n\n" + " ".join(f"Claim [{i}]." for i in range(1, 40))
    out = compact(values(body, ledger), thread_id="t", full_result="f")
    assert len(out.model_dump_json()) <= MAX_RESULT_CHARS
    assert 0 < len(out.sources) < 39 and out.report  # the last sources went, the report stayed


def test_the_citation_check_and_the_cost_are_counted() -> None:
    cites = [{"verdict": v} for v in ("supported", "supported", "re-cited", "removed", "unchecked")]
    usage = [{"stage": "s", "model": "gpt-4o-mini", "input_tokens": 1_000_000, "output_tokens": 0,
              "calls": 3}]  # fmt: skip
    out = compact(values("# R [1]", [source(1)], citations=cites, usage=usage), thread_id="t",
                  full_result="f")  # fmt: skip
    c = out.citations
    assert (c.checked, c.supported, c.re_cited, c.removed, c.unchecked) == (4, 2, 1, 1, 1)
    assert c.summary == "4 checked · 2 supported · 1 re-cited · 1 removed · 1 unchecked"
    assert out.cost.model_calls == 3 and out.cost.estimated_cost_usd == 0.15
    assert json.loads(out.model_dump_json())["citations"]["re_cited"] == 1
