"""A page's publication date: what it states (metadata, a dateline, its URL), never a date it cites."""

import pytest

from deskresearch.services.web.dates import dateline, url_date
from deskresearch.services.web.extract import extract_sync
from tests.support.dated import article
from tests.support.engines import make_pdf
from tests.support.hostile import PAGES

BODY = "Battery recycling plants in Europe recovered more lithium this year than ever before. "


@pytest.mark.parametrize(("head", "expected"), [
    ("BERLIN, 3 February 2025 — The ministry announced new rules.", "2025-02-03"),
    ("GENEVA (Reuters) - 4 April 2023 - The agency said", "2023-04-04"),
    ("---\ntitle: Report\ndate: 2024-03-01\n---\n# Report", "2024-03-01"),
    ("Published: 12 March 2024 at 10:00", "2024-03-12"),
    ("By Jane Doe | 5 January 2023 | 4 min read", "2023-01-05"),
    ("Veröffentlicht am 3. Februar 2025", "2025-02-03"),
    ("Publié le 7 mars 2022", "2022-03-07"),
    ("Tuesday, March 12, 2024", "2024-03-12"),
    ("*12 March 2024*", "2024-03-12"),
    # Not a statement of when the page was published:
    ("The directive of 12 March 1998 set targets for battery recycling.", ""),
    ("# Battery recycling in 2024\nText about the 12 March 1998 law.", ""),
    ("March 2024", ""),  # a month is no day
    ("© 2019 Example Org", ""),  # htmldate would say 2019-01-01
    ("03/12/2024", ""),  # March or December?
    ("Since 12 March 2024", ""),  # a span, not a day
    ("Published since 3 May 2021: the quarterly figures", ""),
    ("12 people died on 3 March 2024", ""),  # a sentence with a date in it
    ("Date of the next meeting to be announced, 3 March 2024", ""),
    ("Updated 3 May 2024", "2024-05-03"),
    ("Published by Reuters, 3 May 2024", "2024-05-03"),
    ("Posted by Jane Doe on 3 May 2024", "2024-05-03"),
    ("12. März 2024, 10:30", "2024-03-12"),
])  # fmt: skip
def test_dateline_reads_a_date_the_head_states_and_nothing_else(head: str, expected: str) -> None:
    assert dateline(f"{head}\n\n{BODY}") == expected


def test_a_date_past_the_head_is_not_a_dateline() -> None:
    assert dateline("\n".join([BODY] * 6 + ["Published: 12 March 2024"])) == ""


@pytest.mark.parametrize(("url", "expected"), [
    ("https://news.example/2023/05/17/story.html", "2023-05-17"),
    ("file:///corpus/2024-03-01-minutes.md", "2024-03-01"),
    ("https://news.example/2024/03/story", ""),  # a month is no day
    ("https://news.example/id/20240301123", ""),
    ("https://news.example/2999/01/01/story", ""),  # not after today
])  # fmt: skip
def test_url_date_reads_full_dates_only(url: str, expected: str) -> None:
    assert url_date(url) == expected


@pytest.mark.parametrize(("kind", "expected"), [
    ("meta", "2024-02-03"),
    ("jsonld", "2023-11-20"),
    ("dateline", "2025-02-03"),
    ("none", ""),
])  # fmt: skip
def test_html_pages_get_their_date_normalised(kind: str, expected: str) -> None:
    page = extract_sync(article(kind), url="http://127.0.0.1:1/x", content_type="text/html")
    assert page is not None and page.published == expected


def test_an_html_page_without_metadata_is_dated_by_its_url() -> None:
    page = extract_sync(article("none"), url="https://news.example/2022/10/04/lithium",
                        content_type="text/html")  # fmt: skip
    assert page is not None and page.published == "2022-10-04"


def test_a_page_that_only_mentions_old_dates_stays_undated() -> None:
    """htmldate's free-text search would date it 1998 (and drop it under any since)."""
    page = extract_sync(article("cites-1998"), url="http://127.0.0.1:1/x", content_type="text/html")
    assert page is not None and page.published == ""


def test_plain_text_markdown_and_pdf_get_a_dateline_or_url_date() -> None:
    text = f"---\ndate: 2024-03-01\n---\n# Minutes\n\n{BODY}"
    md = extract_sync(text.encode(), url="file:///c/minutes.md", content_type="text/markdown")
    assert md is not None and md.published == "2024-03-01"
    plain = extract_sync(BODY.encode(), url="file:///c/2021-06-07-notes.txt",
                         content_type="text/plain")  # fmt: skip
    assert plain is not None and plain.published == "2021-06-07"
    pdf = make_pdf(f"Brussels, 9 May 2023 - The Commission reported.\n{BODY}", "Report")
    doc = extract_sync(pdf, url="http://127.0.0.1:1/report.pdf", content_type="application/pdf")
    assert doc is not None and doc.published == "2023-05-09"


def test_real_pages_keep_their_metadata_dates() -> None:
    """The fixture pages of real sites: the same dates as trafilatura's default search gives."""
    expected = {"heise.de.lithium.html": "2019-06-20", "zeit.de.zugverkehr.html": "2020-01-14",
                "laviedesidees.fr.evaluation.html": "2009-09-15"}  # fmt: skip
    for name, day in expected.items():
        page = extract_sync((PAGES / name).read_bytes(), url="http://127.0.0.1:1/p",
                            content_type="text/html")  # fmt: skip
        assert page is not None and page.published == day, name
