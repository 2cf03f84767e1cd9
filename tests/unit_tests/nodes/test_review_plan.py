from typing import Any

import pytest

from deskresearch.errors import ConfigError
from deskresearch.nodes.review_plan import dropped_by


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
