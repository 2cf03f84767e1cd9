from deskresearch.grounding.citations import (
    clean_citations,
    render_references,
    strip_model_references,
)
from deskresearch.records import Source


def test_clean_citations_removes_unknown_ids_and_keeps_known_ones() -> None:
    cleaned = clean_citations("A [1]. B [7]. C [2, 9]. D [3](http://x) E", {1, 2})
    assert cleaned.text == "A [1]. B. C [2]. D [3](http://x) E"
    assert cleaned.cited == [1, 2]
    assert cleaned.removed == [7, 9]


def test_clean_citations_reports_no_citation() -> None:
    assert clean_citations("nothing cited here", {1}).cited == []


def test_strip_model_references_drops_a_trailing_reference_list() -> None:
    text = "# T\n\nBody [1].\n\n## Quellen\n\n[1] Foo <https://a.org>\n[2] Bar https://b.org\n"
    assert strip_model_references(text) == "# T\n\nBody [1]."


def test_strip_model_references_keeps_a_final_numbered_section() -> None:
    text = "# T\n\n## Recommendations\n\n1. Recycle more [1].\n2. Regulate [2].\n"
    assert strip_model_references(text) == text.strip()


def test_render_references_lists_every_source_with_url_and_date_read() -> None:
    src = Source(
        id=1,
        url="https://a.org",
        title="A",
        site="Site",
        published="2020-01-01",
        date_read="2026-01-02",
        queries=["q"],
        text_hash="h",
        origin="snippet",
        summary="s",
        facts=[],
        round=1,
    )
    refs = render_references([src])
    assert (
        "[1] A. Site. published 2020-01-01. <https://a.org> (search snippet only 2026-01-02)"
        in refs
    )
