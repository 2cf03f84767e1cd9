"""Explicit concurrency limits: what reaches a provider is bounded, per endpoint and per host."""

import asyncio
import socket
from collections import Counter
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from deskresearch.config.context import Context
from deskresearch.config.providers import OLLAMA_PORT
from deskresearch.errors import BudgetExhausted, ModelCallError, ModelOutputError
from deskresearch.nodes.rank_urls import Ranking
from deskresearch.records import FetchedPage, FetchLimits, Stage, Usage, Validators
from deskresearch.runscope import RunMeter, metered
from deskresearch.services.model.limits import LimitedChat, LimitedFetcher, Limiter
from tests.support.fakes import ScriptedChat
from tests.support.loopback import FakeWeb, Latency, serve
from tests.support.runs import run

pytestmark = pytest.mark.anyio


class SlowFetcher:
    """Counts pages in flight, overall and per host."""

    def __init__(self) -> None:
        self.now: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()

    async def fetch(
        self, url: str, *, limits: FetchLimits, validators: Validators | None = None
    ) -> FetchedPage:
        host = url.split("/")[2]
        for key in ("all", host):
            self.now[key] += 1
            self.peak[key] = max(self.peak[key], self.now[key])
        await asyncio.sleep(0.02)
        for key in ("all", host):
            self.now[key] -= 1
        return FetchedPage(url=url, content_type="text/html", body=b"x", truncated=False)


async def test_fetches_are_bounded_globally_and_per_host() -> None:
    inner = SlowFetcher()
    fetcher = LimitedFetcher(inner, Limiter())
    limits = FetchLimits(
        timeout_s=5, max_bytes=10_000, max_redirects=0, max_concurrent=3, max_per_host=2
    )
    urls = [f"http://{host}.example/{i}" for host in "abc" for i in range(4)]
    await asyncio.gather(*(fetcher.fetch(u, limits=limits) for u in urls))
    assert inner.peak["all"] == 3
    assert max(inner.peak[f"{h}.example"] for h in "abc") == 2


async def test_a_limiter_works_across_event_loops() -> None:
    limiter = Limiter()

    async def once() -> None:
        async with limiter.slot("x", 1):
            await asyncio.sleep(0)

    await once()
    await asyncio.to_thread(asyncio.run, once())  # another loop: its own semaphore, no error


def peak_model_calls(web: FakeWeb) -> int:
    """The most model calls the web was answering at once."""
    edges = sorted([(c.started, 1) for c in web.log if c.kind == "model"]
                   + [(c.started + c.seconds, -1) for c in web.log if c.kind == "model"])  # fmt: skip
    now = peak = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return peak


async def test_a_run_never_has_more_model_calls_in_flight_than_allowed() -> None:
    stages: set[Stage] = set()
    with serve(FakeWeb(latency=Latency(call_s=0.05))) as web:
        out = await run(web, max_model_calls=2, url_per_query=3)
        stages = {u["stage"] for u in out["usage"]}
    assert out["status"] == "ok" and "summarise_chunk" in stages
    assert peak_model_calls(web) == 2  # the fan-out wanted more (several pages at once): held


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


async def test_a_local_server_gets_two_calls_at_once_unless_told_more() -> None:
    """Ollama answers one call at a time by default and queues the rest, their timeouts running."""
    if not _port_free(OLLAMA_PORT):
        pytest.skip(f"port {OLLAMA_PORT} is taken (an Ollama on this machine?)")
    with serve(FakeWeb(latency=Latency(call_s=0.05), port=OLLAMA_PORT)) as web:
        out = await run(web, base_url=web.base + "/v1", url_per_query=3)
    assert out["status"] == "ok"
    assert peak_model_calls(web) == 2, "the same run takes 16 places on a hosted API"
    assert Context(base_url=web.base + "/v1", max_model_calls=4).summary_spec().max_concurrent == 4
    assert Context(base_url="https://api.example.com/v1").summary_spec().max_concurrent == 16


