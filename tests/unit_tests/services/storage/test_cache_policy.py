"""The cache answers after the network policy, keys on every input, and keeps its file private."""

import stat
from pathlib import Path

import pytest

from deskresearch.errors import FetchError, RefusedURL
from deskresearch.records import CachePolicy, FetchLimits, SearchSettings
from deskresearch.services.search.corpus import CorpusSearch
from deskresearch.services.search.router import SearchRouter
from deskresearch.services.storage.cache import CachedFetcher, CachedSearch
from deskresearch.services.storage.cache_store import CacheStore
from deskresearch.services.web.fetch import HttpFetcher
from tests.support.fakes import FakeSearch, hit
from tests.support.loopback import FakeWeb, serve

pytestmark = pytest.mark.anyio
PAGE = "/pages/heise.de.lithium.html"


@pytest.fixture
def policy(tmp_path: Path) -> CachePolicy:
    return CachePolicy(path=str(tmp_path / "cache" / "cache.sqlite"), page_ttl_s=3600)


def limits(policy: CachePolicy, *allow: str) -> FetchLimits:
    return FetchLimits(
        timeout_s=5, max_bytes=1_000_000, max_redirects=2, allow_hosts=allow, cache=policy
    )


async def test_a_cached_page_is_not_served_to_a_run_whose_policy_refuses_it(
    web: FakeWeb, policy: CachePolicy
) -> None:
    fetcher = CachedFetcher(HttpFetcher(), CacheStore())
    await fetcher.fetch(web.url(PAGE), limits=limits(policy, "127.0.0.0/8"))
    with pytest.raises(RefusedURL, match="loopback"):
        await fetcher.fetch(web.url(PAGE), limits=limits(policy))  # public addresses only
    assert web.fetches[PAGE] == 1


async def test_a_refusal_is_not_remembered_for_a_run_that_allows_the_host(
    web: FakeWeb, policy: CachePolicy
) -> None:
    fetcher = CachedFetcher(HttpFetcher(), CacheStore())
    with pytest.raises(RefusedURL):
        await fetcher.fetch(web.url(PAGE), limits=limits(policy))
    page = await fetcher.fetch(web.url(PAGE), limits=limits(policy, "127.0.0.0/8"))
    assert b"Lithium" in page.body and web.fetches[PAGE] == 1


async def test_a_failure_remembered_behind_a_redirect_is_not_replayed_to_a_stricter_run(
    policy: CachePolicy,
) -> None:
    """A remembered 404 would fall back to the snippet; a refused hop must not (no source)."""
    with serve(FakeWeb(hosts=2)) as web:
        front = f"http://127.0.0.2:{web.port}/redirect-to?url={web.url('/status/404')}"
        fetcher = CachedFetcher(HttpFetcher(), CacheStore())
        with pytest.raises(FetchError, match="http_404"):
            await fetcher.fetch(front, limits=limits(policy, "127.0.0.0/8"))
        with pytest.raises(RefusedURL, match="127.0.0.1, a loopback address"):
            await fetcher.fetch(front, limits=limits(policy, "127.0.0.2/32"))
        with pytest.raises(FetchError, match="remembered"):  # the first run's policy: replayed
            await fetcher.fetch(front, limits=limits(policy, "127.0.0.0/8"))
    assert web.fetches["/status/404"] == 1


async def test_search_entries_are_keyed_by_the_corpus_folder(
    policy: CachePolicy, tmp_path: Path
) -> None:
    empty, notes = tmp_path / "empty", tmp_path / "notes"
    empty.mkdir()
    notes.mkdir()
    (notes / "lithium.md").write_text("# Lithium\n\nLithium recycling in Europe reached 80%.")
    web = FakeSearch({"lithium recycling": [hit(1)]})
    search = CachedSearch(SearchRouter({"corpus": CorpusSearch()}, fallback=web), CacheStore())

    def chain(folder: Path) -> SearchSettings:
        return SearchSettings(backends=("corpus", "tavily"), tavily_base_url="http://t",
                              corpus_dir=str(folder), searxng_url="", timeout_s=5, cache=policy)  # fmt: skip

    first = await search.search("lithium recycling", max_results=5, settings=chain(empty))
    second = await search.search("lithium recycling", max_results=5, settings=chain(notes))
    assert first.backend == "tavily" and second.backend == "corpus"
    assert second.hits[0]["url"].endswith("lithium.md")


async def test_the_cache_file_is_readable_by_its_owner_only(policy: CachePolicy) -> None:
    CacheStore().open(policy.path)
    path = Path(policy.path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    for extra in (Path(policy.path + "-wal"), Path(policy.path + "-shm")):
        if extra.exists():
            assert stat.S_IMODE(extra.stat().st_mode) & 0o077 == 0


async def test_an_existing_world_readable_cache_file_is_tightened(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    path.touch(mode=0o644)
    path.chmod(0o644)
    CacheStore().open(str(path))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
