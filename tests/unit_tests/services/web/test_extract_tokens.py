import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from deskresearch.errors import ConfigError, FetchError
from deskresearch.services.model import tokens
from deskresearch.services.model.tokens import (
    DEFAULT_WINDOW,
    TiktokenCounter,
    context_window,
    encoding,
    even_size,
    seed_tiktoken_cache,
)
from deskresearch.services.web.extract import TrafilaturaExtractor
from deskresearch.services.workers import WorkerCrashed, WorkerPool, WorkerTimeout, shared_pool
from tests.support import jobs

T = TypeVar("T")
pytestmark = pytest.mark.anyio
PAGES = Path(__file__).parents[3] / "fixtures" / "pages"


@pytest.fixture
def fresh_encoding() -> Iterator[None]:
    """Forget the loaded tokenizer before and after: the test changes how it loads."""
    encoding.cache_clear()
    yield
    encoding.cache_clear()


async def test_extract_returns_markdown_text_and_metadata() -> None:
    body = (PAGES / "heise.de.lithium.html").read_bytes()
    page = await TrafilaturaExtractor().extract(
        body, url="https://heise.de/x", content_type="text/html"
    )
    assert page is not None
    assert page.title == "Lithium aus dem Schredder" and page.published == "2019-06-20"
    assert page.site == "Technology Review"
    assert page.text.startswith("Die Ökobilanz") and "---" not in page.text[:5]
    assert "<div" not in page.text


async def test_extract_passes_plain_text_through_and_returns_none_for_nothing() -> None:
    ex = TrafilaturaExtractor()
    page = await ex.extract(b"# Notes\nhello", url="file:///n.md", content_type="text/markdown")
    assert page is not None and page.text == "# Notes\nhello"
    assert (
        await ex.extract(b"<html><body></body></html>", url="u", content_type="text/html") is None
    )


@pytest.mark.usefixtures("fresh_encoding")
def test_tiktoken_loads_offline_from_the_seeded_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert seed_tiktoken_cache("o200k_base")
    assert len(list(tmp_path.iterdir())) == 1
    assert encoding() is not None
    assert TiktokenCounter().count("hello world") == 2


@pytest.mark.usefixtures("fresh_encoding")
def test_token_count_falls_back_to_characters_when_tiktoken_is_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # caching disabled: nothing can be seeded, and there is no network
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    monkeypatch.setattr(
        "tiktoken.get_encoding", lambda name: (_ for _ in ()).throw(ConnectionError("offline"))
    )
    assert TiktokenCounter().count("x" * 40) == 10


def test_fits_answers_short_texts_without_the_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = TiktokenCounter()
    assert counter.fits("über " * 20, 200)  # 120 bytes ≤ 200: no count needed
    monkeypatch.setattr(tokens, "count_tokens", lambda text: 1_000_000)
    assert counter.fits("short", 5)
    assert not counter.fits("x" * 100, 50)  # more bytes than the limit: counted (patched)


async def test_a_thread_pool_and_a_process_pool_give_the_same_chunks() -> None:
    text = "\n\n".join(f"Absatz {i}. " + "Wort " * 80 for i in range(20))
    in_thread = await TiktokenCounter(WorkerPool(workers=0)).split(text, max_tokens=150)
    pool = WorkerPool(workers=1)
    try:
        in_process = await TiktokenCounter(pool).split(text, max_tokens=150)
    finally:
        pool.close()
    assert in_thread == in_process and len(in_thread) > 5


async def test_a_crashed_worker_is_reported_and_the_pool_recovers() -> None:
    pool = WorkerPool(workers=1)
    try:
        with pytest.raises(WorkerCrashed):
            await pool.run(jobs.die)
        assert await pool.run(jobs.double, 21) == 42
    finally:
        pool.close()


async def test_a_job_past_its_deadline_frees_its_worker_and_spares_its_neighbours() -> None:
    pool = WorkerPool(workers=2)
    try:
        await pool.run(jobs.double, 1)  # the workers are up
        neighbour = asyncio.ensure_future(pool.run(jobs.slow_double, 4, 1.5))
        started = time.monotonic()
        with pytest.raises(WorkerTimeout):
            await pool.run(jobs.hang, deadline_s=0.5)
        assert time.monotonic() - started < 5
        # The neighbour's worker was killed with the stuck one: it ran again, once, and finished.
        assert await neighbour == 8
        assert await pool.run(jobs.double, 21, deadline_s=30) == 42
    finally:
        pool.close()


class HangingPool(WorkerPool):
    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        raise WorkerTimeout(fn.__name__)


async def test_a_page_past_the_extraction_deadline_is_a_fetch_error() -> None:
    with pytest.raises(FetchError, match=r"extraction took longer than 60s"):
        await TrafilaturaExtractor(HangingPool()).extract(
            b"<p>x</p>", url="u", content_type="text/html"
        )


class CrashingPool(WorkerPool):
    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        raise WorkerCrashed(fn.__name__)


