"""`deskresearch mcp` as an MCP client starts it: a process on stdio, driven by the official SDK."""

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.dispatcher import ProgressFnT
from mcp_types import TextContent

from deskresearch.mcp.result import MAX_RESULT_CHARS
from tests.integration_tests.test_examples import ROOT, run_example
from tests.support.loopback import FakeWeb, Latency, serve
from tests.support.runs import loopback_env

pytestmark = pytest.mark.anyio
BIN = Path(sys.executable).parent / "deskresearch"


@pytest.fixture(scope="module")
def web() -> Iterator[FakeWeb]:
    with serve(FakeWeb()) as fake:
        yield fake


@asynccontextmanager
async def session(web: FakeWeb, tmp: Path, *args: str, **env: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=str(BIN),
        args=["mcp", "-o", str(tmp / "reports"), *args],
        env=loopback_env(web, DESKRESEARCH_CHECKPOINTS=str(tmp / "runs.sqlite"), **env),
        cwd=str(tmp),
    )
    with (tmp / "server.log").open("w") as log:
        async with stdio_client(params, errlog=log) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                yield s


def tracked(into: list[tuple[float, str]]) -> ProgressFnT:
    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        into.append((progress, message or ""))

    return on_progress


async def test_two_calls_at_once_both_report_progress_in_order_and_write_files(
    web: FakeWeb, tmp_path: Path
) -> None:
    first: list[tuple[float, str]] = []
    second: list[tuple[float, str]] = []
    async with session(web, tmp_path) as s:
        a, b = await asyncio.gather(
            s.call_tool("research", {"topic": "EV battery recycling", "max_rounds": 1},
                        progress_callback=tracked(first)),
            s.call_tool("research", {"topic": "Night trains in Europe", "language": "German"},
                        progress_callback=tracked(second)),
        )  # fmt: skip
    assert not a.is_error and not b.is_error
    da, db = a.structured_content or {}, b.structured_content or {}
    assert da["status"] == db["status"] == "ok" and da["thread_id"] != db["thread_id"]
    [block] = a.content
    assert isinstance(block, TextContent) and json.loads(block.text) == da
    assert len(block.text) <= MAX_RESULT_CHARS
    print(f"stdio tool result: {len(block.text)} characters")  # noqa: T201
    # The report files are where the server was told to write them, as the CLI writes them.
    md, js = (Path(f) for f in da["files"])
    assert md.parent == tmp_path / "reports" and md.read_text().startswith(da["report"][:200])
    assert json.loads(js.read_text())["thread_id"] == da["thread_id"]
    assert json.loads(Path(db["files"][1]).read_text())["language"] == "German"
    for progress, data in ((first, da), (second, db)):
        numbers, messages = [d for d, _ in progress], [m for _, m in progress]
        assert numbers == list(range(1, len(numbers) + 1))  # one notification per event
        assert messages[0] == f"[research] started thread_id={data['thread_id']}"
        assert messages[1].startswith("[start_run] started")
        stages = [m.split("]")[0][1:] for m in messages]
        assert stages.index("plan_queries") < stages.index("read_page") < stages.index("reflect")
        assert stages[-1] == "finish_report"