@pytest.mark.parametrize(
    ("settings", "timeout"),
    [
        ({"summary_model": "ollama:llama3.1"}, 600.0),  # a CPU alone: minutes a summary
        ({"base_url": "http://gpu-box:11434/v1"}, 600.0),  # Ollama's port on another host
        ({"summary_model": "llamacpp:qwen3"}, 600.0),
        ({"base_url": "https://api.example.com/v1"}, 120.0),
        ({"base_url": "http://vllm.lan:8000/v1"}, 120.0),  # vLLM: served as a hosted API is
        ({"base_url": "http://127.0.0.1:8080/v1"}, 600.0),  # llama.cpp's port, on this machine
        ({"base_url": "http://[::1]:1234/v1"}, 600.0),  # LM Studio's
        ({"base_url": "http://127.0.0.2:1234/v1"}, 600.0),
        ({"base_url": "http://proxy.lan:8080/v1"}, 120.0),  # elsewhere: a proxy as likely
        ({"summary_model": "ollama:llama3.1", "model_timeout_s": 45}, 45.0),  # a number is kept
    ],
)
def test_a_local_server_s_calls_may_take_longer_unless_told(
    settings: dict[str, Any], timeout: float
) -> None:
    assert Context(**settings).summary_spec().timeout_s == timeout


def test_limits_come_from_the_context() -> None:
    ctx = Context(max_model_calls=3, max_fetches=5, max_fetches_per_host=1)
    assert ctx.summary_spec().max_concurrent == 3
    limits = ctx.fetch_limits()
    assert (limits.max_concurrent, limits.max_per_host) == (5, 1)


async def test_the_token_budget_travels_with_each_call() -> None:
    """A run resumed in a new process does not replay start_run: its calls still carry the budget."""
    chat = LimitedChat(ScriptedChat({"rank_urls": [Ranking(indices=[0])] * 3}), Limiter())
    spec = Context(token_budget=5).summary_spec()
    assert spec.token_budget == 5
    with metered() as meter:
        first = await chat.structured([HumanMessage("q")], Ranking, spec=spec, stage="rank_urls")
        assert first.usage["input_tokens"] + first.usage["output_tokens"] >= 5
        with pytest.raises(BudgetExhausted):
            await chat.structured([HumanMessage("q")], Ranking, spec=spec, stage="rank_urls")
        unbudgeted = Context(token_budget=0).summary_spec()
        await chat.structured([HumanMessage("q")], Ranking, spec=unbudgeted, stage="rank_urls")
    assert meter.budget_stopped


async def test_each_run_has_its_own_meter_and_nothing_outlives_it() -> None:
    """Two runs side by side: one spends its budget, the other is untouched; no table remains."""
    chat = LimitedChat(ScriptedChat({"rank_urls": [Ranking(indices=[0])] * 4}), Limiter())
    spec = Context(token_budget=5).summary_spec()
    with metered() as one:
        await chat.structured([HumanMessage("q")], Ranking, spec=spec, stage="rank_urls")
    with metered() as two:
        await chat.structured([HumanMessage("q")], Ranking, spec=spec, stage="rank_urls")
    assert one.tokens == two.tokens > 0 and not one.budget_stopped
    assert not [k for k, v in vars(chat).items() if isinstance(v, dict) and v], vars(chat)


async def test_a_runs_listener_hears_each_call_sent_before_it_goes_and_how_it_ended() -> None:
    """What a batch counts a lost attempt by: sent, then answered (with usage, or None)."""
    heard: list[tuple[str, str, int | None]] = []
    script = {"rank_urls": [Ranking(indices=[0]), "not json", ModelCallError("HTTP 500")]}
    inner = ScriptedChat(script)

    def listener(kind: str, stage: Stage, model: str, usage: Usage | None) -> None:
        heard.append((kind, stage, usage["calls"] if usage else None))
        if kind == "sent":
            assert len(inner.calls) == len([h for h in heard if h[0] == "sent"]) - 1, "too late"

    chat = LimitedChat(inner, Limiter())
    spec = Context().summary_spec()
    with metered(RunMeter(listener=listener)):
        await chat.structured([HumanMessage("q")], Ranking, spec=spec, stage="rank_urls")
        with pytest.raises(ModelOutputError):  # answered with nonsense: its tokens still spent
            await chat.structured([HumanMessage("q")], Ranking, spec=spec, stage="rank_urls")
        with pytest.raises(ModelCallError):  # no answer came
            await chat.structured([HumanMessage("q")], Ranking, spec=spec, stage="rank_urls")
    assert heard == [("sent", "rank_urls", None), ("answered", "rank_urls", 1)] * 2 + [
        ("sent", "rank_urls", None), ("answered", "rank_urls", None)
    ]  # fmt: skip
