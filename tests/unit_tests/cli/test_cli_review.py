import io
from pathlib import Path

import pytest

from deskresearch.cli.review import answer_at_terminal
from deskresearch.errors import ConfigError
from deskresearch.session.review import answer_file

PLAN = {"queries": ["q"], "pages": [{"url": "https://a.example/"}, {"url": "https://b.example/"}]}


def test_typed_numbers_drop_those_pages_and_enter_accepts() -> None:
    assert answer_at_terminal(PLAN, io.StringIO("2\n")) == {"drop_urls": ["https://b.example/"]}
    assert answer_at_terminal(PLAN, io.StringIO("\n")) is True


@pytest.mark.parametrize("typed", ["3\n", "x\n"])
def test_a_bad_number_is_a_clear_error(typed: str) -> None:
    with pytest.raises(ConfigError, match="--review"):
        answer_at_terminal(PLAN, io.StringIO(typed))


@pytest.mark.parametrize(("text", "problem"), [
    (None, "cannot be read"), ("{", "is not JSON"), ('{"drop": []}', "is not an answer"),
])  # fmt: skip
def test_an_answer_file_is_checked_before_the_run(
    tmp_path: Path, text: str | None, problem: str
) -> None:
    path = tmp_path / "answer.json"
    if text is not None:
        path.write_text(text)
    with pytest.raises(
        ConfigError, match=f"the review answer .* \\(from the flag --review\\) {problem}"
    ):
        answer_file(str(path), "the flag --review")
    path.write_text('{"drop_urls": ["https://a.example/"]}')
    assert answer_file(str(path), "the flag --review") == {"drop_urls": ["https://a.example/"]}
