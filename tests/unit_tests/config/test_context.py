from typing import Any, cast

import pytest
from langgraph.runtime import Runtime

from deskresearch.config.context import Context, field_description, field_names, resolve
from deskresearch.errors import ConfigError
from deskresearch.served import graph


def test_from_env_reads_prefixed_variables_and_overrides_win() -> None:
    env = {"DESKRESEARCH_URL_PER_QUERY": "7", "DESKRESEARCH_LANGUAGE": "German"}
    ctx = Context.from_env(env, language="fr")
    assert ctx.url_per_query == 7
    assert ctx.language == "fr"


def test_from_env_names_the_variable_and_range_of_a_bad_value() -> None:
    with pytest.raises(ConfigError) as err:
        Context.from_env({"DESKRESEARCH_DECOMPOSITION_NUMS": "0"})
    assert "decomposition_nums" in str(err.value)
    assert "DESKRESEARCH_DECOMPOSITION_NUMS" in str(err.value)
    assert "greater than or equal to 1" in str(err.value)


def test_from_env_rejects_unknown_search_backend() -> None:
    with pytest.raises(ConfigError, match="search"):
        Context.from_env({"DESKRESEARCH_SEARCH": "bing"})


def test_every_field_has_a_description_in_the_studio_schema() -> None:
    schema = graph.get_context_jsonschema()
    assert schema is not None
    props = schema["properties"]
    assert set(props) == set(field_names())
    for name in field_names():
        assert props[name].get("description"), name
        assert field_description(name) == props[name]["description"]
    assert props["url_per_query"]["maximum"] == 20


def test_resolve_reads_env_when_caller_passed_no_context(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESKRESEARCH_MAX_KEYWORDS", "3")
    assert resolve(Runtime(context=cast(Any, None))).max_keywords == 3
    assert resolve(Runtime(context=Context(max_keywords=5))).max_keywords == 5


def test_resolve_validates_a_plain_dict_context() -> None:
    with pytest.raises(ConfigError, match="url_per_query"):
        resolve(Runtime(context={"url_per_query": 99}))  # type: ignore[arg-type]


def test_provider_prefix_picks_the_servers_usual_url_and_base_url_still_wins() -> None:
    ollama = Context(summary_model="ollama:llama3.1:8b").summary_spec()
    assert (ollama.model, ollama.base_url) == ("llama3.1:8b", "http://localhost:11434/v1")
    tagged = Context(summary_model="llama3.1:8b").summary_spec()
    assert (tagged.model, tagged.base_url) == ("llama3.1:8b", "")
    openai = Context(report_model="openai:gpt-4o").report_spec()
    assert (openai.model, openai.base_url) == ("gpt-4o", "")
    mine = Context(summary_model="vllm:Qwen/Qwen2.5-7B", base_url="http://gpu:9000/v1")
    assert mine.summary_spec().base_url == "http://gpu:9000/v1"


def test_settings_written_anywhere_carry_no_secret() -> None:
    from deskresearch.progress import note

    ctx = Context(searxng_url="https://admin:hunter2@searx.example", search="searxng")
    assert ctx.public_settings()["searxng_url"] == "https://admin:***@searx.example"
    assert "searxng_url" not in ctx.resumable_settings()  # a resume takes it from env/flags
    assert ctx.resumable_settings()["url_per_query"] == ctx.url_per_query
    record = note("search_query", "q", "failed", "unreachable at https://a:hunter2@h/search")
    assert "hunter2" not in str(record)
