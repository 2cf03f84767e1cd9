"""The persistent cache: model answers, searches by day, pages with TTL and ETag revalidation."""

import dataclasses
import datetime as dt
import json
from pathlib import Path

import httpx
import pytest
from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from deskresearch.errors import ConfigError, FetchError
from deskresearch.records import CachePolicy, FetchLimits, ModelSpec, SearchSettings, Validators
from deskresearch.services.model.llm import OpenAIChat
from deskresearch.services.search.router import SearchRouter
from deskresearch.services.storage import cache as cache_module
from deskresearch.services.storage.cache import CachedChat, CachedFetcher, CachedSearch
from deskresearch.services.storage.cache_store import CacheStore, answer_key
from deskresearch.services.web.fetch import HttpFetcher
from tests.support.fake_model import FakeModel
from tests.support.fakes import FakeSearch, ScriptedChat, hit
from tests.support.loopback import PAGE_MODIFIED, FakeWeb

pytestmark = pytest.mark.anyio
PAGE = "/pages/heise.de.lithium.html"


class Keywords(BaseModel):
    keywords: list[str]


@pytest.fixture
def policy(tmp_path: Path) -> CachePolicy:
    return CachePolicy(path=str(tmp_path / "cache.sqlite"), page_ttl_s=3600)


def spec(policy: CachePolicy | None) -> ModelSpec:
    return ModelSpec(model="m", base_url="", method="auto", timeout_s=5, cache=policy)


def ask(text: str) -> list[HumanMessage]:
    return [HumanMessage(text)]


async def test_a_repeated_model_call_is_answered_from_the_cache(policy: CachePolicy) -> None:
    inner = ScriptedChat(
        {
            "generate_keywords": [Keywords(keywords=["a", "b"]), Keywords(keywords=["c"])],
            "write_report": ["the report [1]"],
        }
    )
    chat = CachedChat(inner, CacheStore())
    first = await chat.structured(ask("q"), Keywords, spec=spec(policy), stage="generate_keywords")
    again = await chat.structured(ask("q"), Keywords, spec=spec(policy), stage="generate_keywords")
    assert again.value == first.value == Keywords(keywords=["a", "b"])
    assert first.usage["calls"] == 1 and "cached_calls" not in first.usage
    assert again.usage == {
        "stage": "generate_keywords",
        "model": "m",
        "input_tokens": 0,
        "output_tokens": 0,
        "calls": 0,
        "cached_calls": 1,
    }
    other = await chat.structured(ask("q2"), Keywords, spec=spec(policy), stage="generate_keywords")
    assert other.value.keywords == ["c"]  # another prompt is another call
    await chat.text(ask("r"), spec=spec(policy), stage="write_report")
    assert (await chat.text(ask("r"), spec=spec(policy), stage="write_report")).value == (
        "the report [1]"
    )
    assert [stage for stage, _ in inner.calls] == ["generate_keywords"] * 2 + ["write_report"]


async def test_the_cache_outlives_the_process_and_is_keyed_by_model(policy: CachePolicy) -> None:
    await CachedChat(ScriptedChat({"write_report": ["kept"]}), CacheStore()).text(
        ask("r"), spec=spec(policy), stage="write_report"
    )
    later = ScriptedChat({"write_report": ["other model"]})
    chat = CachedChat(later, CacheStore())  # a new store: as a second CLI run opens the file
    assert (await chat.text(ask("r"), spec=spec(policy), stage="write_report")).value == "kept"
    other = dataclasses.replace(spec(policy), model="m2")
    assert (await chat.text(ask("r"), spec=other, stage="write_report")).value == "other model"


async def test_no_policy_means_no_lookup_and_no_storage(policy: CachePolicy) -> None:
    inner = ScriptedChat({"write_report": ["one", "two", "three"]})
    chat = CachedChat(inner, CacheStore())
    assert (await chat.text(ask("r"), spec=spec(None), stage="write_report")).value == "one"
    assert (await chat.text(ask("r"), spec=spec(None), stage="write_report")).value == "two"
    assert not Path(policy.path).exists()
    assert (await chat.text(ask("r"), spec=spec(policy), stage="write_report")).value == "three"
    assert Path(policy.path).exists()


