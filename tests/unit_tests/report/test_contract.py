"""The result document: its schema ships in the package and matches what the code writes."""

import typing
from datetime import datetime, timedelta
from pathlib import Path

import jsonschema
import pytest

from deskresearch.config.context import Context
from deskresearch.records import Citation, Decider, ModelSpec, Outcome, StageClock, Status, Verdict
from deskresearch.report.contract import SCHEMA_VERSION, document, endpoint_of, schema


def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema(), format_checker=jsonschema.FormatChecker())


def test_the_schema_is_valid_and_names_every_outcome_verdict_and_status() -> None:
    jsonschema.Draft202012Validator.check_schema(schema())
    defs = schema()["$defs"]
    assert defs["provenance"]["properties"]["outcome"]["enum"] == list(typing.get_args(Outcome))
    assert schema()["properties"]["status"]["enum"] == list(typing.get_args(Status))
    citation = defs["citation"]["properties"]
    assert citation["verdict"]["enum"] == list(typing.get_args(Verdict))
    assert citation["decided_by"]["enum"] == list(typing.get_args(Decider))
    assert set(citation) == set(Citation.__annotations__)


def test_the_schema_file_is_inside_the_package() -> None:
    import deskresearch.report

    assert (Path(deskresearch.report.__file__).parent / "result.schema.json").is_file()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:s3cret@proxy.example:8080/v1", "http://user:***@proxy.example:8080/v1"),
        ("https://x.example/search?api_key=abc&q=1", "https://x.example/search?api_key=***&q=1"),
        ("http://localhost:11434/v1", "http://localhost:11434/v1"),
    ],
)
def test_endpoints_are_masked(url: str, shown: str) -> None:
    spec = ModelSpec(model="m", base_url=url, method="auto", timeout_s=1.0)
    assert endpoint_of(spec, {}) == shown
    assert endpoint_of(ModelSpec(model="m", base_url="", method="auto", timeout_s=1.0),
                       {"OPENAI_BASE_URL": url}) == shown  # fmt: skip


def _result() -> dict[str, typing.Any]:
    usage = [{"stage": "write_report", "model": "gpt-4o", "input_tokens": 1000,
              "output_tokens": 100, "calls": 1}]  # fmt: skip
    return {"topic": "t", "status": "ok", "report": "r [1]", "sources": [], "queries": ["q"],
            "usage": usage, "provenance": []}  # fmt: skip


def test_a_document_has_versions_timings_tokens_and_masked_endpoints() -> None:
    ctx = Context(base_url="http://me:pw@gpu.example/v1", searxng_url="http://u:pw@s.example")
    start = datetime(2026, 1, 1).astimezone()
    clocks = {"write_report": StageClock(tasks=1, first=2.0, last=5.5, busy=3.5)}
    doc = document(_result(), ctx=ctx, thread_id="abc", clocks=clocks, started=start,
                   finished=start + timedelta(seconds=6), resumed=False,
                   files={"report": "t.md", "json": "t.json"})  # fmt: skip
    validator().validate(doc)
    assert doc["schema_version"] == SCHEMA_VERSION and doc["thread_id"] == "abc"
    assert doc["stages"] == [{"stage": "write_report", "tasks": 1, "started_s": 2.0,
                              "finished_s": 5.5, "busy_s": 3.5, "input_tokens": 1000,
                              "output_tokens": 100, "calls": 1, "cached_calls": 0}]  # fmt: skip
    assert doc["totals"]["estimated_cost_usd"] == pytest.approx(0.0035)
    assert doc["models"]["report"]["endpoint"] == "http://me:***@gpu.example/v1"
    # The limits a call had, where the settings say 0 (a hosted API's defaults here).
    assert (doc["settings"]["model_timeout_s"], doc["settings"]["max_model_calls"]) == (0, 0)
    assert doc["models"]["report"] | {"endpoint": ""} == {
        "model": "gpt-4o",
        "endpoint": "",
        "timeout_s": 120.0,
        "calls_at_once": 16,
    }
    local = document(_result(), ctx=Context(summary_model="ollama:llama3.1"), thread_id="abc",
                     clocks=clocks, started=start, finished=start, resumed=False, files={"json": "t.json"})  # fmt: skip
    validator().validate(local)
    assert (
        local["models"]["summary"]["timeout_s"],
        local["models"]["summary"]["calls_at_once"],
    ) == (600.0, 2)
    assert "pw" not in str(doc)
    assert "citations" not in doc
    assert doc["budget_stopped"] is False
    stopped = document({**_result(), "budget_stopped": True}, ctx=ctx, thread_id="abc",
                       clocks={}, started=start, finished=start, resumed=True, files={"json": "t.json"})  # fmt: skip
    validator().validate(stopped)
    assert stopped["budget_stopped"] is True


def test_calls_counted_by_us_are_marked_in_the_usage_the_stages_and_the_totals() -> None:
    """A server silent about a stream's usage: those calls' tokens are our count, and say so."""
    counted = {"stage": "write_section", "model": "gpt-4o", "input_tokens": 600,
               "output_tokens": 80, "calls": 2, "counted_calls": 2}  # fmt: skip
    start = datetime(2026, 1, 1).astimezone()
    doc = document({**_result(), "usage": [*_result()["usage"], counted]}, ctx=Context(),
                   thread_id="a", clocks={}, started=start, finished=start, resumed=False,
                   files={"json": "t.json"})  # fmt: skip
    validator().validate(doc)
    assert doc["totals"]["counted_calls"] == 2 and doc["totals"]["calls"] == 3
    by_stage = {s["stage"]: s.get("counted_calls") for s in doc["stages"]}
    assert by_stage == {"write_section": 2, "write_report": None}
    plain = document(_result(), ctx=Context(), thread_id="a", clocks={}, started=start,
                     finished=start, resumed=False, files={"json": "t.json"})  # fmt: skip
    assert "counted_calls" not in plain["totals"], "only when some call was counted"
    invalid = {**doc, "totals": {**doc["totals"], "counted_calls": 0}}
    assert not validator().is_valid(invalid), "present means at least one"


def test_citations_are_an_optional_documented_key() -> None:
    cited = {"sentence": "Batteries are shredded [1].", "sources": [1], "verdict": "supported",
             "quote": "shredded", "decided_by": "lexical"}  # fmt: skip
    start = datetime(2026, 1, 1).astimezone()
    doc = document({**_result(), "citations": [cited]}, ctx=Context(), thread_id="a", clocks={},
                   started=start, finished=start, resumed=True,
                   files={"report": "t.md", "json": "t.json"})  # fmt: skip
    validator().validate(doc)
    assert doc["citations"] == [cited]
    with pytest.raises(jsonschema.ValidationError):
        validator().validate({**doc, "citations": [{"sentence": "no verdict"}]})
