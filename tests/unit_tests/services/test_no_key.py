"""What the pre-flight says when a run's models go to OpenAI's API without a key (services.preflight)."""

from __future__ import annotations

import pytest

from deskresearch.config.context import Context
from deskresearch.errors import NO_ENDPOINT, ConfigError
from deskresearch.services.preflight import check_local, no_key_for


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({}, NO_ENDPOINT),  # nothing set at all: the general advice
        (
            {"summary_model": "ollama:llama3.1"},
            "the report model gpt-4o goes to OpenAI's API (the default), which needs OPENAI_API_KEY, "
            "while the summary model is ollama:llama3.1: set OPENAI_API_KEY, or put it on that "
            "server too (--report-model ollama:llama3.1)",
        ),
        (
            {"report_model": "lmstudio:qwen"},
            "the summary model gpt-4o-mini goes to OpenAI's API (the default), which needs "
            "OPENAI_API_KEY, while the report model is lmstudio:qwen: set OPENAI_API_KEY, or put it "
            "on that server too (--summary-model lmstudio:qwen)",
        ),
        (
            {"summary_model": "ollama:llama3.1", "judge_model": "gpt-4o"},
            "the report model gpt-4o and the judge model gpt-4o go to OpenAI's API (the default), "
            "which needs OPENAI_API_KEY, while the summary model is ollama:llama3.1: set "
            "OPENAI_API_KEY, or put them on that server too (--report-model ollama:llama3.1 "
            "--judge-model ollama:llama3.1)",
        ),
    ],
)
def test_a_model_left_on_openai_without_a_key_is_named_with_the_fix(
    settings: dict[str, str], said: str
) -> None:
    assert no_key_for(Context(**settings), {}) == said  # type: ignore[arg-type]
    with pytest.raises(ConfigError) as caught:
        check_local(Context(**settings), output_dir=None, checkpoints=None, environ={})  # type: ignore[arg-type]
    assert str(caught.value) == said


def test_a_model_asked_of_openai_by_name_is_not_moved() -> None:
    ctx = Context(summary_model="openai:gpt-4o-mini", report_model="ollama:qwen")
    said = no_key_for(ctx, {})
    assert said == (
        "the summary model gpt-4o-mini goes to OpenAI's API, which needs OPENAI_API_KEY: set it"
    )


def test_a_judge_that_checks_nothing_is_not_named() -> None:
    ctx = Context(summary_model="ollama:llama3.1", judge_model="gpt-4o", check_citations=False)
    assert "judge" not in no_key_for(ctx, {})


def test_a_key_or_a_server_for_all_says_nothing() -> None:
    local = "ollama:llama3.1"
    for ctx, env in [(Context(summary_model="ollama:llama3.1"), {"OPENAI_API_KEY": "sk-x"}),
                     # the README's local run: the judge (empty) is the summary model, not OpenAI
                     (Context(summary_model=local, report_model=local), {}),
                     (Context(summary_model=local, report_model=local, judge_model="gpt-4o",
                              check_citations=False), {}),  # a judge that never runs
                     (Context(base_url="http://localhost:11434/v1"), {}),
                     (Context(), {"OPENAI_BASE_URL": "http://localhost:8080/v1"})]:  # fmt: skip
        check_local(ctx, output_dir=None, checkpoints=None, environ=env)
