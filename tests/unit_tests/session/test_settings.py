"""Settings from a caller, flags, a file, the environment or a saved run: each names its origin."""

from pathlib import Path
from typing import Any

import pytest

from deskresearch.cli.command import build_parser
from deskresearch.cli.headstart import sources_of
from deskresearch.config.context import Context
from deskresearch.errors import ConfigError
from deskresearch.session.options import OPTIONS, from_context
from deskresearch.session.settings import (
    PLACES,
    Given,
    Settings,
    Sources,
    caller_field,
    check_rules,
    context_from,
    gather,
    problems,
)


def given(*argv: str, env: dict[str, str] | None = None, **kw: Any) -> Settings:
    return gather(sources_of(build_parser().parse_args(["topic", *argv]), env or {}), **kw)


def settings(*argv: str, env: dict[str, str] | None = None, **kw: Any) -> dict[str, object]:
    return {n: g.value for n, g in given(*argv, env=env, **kw).items() if n not in PLACES}


def error(*argv: str, env: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        context_from(given(*argv, env=env))
    return str(info.value)


def test_the_option_table_is_current() -> None:
    # After changing a Context field: python -m deskresearch.session.options --write
    assert from_context() == OPTIONS


def test_booleans_are_on_off_flags() -> None:
    assert settings("--no-cache", "--review-plan") == {"cache": False, "review_plan": True}
    assert context_from(given("--no-skip-unrelated-chunks")).skip_unrelated_chunks is False


def test_a_callers_value_beats_a_flag_and_says_it_came_from_the_caller() -> None:
    ns = build_parser().parse_args(["topic", "--max-rounds", "2"])
    sources = sources_of(ns, {})
    call = Sources(caller={"max_rounds": 9}, caller_name="the page", flags=sources.flags,
                   environ={})  # fmt: skip
    [problem] = problems(gather(call))
    assert (problem.name, problem.origin) == ("max_rounds", "the page's max_rounds")
    assert str(problem).endswith("(change max_rounds in the page)")


def test_the_places_come_from_flags_the_environment_or_the_defaults() -> None:
    got = given(env={"DESKRESEARCH_CHECKPOINTS": "/data/runs.sqlite"})
    assert got["checkpoints"].origin == "DESKRESEARCH_CHECKPOINTS in the environment"
    assert (got["output_dir"].value, got["output_dir"].kind) == ("reports", "default")
    assert given("-o", "out")["output_dir"].origin == "the flag -o"


@pytest.mark.parametrize(("argv", "env", "origin"), [
    (["--review-plan"], {}, "the flag --review-plan"),
    ([], {"DESKRESEARCH_REVIEW_PLAN": "1"}, "DESKRESEARCH_REVIEW_PLAN in the environment"),
])  # fmt: skip
def test_no_review_without_a_reviewer_wherever_the_value_came_from(
    argv: list[str], env: dict[str, str], origin: str
) -> None:
    settings = given(*argv, env=env)
    with pytest.raises(ConfigError, match=f"review_plan=true from {origin} pauses"):
        check_rules(settings, context_from(settings), reviewer=False)
    check_rules(settings, context_from(settings), reviewer=True)  # the terminal answers


def test_review_asks_for_the_pause_over_the_environment() -> None:
    assert settings("--review", env={"DESKRESEARCH_REVIEW_PLAN": "false"})["review_plan"] is True
    assert settings("--review", "--no-review-plan")["review_plan"] is False


def test_a_locked_setting_is_refused_from_a_caller_only() -> None:
    flags = {"base_url": "http://models.example/v1"}
    ours = gather(Sources(flags=flags, environ={}))
    check_rules(ours, context_from(ours), reviewer=False, locked=True)  # the deployment's own
    theirs = gather(Sources(caller=flags, caller_name="the tool call", environ={}))
    with pytest.raises(ConfigError, match="this server does not let a run change base_url"):
        check_rules(theirs, context_from(theirs), reviewer=False, locked=True)


def test_a_flag_beats_the_config_file_which_beats_the_environment(tmp_path: Path) -> None:
    config = tmp_path / "research.toml"
    config.write_text('url-per-query = 3\nlanguage = "German"\nmax_keywords = 5\n')
    env = {"DESKRESEARCH_URL_PER_QUERY": "7", "DESKRESEARCH_LANGUAGE": "fr",
           "DESKRESEARCH_DECOMPOSITION_NUMS": "2"}  # fmt: skip
    got = settings("--config", str(config), "--max-keywords", "1", env=env)
    assert got == {"url_per_query": 3, "language": "German", "max_keywords": "1",
                   "decomposition_nums": "2"}  # fmt: skip


def test_a_resumed_run_takes_its_saved_settings_over_the_environment() -> None:
    env = {"DESKRESEARCH_URL_PER_QUERY": "7"}
    got = settings("--language", "fr", env=env, saved={"url_per_query": 2, "language": "en-us"})
    assert got == {"url_per_query": 2, "language": "fr"}


def test_a_resumed_run_reads_a_setting_that_held_a_secret_from_the_environment_again() -> None:
    # start_run saves Context.resumable_settings(): a URL with a password is left out of it.
    url = "http://u:pw@searx.example"
    saved = Context(searxng_url=url, url_per_query=2).resumable_settings()
    env = {"DESKRESEARCH_SEARXNG_URL": url, "DESKRESEARCH_URL_PER_QUERY": "7"}
    assert settings(env=env, saved=saved) == {**saved, "searxng_url": url}


def test_a_bad_flag_is_named_as_the_flag_with_its_range() -> None:
    msg = error("--url-per-query", "99")
    assert "url_per_query='99' from the flag --url-per-query" in msg
    assert "less than or equal to 20" in msg and "(change --url-per-query)" in msg


def test_a_bad_variable_is_named_as_the_variable() -> None:
    msg = error(env={"DESKRESEARCH_MAX_FETCHES": "many"})
    assert "from DESKRESEARCH_MAX_FETCHES in the environment" in msg
    assert "valid integer" in msg and "change or unset DESKRESEARCH_MAX_FETCHES" in msg


def test_a_bad_value_in_the_config_file_names_the_file(tmp_path: Path) -> None:
    config = tmp_path / "research.toml"
    config.write_text('structured_output = "xml"\n')
    msg = error("--config", str(config))
    assert f"from structured_output in {config}" in msg and "'json_schema'" in msg


def test_an_unknown_key_in_the_config_file_suggests_the_field(tmp_path: Path) -> None:
    config = tmp_path / "research.toml"
    config.write_text("url_per_querry = 2\n")
    assert "did you mean url_per_query?" in error("--config", str(config))


@pytest.mark.parametrize(
    ("text", "problem"), [(None, "cannot read it"), ("url_per_query = [", "not a TOML file")]
)
def test_an_unreadable_config_file_is_named(tmp_path: Path, text: str | None, problem: str) -> None:
    config = tmp_path / "research.toml"
    if text is not None:
        config.write_text(text)
    assert problem in error("--config", str(config))


def test_every_bad_value_is_reported_at_once() -> None:
    msg = error("--url-per-query", "0", env={"DESKRESEARCH_MAX_KEYWORDS": "x"})
    assert "--url-per-query" in msg and "DESKRESEARCH_MAX_KEYWORDS" in msg


def test_a_bad_since_or_domain_list_names_its_origin_and_the_fix(tmp_path: Path) -> None:
    msg = error("--since", "2025-13-40")
    assert msg.startswith(
        "invalid setting: since='2025-13-40' from the flag --since: not a real date"
    )
    assert msg.endswith("(change --since)") and "Value error" not in msg
    assert "from DESKRESEARCH_SINCE in the environment: a date in the future" in error(
        env={"DESKRESEARCH_SINCE": "2999-01-01"}
    )
    config = tmp_path / "research.toml"
    config.write_text('exclude_domains = "https://who.int/x"\n')
    msg = error("--config", str(config))
    assert f"from exclude_domains in {config}: 'https://who.int/x' is a URL, not a host" in msg
    msg = error("--include-domains", "who.int", "--exclude-domains", ".WHO.int")
    assert (
        "exclude_domains='.WHO.int' from the flag --exclude-domains: .who.int is in "
        "include_domains too" in msg
    )


@pytest.mark.parametrize("flag", ["--include-domains", "--exclude-domains"])
@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_domain_flag_is_a_mistake_the_cli_names(flag: str, value: str) -> None:
    with pytest.raises(ConfigError) as info:
        settings(flag, value)
    assert str(info.value).startswith(
        f"{flag} {value!r}: an empty value for a flag that takes domains"
    )
    assert "leave the flag out" in str(info.value)
    assert settings(env={"DESKRESEARCH_EXCLUDE_DOMAINS": ""})["exclude_domains"] == "", (
        "empty in the environment or a file means none, as the default"
    )


@pytest.mark.parametrize(("message", "field"), [
    ("language 'Elvish' (from the page's language) names no language", "language"),
    ("this server does not let a run change base_url='http://x/v1': ...", "base_url"),
    ("the model endpoint http://x does not answer", ""),
    ("max_rounds=3 from the default (2): ...", ""),  # not the caller's value
])  # fmt: skip
def test_a_pre_flight_message_belongs_to_the_caller_s_field_it_names(
    message: str, field: str
) -> None:
    settings = {"language": Given("Elvish", "the page's language", "", "caller"),
                "base_url": Given("http://x/v1", "the page's base_url", "", "caller"),
                "max_rounds": Given(2, "the default (2)", "", "default")}  # fmt: skip
    assert caller_field(message, settings) == field
