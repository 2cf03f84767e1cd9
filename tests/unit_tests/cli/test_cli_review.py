import io

import pytest

from deskresearch.cli.review import answer_from
from deskresearch.errors import ConfigError

PLAN = {"queries": ["q"], "pages": [{"url": "https://a.example/"}, {"url": "https://b.example/"}]}


def test_typed_numbers_drop_those_pages_and_enter_accepts() -> None:
    assert answer_from(PLAN, "-", io.StringIO("2\n")) == {"drop_urls": ["https://b.example/"]}
    assert answer_from(PLAN, "-", io.StringIO("\n")) is True


@pytest.mark.parametrize("typed", ["3\n", "x\n"])
def test_a_bad_number_is_a_clear_error(typed: str) -> None:
    with pytest.raises(ConfigError, match="--review"):
        answer_from(PLAN, "-", io.StringIO(typed))
