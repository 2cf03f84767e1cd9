from typing import Any

import pytest

from deskresearch.errors import ConfigError
from deskresearch.nodes.review_plan import dropped_by
from deskresearch.session.review import checked


def tasks() -> list[Any]:
    return [
        {"url": "https://a.example/1", "queries": ["q1"]},
        {"url": "https://b.example/2", "queries": ["q1", "q2"]},
        {"url": "https://c.example/3", "queries": ["q2"]},
    ]


@pytest.mark.parametrize("answer", [True, None, "accept", {}])
def test_accepting_drops_nothing(answer: object) -> None:
    assert dropped_by(answer, tasks()) == set()


def test_drop_keep_and_drop_queries() -> None:
    assert dropped_by({"drop_urls": ["https://a.example/1?utm_source=x"]}, tasks()) == {
        "https://a.example/1"
    }
    assert dropped_by({"keep_urls": ["https://c.example/3"]}, tasks()) == {
        "https://a.example/1",
        "https://b.example/2",
    }
    # b serves q1 too, so dropping q2 leaves it in
    assert dropped_by({"drop_queries": ["q2"]}, tasks()) == {"https://c.example/3"}


@pytest.mark.parametrize("answer", ["no", {"remove": []}, 3])
def test_an_unknown_answer_names_the_accepted_shapes(answer: object) -> None:
    with pytest.raises(ConfigError, match="drop_urls, keep_urls or drop_queries"):
        dropped_by(answer, tasks())


@pytest.mark.parametrize(
    "answer",
    [{"keep_urls": 5}, {"keep_urls": [1]}, {"drop_queries": [["q1"]]}, {"drop_urls": "abc"}],
)
def test_an_answer_whose_lists_are_not_lists_of_text_is_not_understood(answer: object) -> None:
    with pytest.raises(ConfigError, match="lists of text"):
        dropped_by(answer, tasks())


@pytest.mark.parametrize("answer", [True, None, "accept", {}])
def test_every_way_to_accept_resumes_the_run_with_true(answer: object) -> None:
    assert checked(answer, "the answer") is True  # LangGraph fails on None, asks again on {}


def test_a_shaped_answer_is_passed_on_as_it_is() -> None:
    assert checked({"keep_urls": ["u"]}, "the answer") == {"keep_urls": ["u"]}
    with pytest.raises(ConfigError, match="the answer is not an answer: give this"):
        checked("maybe", "the answer", "give this")