async def test_an_answer_that_no_longer_fits_its_schema_is_asked_again(policy: CachePolicy) -> None:
    class Old(BaseModel):
        words: list[str]

    class New(BaseModel):
        keywords: list[str]

    store = CacheStore()
    key = answer_key("", spec(policy), [("human", "q")], New.model_json_schema())
    await store.put(policy.path, "answer", key, Old(words=["x"]).model_dump_json().encode(), {})
    inner = ScriptedChat({"generate_keywords": [New(keywords=["y"])]})
    reply = await CachedChat(inner, store).structured(
        ask("q"), New, spec=spec(policy), stage="generate_keywords"
    )
    assert reply.value.keywords == ["y"] and len(inner.calls) == 1


def settings(policy: CachePolicy | None, chain: str = "tavily") -> SearchSettings:
    return SearchSettings(
        backends=tuple(chain.split(",")),
        tavily_base_url="http://t",
        corpus_dir="",
        searxng_url="",
        timeout_s=5,
        cache=policy,
    )


async def test_a_search_is_kept_for_the_day(
    policy: CachePolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeSearch({"q": [hit(1), hit(2)], "empty": []})
    search = CachedSearch(SearchRouter({}, fallback=fake), CacheStore())
    first = await search.search("q", max_results=5, settings=settings(policy))
    again = await search.search("q", max_results=5, settings=settings(policy))
    assert not first.cached and again.cached and again.hits == first.hits
    assert again.backend == "tavily"
    await search.search("q", max_results=5, settings=settings(policy, "duckduckgo"))
    await search.search("empty", max_results=5, settings=settings(policy))
    await search.search("empty", max_results=5, settings=settings(policy))  # nothing is not kept
    assert fake.queries == ["q", "q", "empty", "empty"]

    class Tomorrow(dt.datetime):
        @classmethod
        def now(cls, tz: dt.tzinfo | None = None) -> "Tomorrow":
            return cls(2099, 1, 1, tzinfo=tz)

    monkeypatch.setattr(cache_module, "datetime", Tomorrow)
    tomorrow = await search.search("q", max_results=5, settings=settings(policy))
    assert not tomorrow.cached and fake.queries[-1] == "q"


async def test_corpus_results_are_read_fresh(policy: CachePolicy) -> None:
    fake = FakeSearch({"q": [hit(1, raw="text", ctype="text/plain")]})
    search = CachedSearch(SearchRouter({}, fallback=fake), CacheStore())
    for _ in range(2):
        assert not (
            await search.search("q", max_results=5, settings=settings(policy, "corpus"))
        ).cached
    assert fake.queries == ["q", "q"]


def limits(policy: CachePolicy | None, max_bytes: int = 5_000_000) -> FetchLimits:
    return FetchLimits(
        timeout_s=5, max_bytes=max_bytes, max_redirects=3, allow_hosts=("127.0.0.1",), cache=policy
    )


async def test_a_page_is_not_fetched_again_within_its_ttl(
    web: FakeWeb, policy: CachePolicy
) -> None:
    fetcher = CachedFetcher(HttpFetcher(), CacheStore())
    first = await fetcher.fetch(web.url(PAGE), limits=limits(policy))
    # Same page, spelled with tracking parameters: the canonical URL is the key.
    again = await fetcher.fetch(web.url(PAGE) + "?utm_source=x", limits=limits(policy))
    assert first.cached == "" and first.etag and first.last_modified == PAGE_MODIFIED
    assert again.cached == "hit" and again.body == first.body and again.read_on
    assert web.fetches[PAGE] == 1


async def test_a_stale_page_is_revalidated_and_not_downloaded_when_unchanged(
    web: FakeWeb, policy: CachePolicy
) -> None:
    stale = dataclasses.replace(policy, page_ttl_s=0)
    fetcher = CachedFetcher(HttpFetcher(), CacheStore())
    first = await fetcher.fetch(web.url(PAGE), limits=limits(stale))
    again = await fetcher.fetch(web.url(PAGE), limits=limits(stale))
    assert again.cached == "revalidated" and again.body == first.body
    assert web.fetches[PAGE] == 2 and web.not_modified[PAGE] == 1  # asked, not downloaded
    web.page_edits[PAGE] = b"<p>Update: a correction.</p>"
    changed = await fetcher.fetch(web.url(PAGE), limits=limits(stale))
    assert changed.cached == "" and changed.body.endswith(b"a correction.</p>")
    assert web.not_modified[PAGE] == 1
    assert (await fetcher.fetch(web.url(PAGE), limits=limits(stale))).body == changed.body


async def test_a_page_cut_at_a_smaller_limit_is_read_again(
    web: FakeWeb, policy: CachePolicy
) -> None:
    fetcher = CachedFetcher(HttpFetcher(), CacheStore())
    small = await fetcher.fetch(web.url(PAGE), limits=limits(policy, max_bytes=10_000))
    full = await fetcher.fetch(web.url(PAGE), limits=limits(policy))
    assert small.truncated and not full.truncated and full.cached == ""
    smaller = await fetcher.fetch(web.url(PAGE), limits=limits(policy, max_bytes=10_000))
    assert smaller.cached == "hit" and web.fetches[PAGE] == 2


async def test_http_fetcher_sends_validators_and_reports_304(web: FakeWeb) -> None:
    fetcher = HttpFetcher()
    page = await fetcher.fetch(web.url(PAGE), limits=limits(None))
    by_etag = await fetcher.fetch(
        web.url(PAGE), limits=limits(None), validators=Validators(etag=page.etag)
    )
    by_date = await fetcher.fetch(
        web.url(PAGE), limits=limits(None), validators=Validators(last_modified=PAGE_MODIFIED)
    )
    wrong = await fetcher.fetch(
        web.url(PAGE), limits=limits(None), validators=Validators(etag='"nope"')
    )
    assert by_etag.not_modified and by_date.not_modified and by_etag.body == b""
    assert not wrong.not_modified and wrong.body == page.body


def test_an_unusable_cache_file_is_a_config_error_naming_the_fix(tmp_path: Path) -> None:
    bad = tmp_path / "cache.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    chat = CachedChat(ScriptedChat(), CacheStore())
    with pytest.raises(ConfigError, match=r"cache.sqlite cannot be used .*--no-cache"):
        chat.check(spec(CachePolicy(path=str(bad), page_ttl_s=0)))


async def test_a_failing_cache_read_is_a_miss_not_a_failed_run(policy: CachePolicy) -> None:
    store = CacheStore()
    store.open(policy.path).close()  # the connection dies under the store
    inner = ScriptedChat({"write_report": ["fresh"]})
    reply = await CachedChat(inner, store).text(ask("r"), spec=spec(policy), stage="write_report")
    assert reply.value == "fresh" and len(inner.calls) == 1


async def test_a_page_that_failed_for_good_is_remembered_for_the_ttl(
    web: FakeWeb, policy: CachePolicy
) -> None:
    fetcher = CachedFetcher(HttpFetcher(), CacheStore())
    for _ in range(2):
        with pytest.raises(FetchError, match="http_404"):
            await fetcher.fetch(web.url("/status/404"), limits=limits(policy))
    assert web.fetches["/status/404"] == 1
    with pytest.raises(FetchError, match=r"http_404 \(remembered from"):
        await fetcher.fetch(web.url("/status/404"), limits=limits(policy))
    stale = dataclasses.replace(policy, page_ttl_s=0)
    with pytest.raises(FetchError):
        await fetcher.fetch(web.url("/status/404"), limits=limits(stale))
    assert web.fetches["/status/404"] == 2


async def test_a_transient_failure_is_not_remembered(web: FakeWeb, policy: CachePolicy) -> None:
    fetcher = CachedFetcher(HttpFetcher(), CacheStore())
    for _ in range(2):
        with pytest.raises(FetchError, match="http_503"):
            await fetcher.fetch(web.url("/status/503"), limits=limits(policy))
    assert web.fetches["/status/503"] == 2


async def test_answers_from_another_endpoint_are_not_reused(policy: CachePolicy) -> None:
    """The key holds the endpoint the service really calls (its own OPENAI_BASE_URL here)."""
    model = FakeModel()

    def handler(request: httpx.Request) -> httpx.Response:
        code, payload, headers = model.handle(json.loads(request.content))
        return httpx.Response(code, json=payload, headers=headers)

    def chat(base: str) -> CachedChat:
        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": base}
        return CachedChat(OpenAIChat(http_async_client=client, environ=env), store)

    store = CacheStore()
    await chat("http://localhost:11434/v1").text(ask("r"), spec=spec(policy), stage="write_report")
    other = await chat("http://localhost:8000/v1").text(
        ask("r"), spec=spec(policy), stage="write_report"
    )
    assert other.usage["calls"] == 1 and len(model.requests) == 2
