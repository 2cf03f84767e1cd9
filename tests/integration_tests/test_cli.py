"""The CLI as a user runs it: a subprocess against the loopback web."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from deskresearch.report.contract import schema
from tests.support.loopback import FakeWeb, default_catalogue

ROOT = Path(__file__).parents[2]


def cli(
    web: FakeWeb | None, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "TAVILY_", "DESKRESEARCH_"))
    }
    if web is not None:
        base_env |= {
            "OPENAI_BASE_URL": web.base + "/v1",
            "DESKRESEARCH_TAVILY_BASE_URL": web.base,
            "TAVILY_API_KEY": "tvly-test",
            "DESKRESEARCH_ALLOW_HOSTS": "127.0.0.0/8",
        }
    base_env["DESKRESEARCH_CHECKPOINTS"] = "memory"  # never the user's data folder
    base_env["DESKRESEARCH_CACHE"] = "false"  # nor the user's cache
    base_env |= env or {}
    return subprocess.run(
        [sys.executable, "-m", "deskresearch", *args],
        capture_output=True,
        text=True,
        env=base_env,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


def validate(path: Path) -> dict[str, Any]:
    """Read a result file, checked against the published JSON Schema."""
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema(), format_checker=jsonschema.FormatChecker()).validate(
        doc
    )
    return doc


def test_cli_writes_report_and_json_and_exits_0(web: FakeWeb, tmp_path: Path) -> None:
    proc = cli(web, "EV battery recycling", "-o", str(tmp_path), "--language", "fr")
    assert proc.returncode == 0, proc.stderr
    md = tmp_path / "ev-battery-recycling.md"
    data = validate(tmp_path / "ev-battery-recycling.json")
    assert md.read_text(encoding="utf-8") == data["report"]
    assert data["status"] == "ok" and data["sources"] and data["settings"]["language"] == "fr"
    assert {"report", "sources", "queries", "usage", "provenance", "status"} <= set(data)
    assert "[summarise_chunk] finished" in proc.stderr and "[finish_report] finished" in proc.stderr
    assert "test-key" not in md.read_text(encoding="utf-8") + json.dumps(data)
    verdicts = [c["verdict"] for c in data["citations"]]
    assert (
        verdicts
        and f"citations: {len(verdicts)} checked · {verdicts.count('supported')} supported"
        in proc.stderr
    )


def test_cli_exits_5_on_insufficient_evidence(web: FakeWeb, tmp_path: Path) -> None:
    web.catalogue = [e for e in default_catalogue() if e.path in ("/pages/captcha.html", "/binary")]
    proc = cli(web, "EV battery recycling", "-o", str(tmp_path), "-q")
    assert proc.returncode == 5, proc.stderr
    assert "Insufficient evidence" in (tmp_path / "ev-battery-recycling.md").read_text(
        encoding="utf-8"
    )
    assert validate(tmp_path / "ev-battery-recycling.json")["status"] == "insufficient_evidence"


def test_cli_exits_3_with_one_line_naming_both_fixes_without_an_endpoint(tmp_path: Path) -> None:
    proc = cli(None, "EV battery recycling", "-o", str(tmp_path))
    assert proc.returncode == 3
    assert "OPENAI_API_KEY" in proc.stderr and "OPENAI_BASE_URL" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())


def test_cli_exits_3_on_a_bad_setting_and_an_empty_topic(tmp_path: Path) -> None:
    proc = cli(None, "x", "--url-per-query", "99")
    assert (
        proc.returncode == 3
        and "url_per_query" in proc.stderr
        and "less than or equal to 20" in proc.stderr
    )
    proc = cli(None, "   ", env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert proc.returncode == 3 and "topic is empty" in proc.stderr


def test_cli_help_lists_every_option_with_its_env_var() -> None:
    proc = cli(None, "--help")
    assert proc.returncode == 0
    from deskresearch.config.context import field_names

    for name in field_names():
        assert f"DESKRESEARCH_{name.upper()}" in proc.stdout


def test_cli_review_with_an_answer_file_drops_the_named_pages(web: FakeWeb, tmp_path: Path) -> None:
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps({"keep_urls": [web.url("/pages/heise.de.lithium.html")]}))
    proc = cli(web, "EV battery recycling", "-o", str(tmp_path), "-q", "--review", str(answer))
    assert proc.returncode == 0, proc.stderr
    assert "Pages to read:" in proc.stderr and "heise.de.lithium" in proc.stderr
    data = validate(tmp_path / "ev-battery-recycling.json")
    assert [s["url"] for s in data["sources"]] == [web.url("/pages/heise.de.lithium.html")]
    assert any(p["reason"] == "dropped at review" for p in data["provenance"])


@pytest.mark.parametrize("accept", ["{}", "null"])
def test_cli_review_with_an_answer_file_that_accepts_reads_every_page(
    web: FakeWeb, tmp_path: Path, accept: str
) -> None:
    answer = tmp_path / "answer.json"
    answer.write_text(accept)  # LangGraph fails on None, and asks again for ever on {}
    proc = cli(web, "EV battery recycling", "-o", str(tmp_path), "-q", "--review", str(answer))
    assert proc.returncode == 0, proc.stderr
    data = validate(tmp_path / "ev-battery-recycling.json")
    assert len(data["sources"]) > 1
    assert not any(p["reason"] == "dropped at review" for p in data["provenance"])
