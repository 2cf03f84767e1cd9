"""LangSmith tracing: off means no connection; on means named, tagged runs (to a fake endpoint)."""

import subprocess
import sys
from pathlib import Path

from tests.support.loopback import FakeWeb
from tests.support.runs import loopback_env

ROOT = Path(__file__).parents[2]
SCRIPT = """
import asyncio
from langchain_core.tracers.langchain import wait_for_all_tracers
from deskresearch import Context, graph
from deskresearch.tracing import run_config

async def main():
    ctx = Context(url_per_query=2)
    topic = "EV battery recycling"
    out = await graph.ainvoke({"topic": topic}, run_config(topic, ctx, thread_id="t-1"), context=ctx)
    print(out["status"])

asyncio.run(main())
wait_for_all_tracers()
"""


def run(web: FakeWeb, **env: str) -> str:
    base = loopback_env(web, LANGSMITH_ENDPOINT=web.base, LANGSMITH_API_KEY="lsv2-test-secret")
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=base | env, cwd=ROOT,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.strip()


def test_tracing_unset_sends_nothing(web: FakeWeb) -> None:
    assert run(web) == "ok"
    assert web.traces == []


def test_tracing_on_names_tags_and_describes_the_run(web: FakeWeb) -> None:
    assert run(web, LANGSMITH_TRACING="true") == "ok"
    sent = b"".join(body for _, body in web.traces)
    assert web.traces, "no trace arrived"
    for needle in (b"deskresearch: EV battery recycling", b"stage:summarise_chunk",
                   b"langsmith:nostream", b"gpt-4o-mini", b'"thread_id"'):  # fmt: skip
        assert needle in sent, needle
    assert b"test-key" not in sent and b"tvly-test" not in sent
