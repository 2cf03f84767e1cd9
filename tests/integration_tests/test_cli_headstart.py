"""The command's head start, as a user runs it: the keywords request leaves before the imports."""

import json
from pathlib import Path

import pytest

from tests.integration_tests.test_cli import cli
from tests.support.loopback import FakeWeb

TOPIC = "EV battery recycling"


def test_the_first_model_call_is_the_head_start_and_is_not_repeated(
    web: FakeWeb, tmp_path: Path
) -> None:
    proc = cli(web, TOPIC, "-o", str(tmp_path), "-q")
    assert proc.returncode == 0, proc.stderr
    keywords = [c for c in web.log if c.kind == "model" and c.key == "Keywords"]
    assert len(keywords) == 1 and web.model_agents[0].startswith("deskresearch/")
    # The rest: ChatOpenAI, or structured calls sent the same way before it was imported.
    rest = web.model_agents[1:]
    assert all("OpenAI" in agent or agent.endswith("(early)") for agent in rest)
    assert any("OpenAI" in agent for agent in rest)  # the report's text needs the client
    [result] = tmp_path.glob("*.json")
    usage = json.loads(result.read_text())["usage"]
    row = next(u for u in usage if u["stage"] == "generate_keywords")
    assert (row["calls"], row["output_tokens"]) == (1, keywords[0].tokens_out)


def test_the_command_never_imports_openai_s_aiohttp_transport(web: FakeWeb, tmp_path: Path) -> None:
    """Where aiohttp is installed (Ray's extra), openai would import it: 12 MB nobody uses."""
    pytest.importorskip("aiohttp")
    proc = cli(web, TOPIC, "-o", str(tmp_path), "-q", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert proc.returncode == 0, proc.stderr
    imported = _imported(proc.stderr)
    assert "openai" in imported  # the client was imported
    assert not [name for name in imported if name.startswith("aiohttp")]


def _imported(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines()
            if line.startswith("import time:")}  # fmt: skip


def test_the_command_imports_one_langsmith_type_and_still_traces(
    web: FakeWeb, tmp_path: Path
) -> None:
    """langsmith.types' package init imports 164 generated API types (0.2 s of CPU before the
    graph's first step); langchain_core needs one of them. Tracing, which may need more, works."""
    env = {"PYTHONPROFILEIMPORTTIME": "1", "LANGSMITH_TRACING": "true",
           "LANGSMITH_ENDPOINT": web.base, "LANGSMITH_API_KEY": "lsv2-test-secret"}  # fmt: skip
    proc = cli(web, TOPIC, "-o", str(tmp_path), "-q", env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    imported = _imported(proc.stderr)
    assert "langsmith.types.run_select_field" in imported  # the one langchain_core imports
    assert not {"langsmith.types.agent", "langsmith.types.dataset"} & imported
    sent = b"".join(body for _, body in web.traces)
    assert b"deskresearch: EV battery recycling" in sent
