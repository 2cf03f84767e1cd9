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
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()
                if line.startswith("import time:")}  # fmt: skip
    assert "openai" in imported  # the client was imported
    assert not [name for name in imported if name.startswith("aiohttp")]
