"""A count with its noun, singular only for one."""

from deskresearch.text.plural import plural


def test_one_is_singular_every_other_count_is_plural() -> None:
    assert plural(1, "topic") == "1 topic"
    assert [plural(n, "topic") for n in (0, 2, 11)] == ["0 topics", "2 topics", "11 topics"]
    assert (
        plural(1, "query", "queries") == "1 query" and plural(3, "query", "queries") == "3 queries"
    )
    assert plural(1, "cited sentence") == "1 cited sentence"
