"""A run that cannot search never says ok: through the CLI, every search engine failing.

Before "ok means a report", each of these ended with exit 0, ``ok:``, a 0-byte report and
``"status": "ok"`` (the run stopped after the keyword searches, as if it had finished). Now a
chain of engines none of which answers (a SearXNG server, a Tavily URL, with a key or without)
stops the run before any call (the pre-flight, exit 4); an engine that answers with errors ends
the run insufficient_evidence with the reason (exit 5).
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


@pytest.mark.parametrize(("engine", "args", "env", "origin"), [
    ("searxng", ["--search", "searxng", "--searxng-url", "CLOSED"], {}, "the flag --searxng-url"),
    ("tavily", ["--search", "tavily"], {"TAVILY_API_KEY": "", "DESKRESEARCH_TAVILY_BASE_URL": "CLOSED"},
     "DESKRESEARCH_TAVILY_BASE_URL in the environment"),  # keyless, as tavily-python allows
])  # fmt: skip
def test_an_engine_that_does_not_answer_stops_the_run_before_any_call(
    web: FakeWeb, tmp_path: Path, engine: str, args: list[str], env: dict[str, str], origin: str
) -> None:
    url = closed()
    args = [url if a == "CLOSED" else a for a in args]
    env = {k: url if v == "CLOSED" else v for k, v in env.items()}
    proc = cli(web, TOPIC, "-o", str(tmp_path / "out"), *args, env=env)
    assert proc.returncode == 4, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith(
        f"deskresearch: error: the search engine {engine} at {url} does not answer"
    )
    assert f"from {origin}" in line and not (tmp_path / "out").exists()
    assert web.model.requests == [], "no model call, the head start's included"


@pytest.mark.parametrize(
    ("case", "args", "env"),
    [
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
    args = [a.replace("WEB", web.base) for a in args]
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


def test_tavily_out_of_credits_leaves_every_search_to_the_engine_after_it(
    web: FakeWeb, tmp_path: Path
) -> None:
    """The pre-flight lets the run start (SearXNG follows); Tavily's 432 passes each search on."""
    web.spent_keys = {"tvly-spent"}
    env = {"TAVILY_API_KEY": "tvly-spent", "DESKRESEARCH_TAVILY_BASE_URL": "http://api.tavily.com",
           "TAVILY_HTTP_PROXY": web.base}  # fmt: skip
    proc = cli(web, TOPIC, "-o", str(tmp_path), "-q", "--search", "tavily,searxng",
               "--searxng-url", web.base + "/searxng", env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = validate(tmp_path / "ev-battery-recycling.json")
    issued = [p for p in data["provenance"] if p["outcome"] == "issued"]
    passed = [p for p in data["provenance"] if p["reason"].startswith("passed over")]
    assert issued and all(p["reason"].startswith("searxng: ") for p in issued)
    assert len(passed) == len(issued) and all(
        p["reason"] == "passed over tavily: This request exceeds your plan's set usage limit."
        for p in passed
    )
    assert data["sources"] and web.usage_keys == ["tvly-spent"]


@pytest.mark.parametrize("quiet", [[], ["-q"]])
def test_tavily_low_on_credits_is_a_note_and_the_run_goes_on(
    web: FakeWeb, tmp_path: Path, quiet: list[str]
) -> None:
    """5 credits left for up to 9 searches: said before the run, --quiet or not; no stop."""
    web.key_credits = {"tvly-low": (995, 1000)}
    env = {"TAVILY_API_KEY": "tvly-low", "DESKRESEARCH_TAVILY_BASE_URL": "http://api.tavily.com",
           "TAVILY_HTTP_PROXY": web.base}  # fmt: skip
    proc = cli(web, TOPIC, "-o", str(tmp_path), *quiet, "--search", "tavily,searxng",
               "--searxng-url", web.base + "/searxng", "--progress", "plain", env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    [note] = [line for line in proc.stderr.splitlines() if line.startswith("deskresearch: note:")]
    assert note == (
        "deskresearch: note: the search engine tavily at http://api.tavily.com has 5 credits left "
        "(this key: 995 of 1,000 used); this run makes up to 9 searches, and those past its "
        "credits go to searxng. Add credits at app.tavily.com, or name another engine with "
        "--search"
    )
    assert validate(tmp_path / "ev-battery-recycling.json")["status"] == "ok"
