from pathlib import Path

import pytest

from deskresearch.errors import ConfigError, SearchError
from deskresearch.records import SearchSettings
from deskresearch.services.search.corpus import CorpusSearch
from deskresearch.services.search.tavily import TavilySearch
from tests.support.engines import make_pdf
from tests.support.loopback import FakeWeb

pytestmark = pytest.mark.anyio


def settings(
    base: str = "", corpus: str = "", backend: str = "tavily", searxng: str = ""
) -> SearchSettings:
    return SearchSettings(
        backends=tuple(backend.split(",")),
        tavily_base_url=base or "http://127.0.0.1:9",
        corpus_dir=corpus,
        searxng_url=searxng,
        timeout_s=5,
    )


async def test_tavily_search_goes_through_the_real_client_to_the_base_url(web: FakeWeb) -> None:
    tavily = TavilySearch(environ={"TAVILY_API_KEY": "tvly-test"})
    hits = await tavily.search("lithium", max_results=3, settings=settings(web.base))
    assert len(hits) == 3 and all(h["url"].startswith(web.base) for h in hits)
    assert web.searches[0]["query"] == "lithium" and web.searches[0]["max_results"] == 3
    assert web.search_headers[0]["Authorization"] == "Bearer tvly-test"


@pytest.mark.parametrize(("status", "transient"), [(429, True), (500, True), (400, False)])
async def test_tavily_errors_become_search_errors(
    web: FakeWeb, status: int, transient: bool
) -> None:
    web.search_failures["q"] = status
    with pytest.raises(SearchError) as err:
        await TavilySearch(environ={"TAVILY_API_KEY": "k"}).search(
            "q", max_results=3, settings=settings(web.base)
        )
    assert err.value.transient is transient and err.value.backend == "tavily"


async def test_tavily_401_is_a_config_error(web: FakeWeb) -> None:
    web.search_failures["q"] = 401
    with pytest.raises(ConfigError, match="TAVILY_API_KEY"):
        await TavilySearch(environ={"TAVILY_API_KEY": "bad"}).search(
            "q", max_results=3, settings=settings(web.base)
        )


async def test_tavily_unreachable_is_transient() -> None:
    with pytest.raises(SearchError) as err:
        await TavilySearch(environ={"TAVILY_API_KEY": "k"}).search(
            "q", max_results=3, settings=settings()
        )
    assert err.value.transient


async def test_corpus_search_ranks_files_by_bm25_and_carries_their_text(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        "# Lithium recycling\nLithium lithium batteries are recycled.", encoding="utf-8"
    )
    (tmp_path / "b.txt").write_text("Bananas and bread.", encoding="utf-8")
    (tmp_path / "c.html").write_text(
        "<html><title>Akkus</title><body>Lithium in Akkus</body></html>", encoding="utf-8"
    )
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 lithium")
    (tmp_path / "d.pdf").write_bytes(
        make_pdf("Lithium report\nRecovery reached 80 percent.", "PDF title")
    )
    hits = await CorpusSearch().search(
        "lithium batteries?",
        max_results=5,
        settings=settings(corpus=str(tmp_path), backend="corpus"),
    )
    names = [Path(h["url"].removeprefix("file://")).name for h in hits]
    assert names[0] == "a.md" and set(names) == {"a.md", "c.html", "d.pdf"}
    assert hits[0]["title"] == "Lithium recycling" and hits[0]["content_type"] == "text/markdown"
    pdf = hits[names.index("d.pdf")]
    assert pdf["title"] == "PDF title" and pdf["content_type"] == "text/plain"
    assert pdf["raw_content"] and "80 percent" in pdf["raw_content"], "the PDF's text layer"


def test_corpus_requires_an_existing_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--corpus-dir"):
        CorpusSearch().check(settings(backend="corpus"))
    with pytest.raises(ConfigError, match="not a folder"):
        CorpusSearch().check(settings(corpus=str(tmp_path / "missing"), backend="corpus"))
