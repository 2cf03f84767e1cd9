"""The evidence card's weight line: what states a sentence, not what it merely cites."""

from deskresearch.report.html_weighing import weight_line


def test_a_checked_sentence_counts_the_origins_that_state_it() -> None:
    line = weight_line({"verdict": "supported", "origins": 1, "sources": [1, 3, 4],
                        "published": ["2025-03-10", "", "2025-03-11"]})  # fmt: skip
    assert "1 independent origin states it (of 3 sources cited" in line


def test_an_unchecked_sentence_says_its_origins_are_cited_not_checked() -> None:
    line = weight_line({"verdict": "unchecked", "origins": 2, "sources": [1, 2], "published": []})
    assert "2 independent origins cited, not checked" in line and "state" not in line
