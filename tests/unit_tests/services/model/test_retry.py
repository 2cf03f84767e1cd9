"""Model retries through the real ChatOpenAI: Retry-After, backoff, the per-run cap, pacing."""

import asyncio
import time
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from deskresearch.errors import ConfigError, ModelCallError
from deskresearch.nodes.keywords import Keywords
from deskresearch.nodes.rank_urls import Ranking
from deskresearch.records import ModelSpec
from deskresearch.runscope import metered
from deskresearch.services.model.limits import LimitedChat, Limiter
from deskresearch.services.model.retry import RetryingChat, backoff_delay
from tests.support.fake_model import FakeModel, chat_over

pytestmark = pytest.mark.anyio
MSGS = [HumanMessage("<topic>\nbatteries\n</topic>")]


def spec(**kw: Any) -> ModelSpec:
    kw.setdefault("backoff_s", 0.01)
    return ModelSpec(model="m", base_url="http://fake/v1", method="json_schema", timeout_s=5, **kw)


def retrying(model: FakeModel, status: int | None = None) -> RetryingChat:
    limiter = Limiter()
    return RetryingChat(LimitedChat(chat_over(model, status=status), limiter), limiter)


async def ask(chat: RetryingChat, **kw: Any) -> Any:
    return await chat.structured(MSGS, Keywords, spec=spec(**kw), stage="generate_keywords")


async def test_transient_errors_are_retried_until_an_answer() -> None:
    model = FakeModel()
    model.fail("Keywords", "http_500", "http_429", "http_503")
    reply = await ask(retrying(model))
    assert reply.value.keywords and len(model.requests) == 4


async def test_gives_up_after_max_attempts_with_a_non_transient_error() -> None:
    model = FakeModel()
    model.fail("Keywords", *["http_500"] * 5)
    with pytest.raises(ModelCallError, match="gave up after 3 attempts") as err:
        await ask(retrying(model), max_attempts=3)
    assert not err.value.transient, "the graph must not retry again on top"
    assert len(model.requests) == 3


async def test_retry_after_holds_back_every_call_to_the_endpoint() -> None:
    model = FakeModel(retry_after="0.6")
    model.fail("Keywords", "http_429")
    chat = retrying(model)
    started = time.monotonic()
    first, second = await asyncio.gather(ask(chat), ask(chat))
    assert first.value.keywords and second.value.keywords
    # One call got the 429; the retry waited 0.6 s. The other call either went before the 429
    # or waited out the same cool-down: no call reached the server inside the window after it.
    assert time.monotonic() - started >= 0.6
    assert len(model.requests) == 3


async def rank(chat: RetryingChat, **kw: Any) -> Any:
    return await chat.structured(MSGS, Ranking, spec=spec(**kw), stage="rank_urls")


async def test_the_run_retry_budget_is_shared_by_all_gathering_calls() -> None:
    model = FakeModel()
    model.fail("Ranking", *["http_500"] * 10)
    chat = retrying(model)
    with metered():
        with pytest.raises(ModelCallError, match="2 retries are spent"):
            await rank(chat, max_attempts=10, run_retries=2)
        assert len(model.requests) == 3
        with pytest.raises(ModelCallError, match="spent"):
            await rank(chat, max_attempts=10, run_retries=2)
        assert len(model.requests) == 4, "the budget stays spent: one attempt, no retry"
        # The steps no page can route around keep their own attempts.
        model.fail("Keywords", "http_500", "http_500")
        reply = await ask(chat, max_attempts=3, run_retries=2)
    assert reply.value.keywords and len(model.requests) == 7


async def test_an_invalid_key_is_never_retried() -> None:
    model = FakeModel()
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        await ask(retrying(model, status=401))
    assert len(model.requests) == 1


async def test_pacing_spaces_out_requests() -> None:
    model = FakeModel()
    chat = retrying(model)
    started = time.monotonic()
    await asyncio.gather(*(ask(chat, requests_per_s=10) for _ in range(4)))
    assert time.monotonic() - started >= 0.3, "4 requests at 10/s take at least 0.3 s"


def test_backoff_grows_with_jitter_and_respects_retry_after() -> None:
    delays = [backoff_delay(a, 1.0, None) for a in (1, 2, 3, 4)]
    assert 0.5 <= delays[0] <= 1.0 and 4.0 <= delays[3] <= 8.0
    assert len({backoff_delay(3, 1.0, None) for _ in range(20)}) > 1, "jittered"
    assert 5.0 <= backoff_delay(1, 1.0, 5.0) <= 5.25
    assert backoff_delay(30, 1.0, None) <= 60.0
