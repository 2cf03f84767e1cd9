"""A run that cannot search never says ok: through the CLI, every search engine failing.

Before "ok means a report", each of these ended with exit 0, ``ok:``, a 0-byte report and
``"status": "ok"`` (the run stopped after the keyword searches, as if it had finished). Now a
SearXNG server that does not answer stops the run before any call (the pre-flight, exit 4); an
engine that answers with errors ends the run insufficient_evidence with the reason (exit 5).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration_tests.test_cli import cli, validate
from tests.support.loopback import FakeWeb
from tests.support.server import free_port

TOPIC = "EV battery recycling"


def closed() -> str:
    return f"http://127.0.0.1:{free_port()}"  # nothing listens there


def test_a_searxng_server_that_does_not_answer_stops_the_run_before_any_call(
    web: FakeWeb, tmp_path: Path
) -> None:
    url = closed()
    proc = cli(web, TOPIC, "-o", str(tmp_path / "out"), "--search", "searxng",
               "--searxng-url", url)  # fmt: skip
    assert proc.returncode == 4, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith(f"deskresearch: error: the SearXNG server {url} does not answer")
    assert "from the flag --searxng-url" in line and not (tmp_path / "out").exists()
    assert [r for r in web.model.requests if "Keywords" not in json.dumps(r)] == []


@pytest.mark.parametrize(
    ("case", "args", "env"),
    [
        ("tavily without a key, unreachable", ["--search", "tavily"],
         {"TAVILY_API_KEY": "", "DESKRESEARCH_TAVILY_BASE_URL": "CLOSED"}),
        ("every engine of the chain failing", ["--search", "tavily,searxng", "--searxng-url",
                                               "WEB/searxng"], {"DOWN": "tavily,searxng"}),
    ],
)  # fmt: skip
def test_no_search_engine_ends_insufficient_with_the_reason(
    web: FakeWeb, tmp_path: Path, case: str, args: list[str], env: dict[str, str]
) -> None:
    for engine in env.pop("DOWN", "").split(","):
        if engine:
            web.engines_down[engine] = 503
    url = closed()
    fill = {"CLOSED": url, "WEB": web.base}
    args = [fill.get(a, a.replace("WEB", web.base)) for a in args]
    env = {k: fill.get(v, v) for k, v in env.items()}
    proc = cli(web, TOPIC, "-o", str(tmp_path), "-q", *args, env=env)
    assert proc.returncode == 5, (case, proc.stderr)
    assert "ok:" not in proc.stderr and "insufficient_evidence:" in proc.stderr, proc.stderr
    assert "reason: every search failed" in proc.stderr
    data = validate(tmp_path / "ev-battery-recycling.json")
    assert data["status"] == "insufficient_evidence" and data["sources"] == []
    assert data["reason"].startswith("every search failed (")
    report = (tmp_path / "ev-battery-recycling.md").read_text(encoding="utf-8")
    assert report.startswith("# Insufficient evidence") and data["reason"] in report
    planned = [c for c in web.model.requests if "QueryPlan" in json.dumps(c)]
    assert planned == [], "no query is planned for engines that cannot answer"
