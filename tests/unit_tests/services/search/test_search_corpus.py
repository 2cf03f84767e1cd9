"""The corpus folder is a boundary: no symlinks out, regular files only, bounded, parsed in workers."""

import os
import time
from pathlib import Path

import pytest

from deskresearch.records import SearchSettings
from deskresearch.services.search import corpus as search_corpus
from deskresearch.services.search.corpus import CorpusSearch
from deskresearch.services.workers import WorkerPool

pytestmark = pytest.mark.anyio
SECRET = "OPENAI_API_KEY=sk-corpus-canary-0123456789 lithium recycling battery"


def settings(folder: Path) -> SearchSettings:
    return SearchSettings(backends=("corpus",), tavily_base_url="http://t",
                          corpus_dir=str(folder), searxng_url="", timeout_s=5)  # fmt: skip


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    (folder / "sub").mkdir(parents=True)
    (folder / "notes.md").write_text("# Notes\n\nLithium recycling of battery cells in Europe.")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    (folder / "leak.txt").symlink_to(outside / "secret.txt")
    (folder / "sub" / "escape").symlink_to(outside, target_is_directory=True)
    (folder / "inside-link.md").symlink_to(folder / "notes.md")
    return folder


async def test_links_out_of_the_folder_are_never_read(corpus: Path) -> None:
    hits = await CorpusSearch().search("lithium recycling battery", max_results=10,
                                       settings=settings(corpus))  # fmt: skip
    assert hits and all("sk-corpus-canary" not in (h["raw_content"] or "") for h in hits)
    assert all(Path(h["url"].removeprefix("file://")).is_relative_to(corpus) for h in hits)


async def test_special_files_are_skipped_without_blocking(corpus: Path) -> None:
    os.mkfifo(corpus / "pipe.txt")  # reading it would block forever
    hits = await CorpusSearch().search("lithium", max_results=10, settings=settings(corpus))
    assert [Path(h["url"]).name for h in hits] == ["notes.md"]


async def test_size_and_count_bounds_hold(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_corpus, "MAX_FILE_BYTES", 200)
    (corpus / "big.md").write_text("lithium " * 100)
    listing = search_corpus.list_files(corpus.resolve())
    assert [p.name for p, _ in listing.files] == ["notes.md"]
    assert listing.skipped["larger than 200 bytes"] == 1
    monkeypatch.setattr(search_corpus, "MAX_FILES", 0)
    assert search_corpus.list_files(corpus.resolve()).files == []


async def test_a_pdf_that_hangs_the_parser_is_left_out_at_the_deadline(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (corpus / "slow.pdf").write_bytes(b"%PDF-1.4 stand-in")
    pool = WorkerPool(0)  # one thread: the job is abandoned at its deadline
    calls: list[str] = []

    real_parse = search_corpus.parse_file

    def parse(data: bytes, ctype: str) -> tuple[str, str, str, str] | None:
        calls.append(ctype)
        if ctype == "application/pdf":
            time.sleep(1.0)
        return real_parse(data, ctype)

    monkeypatch.setattr(search_corpus, "parse_file", parse)
    backend = CorpusSearch(pool, deadline_s=0.2)
    hits = await backend.search("lithium", max_results=5, settings=settings(corpus))
    assert [Path(h["url"]).name for h in hits] == ["notes.md"] and "application/pdf" in calls
