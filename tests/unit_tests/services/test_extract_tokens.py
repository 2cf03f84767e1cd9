from pathlib import Path

import pytest

from deskresearch.services.extract import TrafilaturaExtractor
from deskresearch.services.tokens import (
    DEFAULT_WINDOW,
    TiktokenCounter,
    context_window,
    seed_tiktoken_cache,
)

pytestmark = pytest.mark.anyio
PAGES = Path(__file__).parents[2] / "fixtures" / "pages"


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


def test_tiktoken_loads_offline_from_the_seeded_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert seed_tiktoken_cache("o200k_base")
    assert len(list(tmp_path.iterdir())) == 1
    counter = TiktokenCounter()
    assert counter._encoding is not None
    assert counter.count("hello world") == 2


def test_token_count_falls_back_to_characters_when_tiktoken_is_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(
        "TIKTOKEN_CACHE_DIR", ""
    )  # caching disabled: nothing can be seeded, no network
    counter = TiktokenCounter()
    monkeypatch.setattr(
        "tiktoken.get_encoding", lambda name: (_ for _ in ()).throw(ConnectionError("offline"))
    )
    assert counter.count("x" * 40) == 10


async def test_split_keeps_every_piece_under_the_limit() -> None:
    text = "\n\n".join(f"Paragraph {i}. " + "word " * 50 for i in range(30))
    pieces = await TiktokenCounter().split(text, max_tokens=120)
    counter = TiktokenCounter()
    assert len(pieces) > 10 and all(counter.count(p) <= 120 for p in pieces)
    assert "Paragraph 29." in pieces[-1]


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
