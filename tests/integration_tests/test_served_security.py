"""A served caller cannot steer the server's keys, network or files; the form tells users why.

`langgraph dev` runs with server-held keys; a canary listener stands where a hostile caller would
point the server. Every locked setting is tried through the SDK, as a context and as the older
``configurable``, for a new run and for a resumed one: each is refused naming the setting, and
the canary hears nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client

from tests.support.batches import batch, summary, write_topics
from tests.support.canary import Listener, listening
from tests.support.loopback import FakeWeb, serve
from tests.support.runs import LOOPBACK, loopback_env
from tests.support.server import dev_server

pytestmark = [pytest.mark.anyio, pytest.mark.xdist_group("served-security")]  # one server
SECRET = "sk-server-secret"
SEARXNG = "http://bot:searx-password@127.0.0.9:9/"  # the deployment's, with a credential


@pytest.fixture(scope="module")
def web() -> Iterator[FakeWeb]:
    with serve(FakeWeb()) as fake:
        yield fake


@pytest.fixture(scope="module")
def canary() -> Iterator[Listener]:
    with listening(Listener("127.0.0.5")) as (listener,):
        yield listener


@pytest.fixture(scope="module")
def server(web: FakeWeb, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = loopback_env(web, OPENAI_API_KEY=SECRET, TAVILY_API_KEY="tvly-server-secret",
                       DESKRESEARCH_SEARXNG_URL=SEARXNG)  # fmt: skip
    with dev_server(env, tmp_path_factory.mktemp("server") / "server.log") as url:
        yield url


@pytest.fixture(scope="module")
def secrets_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("server-files")
    (folder / "keys.md").write_text(f"# Keys\n\nEV battery recycling OPENAI_API_KEY={SECRET}")
    return folder


def attempts(canary: Listener, folder: Path, tmp: Path) -> dict[str, dict[str, Any]]:
    """One hostile context per locked setting."""
    return {
        "base_url": {"base_url": canary.url + "/v1"},
        "tavily_base_url": {"tavily_base_url": canary.url},
        "searxng_url": {"searxng_url": canary.url, "search": "searxng"},
        "corpus_dir": {"corpus_dir": str(folder), "search": "corpus"},
        "allow_hosts": {"allow_hosts": "0.0.0.0/0,::/0"},
        "cache_path": {"cache": True, "cache_path": str(tmp / "caller-chose.sqlite")},
        "summary_model": {"summary_model": "ollama:llama3"},  # the prefix picks an endpoint
    }


SETTINGS = ["base_url", "tavily_base_url", "searxng_url", "corpus_dir", "allow_hosts",
            "cache_path", "summary_model"]  # fmt: skip


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("how", ["context", "configurable"])
async def test_each_locked_setting_is_refused_and_names_itself(
    server: str, canary: Listener, secrets_folder: Path, tmp_path: Path, setting: str, how: str
) -> None:
    hostile = attempts(canary, secrets_folder, tmp_path)[setting]
    kwargs: dict[str, Any] = (
        {"context": hostile} if how == "context" else {"config": {"configurable": hostile}}
    )
    async with get_client(url=server) as client:
        thread = await client.threads.create()
        with pytest.raises(Exception) as err:
            await client.runs.wait(
                thread["thread_id"], "researcher", input={"topic": "EV battery recycling"},
                **kwargs,
            )  # fmt: skip
        state = await client.threads.get_state(thread["thread_id"])
    message = str(err.value)
    governing = "base_url" if setting == "summary_model" else setting
    assert setting in message and "DESKRESEARCH_OVERRIDABLE" in message, message
    assert f"DESKRESEARCH_{governing.upper()}" in message, message
    assert canary.hits == [], "the server called a host its caller chose"
    assert not (tmp_path / "caller-chose.sqlite").exists()
    assert SECRET not in str(state) + message


async def test_a_resumed_run_cannot_change_a_locked_setting(server: str, canary: Listener) -> None:
    async with get_client(url=server) as client:
        thread = await client.threads.create()
        tid = thread["thread_id"]
        ctx = {"url_per_query": 2, "review_plan": True}
        await client.runs.wait(tid, "researcher", input={"topic": "EV battery recycling"},
                               context=ctx)  # fmt: skip
        with pytest.raises(Exception, match="base_url"):
            await client.runs.wait(
                tid, "researcher", command={"resume": True},
                context={**ctx, "base_url": canary.url + "/v1"},
            )  # fmt: skip
        out = await client.runs.wait(tid, "researcher", command={"resume": True}, context=ctx)
    assert canary.hits == [] and isinstance(out, dict) and out["status"] == "ok"


def test_a_batch_sent_to_the_server_is_a_served_caller_too(
    server: str, web: FakeWeb, secrets_folder: Path, canary: Listener, tmp_path: Path
) -> None:
    # `deskresearch batch --server` sends a line's settings as the run's context.
    line = {"topic": "EV battery recycling", "search": "corpus", "corpus_dir": str(secrets_folder)}
    file = write_topics(tmp_path / "topics.txt", [json.dumps(line), "Night trains in Europe"])
    out = tmp_path / "out"
    env = {k: v for k, v in loopback_env(web).items() if not k.endswith("_API_KEY")}
    proc = batch(env, str(file), "-o", str(out), "--server", server)
    assert proc.returncode == 4, proc.stderr  # one topic failed
    rows = summary(out)["by_line"]
    assert rows[1]["status"] == "failed" and "corpus_dir" in rows[1]["error"], rows[1]
    assert "DESKRESEARCH_OVERRIDABLE" in rows[1]["error"]
    assert rows[2]["status"] == "ok"  # the other topic ran with the deployment's settings
    written = "".join(p.read_text("utf-8") for p in out.iterdir() if p.is_file())
    assert SECRET not in written and canary.hits == []


async def test_open_settings_and_the_deployments_own_values_still_work(server: str) -> None:
    async with get_client(url=server) as client:
        thread = await client.threads.create()
        out = await client.runs.wait(
            thread["thread_id"], "researcher", input={"topic": "EV battery recycling"},
            # the same values the deployment has, and every open setting, are accepted
            context={"url_per_query": 2, "token_budget": 50_000, "allow_hosts": "127.0.0.0/8",
                     "search": "tavily", "cache": False},
        )  # fmt: skip
    assert isinstance(out, dict) and out["status"] == "ok"


async def test_the_studio_form_is_described_grouped_and_marks_locked_settings(
    server: str, web: FakeWeb
) -> None:
    async with get_client(url=server) as client:
        [assistant] = await client.assistants.search(graph_id="researcher")
        schemas: dict[str, Any] = dict(
            await client.assistants.get_schemas(assistant["assistant_id"])
        )
    for name in ("input_schema", "context_schema", "output_schema"):
        props = schemas[name]["properties"]
        missing = [k for k, v in props.items() if not v.get("description")]
        assert not missing, f"{name}: no description for {missing}"
    form = schemas["context_schema"]["properties"]
    generated = [k for k, v in form.items() if v.get("title") == k.replace("_", " ").title()]
    assert not generated, f"titles in users' words, not field names: {generated}"
    assert {v.get("x-group") for v in form.values()} >= {"Models", "Search", "Pages"}
    assert {k for k, v in form.items() if v.get("readOnly")} == {
        "base_url", "tavily_base_url", "searxng_url", "corpus_dir", "allow_hosts", "cache_path"
    }  # fmt: skip
    assert form["url_per_query"]["maximum"] == 20 and form["url_per_query"]["minimum"] == 1
    # The defaults are what this server will use (its environment), not the class's.
    assert form["tavily_base_url"]["default"] == web.base
    assert form["allow_hosts"]["default"] == LOOPBACK
    assert form["base_url"]["default"] == web.base + "/v1"  # OPENAI_BASE_URL, the fallback
    assert form["searxng_url"]["default"] == "http://bot:***@127.0.0.9:9/"  # masked
    assert form["search"]["default"] == "tavily" and form["cache"]["default"] is False
    shown = json.dumps(schemas)
    assert "searx-password" not in shown and SECRET not in shown
    topic = schemas["input_schema"]["properties"]["topic"]
    assert topic.get("examples") and schemas["input_schema"].get("examples")


async def test_a_served_caller_may_narrow_the_scope_and_a_bad_date_costs_no_call(
    server: str, web: FakeWeb
) -> None:
    async with get_client(url=server) as client:
        thread = await client.threads.create()
        asked = len(web.model.requests)
        with pytest.raises(Exception) as err:
            await client.runs.wait(thread["thread_id"], "researcher",
                                   input={"topic": "EV battery recycling"},
                                   context={"since": "2025-13-40"})  # fmt: skip
        assert "since" in str(err.value) and "not a real date" in str(err.value), err.value
        assert len(web.model.requests) == asked, "refused before any model call"
        fetched = sum(web.fetches.values())
        out = await client.runs.wait(
            thread["thread_id"], "researcher", input={"topic": "EV battery recycling"},
            context={"include_domains": "who.int", "max_rounds": 1},
        )  # fmt: skip
    assert isinstance(out, dict) and out["status"] == "insufficient_evidence"
    assert "outside the scope you set (include_domains=who.int)" in out["reason"]
    assert sum(web.fetches.values()) == fetched, "no page outside the scope was read"