async def test_a_cancelled_call_leaves_a_run_the_cli_resumes(web: FakeWeb, tmp_path: Path) -> None:
    progress: list[tuple[float, str]] = []
    web.latency = Latency(call_s=0.4)
    try:
        async with session(web, tmp_path) as s:
            call = asyncio.ensure_future(
                s.call_tool("research", {"topic": "EV battery recycling"},
                            progress_callback=tracked(progress))
            )  # fmt: skip
            while not any(m.startswith("[read_page]") for _, m in progress):
                await asyncio.sleep(0.05)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            # The session goes on: the server is still there for the next call.
            assert [t.name for t in (await s.list_tools()).tools] == ["research"]
    finally:
        web.latency = Latency()
    thread = progress[0][1].removeprefix("[research] started thread_id=")
    log = (tmp_path / "server.log").read_text()
    assert f"research {thread} cancelled" in log and f"deskresearch --resume {thread}" in log
    env = loopback_env(web, DESKRESEARCH_CHECKPOINTS=str(tmp_path / "runs.sqlite"))
    runs = subprocess.run([BIN, "runs", "--json"], env=env, capture_output=True, text=True,
                          check=True)  # fmt: skip
    [row] = [json.loads(line) for line in runs.stdout.splitlines()]
    assert row["thread_id"] == thread and row["status"] == "unfinished"
    plans_before = len(web.model.calls("QueryPlan"))
    resumed = subprocess.run(
        [BIN, "--resume", thread, "-o", str(tmp_path / "resumed")], env=env,
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert Path(resumed.stdout.strip()).read_text().startswith("# ")
    # Steps finished before the cancel are not done again: the plan was made before any page.
    assert any(m.startswith("[plan_queries] finished") for _, m in progress)
    assert len(web.model.calls("QueryPlan")) == plans_before


async def test_a_bad_setting_is_a_tool_error_naming_it_and_the_fix(
    web: FakeWeb, tmp_path: Path
) -> None:
    before = len(web.model.requests)
    async with session(web, tmp_path, DESKRESEARCH_URL_PER_QUERY="99") as s:
        result = await s.call_tool("research", {"topic": "EV battery recycling"})
        rounds = await s.call_tool("research", {"topic": "EV battery recycling", "max_rounds": 9})
    assert result.is_error
    [block] = result.content
    assert isinstance(block, TextContent)
    assert "url_per_query='99' from DESKRESEARCH_URL_PER_QUERY in the environment" in block.text
    assert "change or unset DESKRESEARCH_URL_PER_QUERY" in block.text
    assert rounds.is_error and "max_rounds" in str(rounds.content)
    assert len(web.model.requests) == before  # refused before any model call
    assert not (tmp_path / "runs.sqlite").exists()  # ... and before anything was saved
    assert "warning: invalid setting" in (tmp_path / "server.log").read_text()


def test_the_readme_mcp_stdio_example_saved_as_a_file_runs(web: FakeWeb, tmp_path: Path) -> None:
    out, calls = run_example(
        "mcp_stdio", web, PATH=f"{BIN.parent}:{os.environ['PATH']}",
        DESKRESEARCH_CHECKPOINTS=str(tmp_path / "runs.sqlite"),
    )  # fmt: skip
    lines = out.splitlines()
    assert lines[0].startswith("progress: [research] started thread_id=")
    status = next(line for line in lines if not line.startswith("progress: "))
    assert status.startswith("ok ") and status.endswith(".md") and "/reports/" in status
    assert calls > 0


async def test_the_readme_client_configuration_starts_the_server(
    web: FakeWeb, tmp_path: Path
) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    [block] = [b for b in re.findall(r"```json\n(.*?)```", readme, re.DOTALL) if "mcpServers" in b]
    entry = json.loads(block)["mcpServers"]["deskresearch"]
    assert Path(entry["command"]).name == "deskresearch" and set(entry["env"]) == {
        "OPENAI_API_KEY", "TAVILY_API_KEY",
    }  # fmt: skip
    args = [str(tmp_path / "research") if a == "/home/me/research" else a for a in entry["args"]]
    env = loopback_env(web, DESKRESEARCH_CHECKPOINTS=str(tmp_path / "runs.sqlite"))
    params = StdioServerParameters(command=str(BIN), args=args, env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        result = await s.call_tool("research", {"topic": "EV battery recycling", "max_rounds": 1})
    files = (result.structured_content or {})["files"]
    assert files and all(Path(f).parent == tmp_path / "research" for f in files)


async def test_a_call_chooses_its_dates_and_sites_and_a_bad_date_costs_nothing(
    web: FakeWeb, tmp_path: Path
) -> None:
    before = len(web.model.requests)
    async with session(web, tmp_path) as s:
        [tool] = (await s.list_tools()).tools
        assert {"since", "include_domains", "exclude_domains"} <= set(
            tool.input_schema["properties"]
        )
        bad = await s.call_tool(
            "research", {"topic": "EV battery recycling", "since": "2025-13-40"}
        )
        assert bad.is_error and "since='2025-13-40'" in str(bad.content)
        assert len(web.model.requests) == before  # refused before any model call
        scoped = await s.call_tool(
            "research", {"topic": "EV battery recycling", "include_domains": "nowhere.example"}
        )
    assert not scoped.is_error and scoped.structured_content is not None
    result = scoped.structured_content
    assert result["status"] == "insufficient_evidence" and "nowhere.example" in result["reason"]