async def test_a_page_that_kills_the_extractor_is_a_fetch_error_not_a_crash() -> None:
    with pytest.raises(FetchError, match="extractor crashed"):
        await TrafilaturaExtractor(CrashingPool()).extract(
            b"<p>x</p>", url="u", content_type="text/html"
        )


async def test_split_keeps_every_piece_under_the_limit() -> None:
    text = "\n\n".join(f"Paragraph {i}. " + "word " * 50 for i in range(30))
    pieces = await TiktokenCounter().split(text, max_tokens=120)
    counter = TiktokenCounter()
    assert len(pieces) > 10 and all(counter.count(p) <= 120 for p in pieces)
    assert "Paragraph 29." in pieces[-1]


async def test_a_long_text_is_split_into_even_pieces_not_full_ones_and_a_remainder() -> None:
    counter = TiktokenCounter()
    text = "\n\n".join(f"Paragraph {i}. " + "word " * 40 for i in range(30))
    total = counter.count(text)
    assert 1000 < total < 2000  # two pieces of at most 1,000 tokens
    pieces = await counter.split(text, max_tokens=1000)
    sizes = [counter.count(p) for p in pieces]
    assert len(pieces) == 2 and max(sizes) <= 1000
    # Filled to the limit, the second piece would hold what the first left: under 40 %.
    assert min(sizes) >= 0.4 * total, sizes
    assert "Paragraph 0." in pieces[0] and "Paragraph 29." in pieces[-1]


async def test_even_pieces_never_cost_a_call_more_than_full_ones() -> None:
    counter = TiktokenCounter()
    # Three paragraphs of about 300 tokens at a limit of 630: even shares (about 500) cannot
    # hold a paragraph and a half, so they would make 3 pieces where full ones make 2.
    text = "\n\n".join(" ".join(f"w{p}x{i}" for i in range(75)) for p in range(3))
    sizes = [counter.count(p) for p in text.split("\n\n")]
    assert all(280 <= n <= 330 for n in sizes), sizes
    pieces = await counter.split(text, max_tokens=630)
    assert len(pieces) == 2 and all(counter.count(p) <= 630 for p in pieces)


def test_an_even_size_of_nothing_is_no_division_by_zero() -> None:
    assert even_size(0, 5) == 0 and even_size(9, 5) == 5


@pytest.mark.parametrize(
    ("name", "window"),
    [
        ("gpt-4o-mini", 128_000),
        ("ollama:llama3.1:8b", 131_072),
        ("openai/gpt-4.1", 1_047_576),
        ("my-finetune", DEFAULT_WINDOW),
        ("", DEFAULT_WINDOW),
    ],
)
def test_context_window_knows_common_models_and_defaults_safely(name: str, window: int) -> None:
    assert context_window(name) == window


@pytest.mark.parametrize(("raw", "workers"), [("0", 0), ("3", 3), ("", None)])
def test_the_shared_pool_size_comes_from_the_environment(
    raw: str, workers: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DESKRESEARCH_WORKERS", raw)
    shared_pool.cache_clear()
    try:
        assert shared_pool().workers == (WorkerPool().workers if workers is None else workers)
    finally:
        shared_pool.cache_clear()


@pytest.mark.parametrize("raw", ["-1", "two", "65"])
def test_a_bad_worker_count_names_the_variable(raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESKRESEARCH_WORKERS", raw)
    shared_pool.cache_clear()
    try:
        with pytest.raises(ConfigError, match="DESKRESEARCH_WORKERS"):
            shared_pool()
    finally:
        shared_pool.cache_clear()


@pytest.mark.parametrize("charset", ["latin-1", "cp1252", "utf-8"])
@pytest.mark.parametrize("content_type", ["text/html", "text/plain"])
async def test_text_without_a_declared_charset_is_decoded_right(
    charset: str, content_type: str
) -> None:
    text = "Die Ökobilanz der Akkus hängt vom Strommix ab; größere Anlagen wären nötig. " * 8
    body = (
        f"<html><body><article><p>{text}</p></article></body></html>"
        if "html" in content_type
        else text
    )
    page = await TrafilaturaExtractor(WorkerPool(workers=0)).extract(
        body.encode(charset), url="http://x.example/", content_type=content_type
    )
    assert page is not None and "Ökobilanz" in page.text and "größere" in page.text


@pytest.mark.parametrize(
    ("declared", "actual"),
    [
        ("iso-8859-1", "utf-8"),
        ("utf-8", "latin-1"),
        ("windows-1252", "utf-8"),
        ("shift_jis", "utf-8"),
    ],
)
async def test_a_wrongly_declared_charset_does_not_garble_the_text(
    declared: str, actual: str
) -> None:
    text = "Die Ökobilanz der Akkus hängt vom Strommix ab; größere Anlagen wären nötig. " * 8
    head = f'<head><meta charset="{declared}"></head>'
    body = f"<html>{head}<body><article><p>{text}</p></article></body></html>".encode(actual)
    page = await TrafilaturaExtractor(WorkerPool(workers=0)).extract(
        body, url="http://x.example/", content_type="text/html"
    )
    assert page is not None and "Ökobilanz" in page.text and "größere Anlagen wären" in page.text
