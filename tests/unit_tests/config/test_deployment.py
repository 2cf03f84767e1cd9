"""Deployment-locked settings: refused in a served context, open to a deployment's allow-list."""

import pytest
from pydantic import ValidationError

from deskresearch.config.context import Context
from deskresearch.config.deployment import LOCKED, Deployment, served_context
from deskresearch.errors import ConfigError
from deskresearch.graph import build_graph


def test_a_served_context_refuses_each_locked_setting_naming_it_and_the_way_to_open_it() -> None:
    served = served_context(Deployment())
    for name, value in {"base_url": "http://evil.example/v1", "corpus_dir": "/etc",
                        "allow_hosts": "0.0.0.0/0", "cache_path": "/tmp/x.sqlite",
                        "tavily_base_url": "http://evil.example",
                        "searxng_url": "http://u:pw@evil.example"}.items():  # fmt: skip
        with pytest.raises(ValidationError) as err:
            served(**{name: value})  # type: ignore[arg-type]
        message = str(err.value)
        assert name in message and f"DESKRESEARCH_OVERRIDABLE={name}" in message
        assert "pw@" not in message  # a credential in the refused value is masked
    assert set(LOCKED) == {"base_url", "tavily_base_url", "searxng_url", "corpus_dir",
                           "allow_hosts", "cache_path"}  # fmt: skip


def test_open_settings_and_the_deployments_own_values_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESKRESEARCH_CORPUS_DIR", "/srv/files")
    served = served_context(Deployment())
    ctx = served(url_per_query=2, corpus_dir="/srv/files", token_budget=1000, cache=False)
    assert ctx.corpus_dir == "/srv/files" and ctx.url_per_query == 2
    assert served().corpus_dir == "/srv/files"  # not given: the deployment's


def test_a_model_prefix_that_picks_another_endpoint_is_refused_unless_base_url_is_open() -> None:
    for name in ("summary_model", "report_model", "judge_model"):
        with pytest.raises(ValidationError, match="localhost:11434"):
            served_context(Deployment())(**{name: "ollama:llama3"})  # type: ignore[arg-type]
    assert served_context(Deployment())(summary_model="gpt-4.1-mini").summary_model
    opened = served_context(Deployment(frozenset({"base_url"})))
    assert opened(summary_model="ollama:llama3", base_url="http://x/v1").base_url == "http://x/v1"


def test_the_allow_list_comes_from_the_environment_and_rejects_typos() -> None:
    d = Deployment.from_env({"DESKRESEARCH_OVERRIDABLE": "searxng_url, corpus_dir"})
    assert d.overridable == {"searxng_url", "corpus_dir"}
    assert served_context(d)(searxng_url="http://s:8888").searxng_url == "http://s:8888"
    with pytest.raises(ConfigError, match="url_per_query"):
        Deployment.from_env({"DESKRESEARCH_OVERRIDABLE": "url_per_query"})


def test_the_served_graph_refuses_a_dict_but_embedding_keeps_full_control() -> None:
    served = build_graph(deployment=Deployment())
    plain = build_graph()
    assert served.context_schema is not Context and plain.context_schema is Context
    schema = served.get_context_jsonschema() or {}
    assert schema["properties"]["base_url"].get("readOnly") is True
    assert "readOnly" not in (plain.get_context_jsonschema() or {})["properties"]["base_url"]


def test_the_form_shows_the_values_the_server_will_use_masked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DESKRESEARCH_TAVILY_BASE_URL", "http://search.internal:8080")
    monkeypatch.setenv("DESKRESEARCH_CORPUS_DIR", "/srv/files")
    monkeypatch.setenv("SEARXNG_URL", "http://bot:hunter2@searx.internal/")  # a fallback
    monkeypatch.setenv("OPENAI_BASE_URL", "http://models.internal/v1")
    monkeypatch.setenv("DESKRESEARCH_URL_PER_QUERY", "3")  # an open setting the deployment sets
    served = build_graph(deployment=Deployment())
    form = (served.get_context_jsonschema() or {})["properties"]
    assert form["tavily_base_url"]["default"] == "http://search.internal:8080"
    assert form["corpus_dir"]["default"] == "/srv/files"
    assert form["base_url"]["default"] == "http://models.internal/v1"
    assert "hunter2" not in str(form) and "searx.internal" in form["searxng_url"]["default"]
    assert form["url_per_query"]["default"] == 3
    classes = Context.__dataclass_fields__
    assert form["report_words"]["default"] == classes["report_words"].default
    plain = (build_graph().get_context_jsonschema() or {})["properties"]
    assert plain["tavily_base_url"]["default"] == classes["tavily_base_url"].default  # embedding

    # A form that sends back what it showed (the masked URL) asks for no change.
    served_context_class = served.context_schema
    assert served_context_class is not None
    ctx = served_context_class(**{name: form[name]["default"] for name in LOCKED})
    assert ctx.searxng_url == "" and ctx.tavily_base_url == "http://search.internal:8080"
    with pytest.raises(ValidationError, match="searxng_url"):
        served_context_class(searxng_url="http://bot:***@elsewhere.example/")


def test_a_served_caller_may_narrow_the_scope_and_a_bad_one_is_refused_before_any_work() -> None:
    served = served_context(Deployment())
    ctx = served(
        include_domains="who.int,.gov", exclude_domains="stats.who.int", since="2024-01-01"
    )
    assert ctx.domain_scope().include == ("who.int", ".gov") and ctx.since == "2024-01-01"
    for bad, words in (({"since": "2025-13-40"}, "not a real date"),
                       ({"exclude_domains": "https://bot:pw@evil.example/x"}, "is a URL")):  # fmt: skip
        with pytest.raises(ValidationError, match=words) as err:
            served(**bad)  # type: ignore[arg-type]
        assert "pw@" not in str(err.value), "a credential in the value is not echoed"
