"""A research on a local server's small window: the report's prompts fit it, and say what they left out.

Ollama loads a model with a few thousand tokens and cuts a longer prompt without a word; the
fake model here does the same (``context_tokens``), answered through the real ChatOpenAI.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from deskresearch import build_graph
from deskresearch.config.providers import OLLAMA_PORT
from tests.support.fake_model import REPORT, chat_over, stage_of
from tests.support.loopback import FakeWeb, serve
from tests.support.runs import context_for, loopback_env, services_for

pytestmark = pytest.mark.anyio
WINDOW = 2048  # Ollama's default before 0.6; the report's prompts of this run hold more
REPORT_STAGES = {"Outline", "Reflection", REPORT, "Judgements"}
# Ollama's port, on a loopback address of its own: localhost:11434 stays free (a test expects
# nothing there), and no other test listens here.
OTHER_LOOPBACK = "127.0.0.9"


async def test_a_run_on_a_small_local_window_fits_every_report_prompt_and_ends_ok(
    web: FakeWeb,
) -> None:
    web.model.context_tokens, web.model.facts_per_chunk = WINDOW, 8  # facts enough to overflow
    graph: Any = build_graph(**{**services_for(web), "llm": chat_over(web.model)})
    ctx = context_for(web, summary_model="ollama:llama3.1", report_model="ollama:llama3.1",
                      summary_context_window=WINDOW)  # fmt: skip
    out = await graph.ainvoke({"topic": "EV battery recycling"}, context=ctx)
    assert out["status"] == "ok" and out["sources"] and "[1]" in out["report"]
    asked = Counter(stage_of(b) for b in web.model.requests)
    assert asked["Outline"] == 1 and asked[REPORT] >= 3, "the outline was used: sections written"
    report_calls = [b for b in web.model.requests if stage_of(b) in REPORT_STAGES]
    cut = [stage_of(b) for b in report_calls if web.model.cuts(b)]
    assert cut == [], "no report prompt was cut by the server"
    skipped = [
        p
        for p in out["provenance"]
        if p["outcome"] == "skipped" and "left out of the prompt" in p["reason"]
    ]
    assert {p["stage"] for p in skipped} >= {"plan_report", "reflect", "judge_citations"}
    verdicts = Counter(c["verdict"] for c in out["citations"])
    assert verdicts and set(verdicts) == {"supported"}, (
        "every citation checked, none left unchecked"
    )
    assert all("2,048-token context" in p["reason"] for p in skipped)
    assert not [p for p in out["provenance"] if "the server cut it" in p["reason"]]


def test_the_command_fits_the_window_a_local_server_says_it_gives(tmp_path: Path) -> None:
    """The command as a user runs it on Ollama's port, with no window setting: Ollama's
    ``/api/ps`` says the model is held with 2,048 tokens, and every report prompt fits that."""
    web = FakeWeb(host=OTHER_LOOPBACK, port=OLLAMA_PORT, held_models={"gpt-4o-mini": WINDOW})
    web.model.context_tokens, web.model.facts_per_chunk = WINDOW, 8
    out = tmp_path / "out"
    with socket.socket() as probe:  # a real Ollama listening on every address holds the port
        if probe.connect_ex((OTHER_LOOPBACK, OLLAMA_PORT)) == 0:
            pytest.skip(f"something listens on {OTHER_LOOPBACK}:{OLLAMA_PORT} on this machine")
    with serve(web):
        done = subprocess.run(
            [sys.executable, "-m", "deskresearch", "What limits the growth of night trains?",
             "-o", str(out), "--checkpoints", str(tmp_path / "cp.sqlite"), "-q",
             "--summary-model", "gpt-4o-mini", "--report-model", "gpt-4o-mini"],
            env=loopback_env(web), capture_output=True, text=True, cwd=tmp_path, timeout=300,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = f"{web.base}/v1 gives gpt-4o-mini a 2,048-token context (its /api/ps)"
    assert said in done.stderr
    [result] = [json.loads(f.read_text(encoding="utf-8")) for f in out.glob("*.json")]
    verdicts = Counter(c["verdict"] for c in result["citations"])
    assert verdicts and set(verdicts) == {"supported"}, "no judge prompt was cut: none unchecked"
    assert not [b for b in web.model.requests if web.model.cuts(b)], "no prompt was cut"
