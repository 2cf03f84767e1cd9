"""Search a local folder of .md/.txt/.html/.pdf files with SQLite's FTS5 index (BM25).

The index is built once per folder, in memory, on first search; the files' text travels with
each hit as ``raw_content``, so the page step reads the file we indexed and fetches nothing.

The folder is a boundary: paths are resolved and kept inside it (a symlink that leads out, to
``/proc/self/environ`` or a key file, is skipped), only regular files are read (no FIFOs or
devices, opened without blocking), each file and the whole corpus are bounded in size and count,
and PDF and HTML parsing run in the worker pool under a deadline, like pages from the web.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sqlite3
import stat
from dataclasses import dataclass, field
from pathlib import Path

from deskresearch.errors import SearchError
from deskresearch.records import SearchHit, SearchSettings
from deskresearch.services.search.checks import check_backend
from deskresearch.services.web.pdf import pdf_text
from deskresearch.services.workers import WorkerCrashed, WorkerPool, WorkerTimeout, shared_pool
from deskresearch.text.clean import html_title, visible_text

SUFFIXES = {
    ".md": "text/markdown",
    ".txt": "text/plain",
    ".html": "text/html",
    ".htm": "text/html",
    ".pdf": "application/pdf",
}
MAX_FILE_BYTES = 20_000_000  # a long book as text, or a large PDF
MAX_FILES = 5_000
MAX_TOTAL_BYTES = 200_000_000  # the index keeps every file's text in memory
PARSE_DEADLINE_S = 60.0  # as for a page from the web (services.extract)
_WORD = re.compile(r"\w+", re.UNICODE)
log = logging.getLogger("deskresearch.corpus")


def _fts_query(query: str) -> str:
    """Turn free text into an FTS5 query: any of its words, each quoted (no FTS syntax leaks)."""
    words = {w.lower() for w in _WORD.findall(query) if len(w) > 1}
    return " OR ".join(f'"{w}"' for w in sorted(words))


def _title_of(text: str, content_type: str) -> str:
    if content_type == "text/html" and (title := html_title(text)):
        return title
    for line in text.splitlines():
        if line.strip():
            return line.strip().lstrip("#").strip()[:200]
    return ""


def parse_file(data: bytes, content_type: str) -> tuple[str, str, str, str] | None:
    """Return (content type, title, indexed body, raw text) of one file; runs in a worker."""
    if content_type == "application/pdf":  # indexed and cited as its text layer
        found = pdf_text(data)
        if found is None:
            return None
        pdf_title, raw = found
        return "text/plain", pdf_title, raw, raw
    raw = data.decode("utf-8", errors="replace")
    body = visible_text(raw) if content_type == "text/html" else raw
    return content_type, _title_of(raw, content_type), body, raw


@dataclass
class Listing:
    """The files a folder may contribute, and why others were left out."""

    files: list[tuple[Path, str]] = field(default_factory=list)  # (resolved path, content type)
    skipped: dict[str, int] = field(default_factory=dict)  # reason → count

    def skip(self, reason: str) -> None:
        """Count one file left out."""
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


def list_files(folder: Path) -> Listing:
    """Walk ``folder`` without following links; keep regular files that resolve inside it."""
    listing = Listing()
    total = 0
    seen: set[Path] = set()
    for root, dirs, names in os.walk(folder, followlinks=False):
        dirs.sort()
        for name in sorted(names):
            ctype = SUFFIXES.get(Path(name).suffix.lower())
            if ctype is None:
                continue
            path = Path(root) / name
            real = path.resolve()
            if not real.is_relative_to(folder):
                listing.skip("a link that leads out of the folder")
                continue
            if real in seen:
                continue  # a link to a file already listed
            seen.add(real)
            try:
                info = real.stat()
            except OSError:
                listing.skip("unreadable")
                continue
            if not stat.S_ISREG(info.st_mode):
                listing.skip("not a regular file")
            elif info.st_size > MAX_FILE_BYTES:
                listing.skip(f"larger than {MAX_FILE_BYTES} bytes")
            elif len(listing.files) >= MAX_FILES or total + info.st_size > MAX_TOTAL_BYTES:
                listing.skip(f"past the corpus bound ({MAX_FILES} files, {MAX_TOTAL_BYTES} bytes)")
            else:
                total += info.st_size
                listing.files.append((real, ctype))
    return listing


def read_regular(path: Path, folder: Path) -> bytes | None:
    """Read ``path`` if it is still a regular file inside ``folder`` (checked on the open file)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None
        if not Path(os.path.realpath(path)).is_relative_to(folder):
            return None
        return f.read(MAX_FILE_BYTES + 1)[:MAX_FILE_BYTES]


class CorpusIndex:
    """An in-memory FTS5 index over one folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute(
            "CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, ctype UNINDEXED, title, body,"
            " raw UNINDEXED, tokenize='unicode61 remove_diacritics 2')"
        )

    def add(self, path: Path, parsed: tuple[str, str, str, str]) -> None:
        """Index one parsed file."""
        ctype, title, body, raw = parsed
        self.db.execute(
            "INSERT INTO docs VALUES (?, ?, ?, ?, ?)",
            (str(path), ctype, title or path.stem, body, raw),
        )
        self.db.commit()

    def search(self, query: str, max_results: int) -> list[SearchHit]:
        """Return the best-matching files for ``query``."""
        fts = _fts_query(query)
        if not fts:
            return []
        rows = self.db.execute(
            "SELECT path, ctype, title, snippet(docs, 3, '', '', ' … ', 32), raw FROM docs"
            " WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?",
            (fts, max_results),
        ).fetchall()
        return [
            SearchHit(
                url=Path(path).as_uri(),
                title=title,
                snippet=" ".join(snippet.split()),
                raw_content=raw,
                content_type=ctype,
            )
            for path, ctype, title, snippet, raw in rows
        ]


class CorpusSearch:
    """SearchBackend over local files (``corpus_dir``).

    Args:
        pool: where files are parsed (default: the process-wide worker pool).
        deadline_s: seconds one file may take to parse; a file past it is left out.
    """

    name = "corpus"

    def __init__(self, pool: WorkerPool | None = None, *, deadline_s: float = PARSE_DEADLINE_S):
        self._pool = pool
        self.deadline_s = deadline_s
        self._indexes: dict[Path, CorpusIndex] = {}
        self._lock = asyncio.Lock()

    def check(self, settings: SearchSettings) -> None:
        """Require an existing folder."""
        check_backend(self.name, settings)

    async def _build(self, folder: Path) -> CorpusIndex:
        index = CorpusIndex(folder)
        listing = await asyncio.to_thread(list_files, folder)
        pool = self._pool or shared_pool()
        for path, ctype in listing.files:
            data = await asyncio.to_thread(read_regular, path, folder)
            if data is None:
                listing.skip("changed while being read")
                continue
            try:
                if ctype in ("application/pdf", "text/html"):
                    parsed = await pool.run(parse_file, data, ctype, deadline_s=self.deadline_s)
                else:
                    parsed = parse_file(data, ctype)
            except (WorkerCrashed, WorkerTimeout):
                listing.skip(f"could not be parsed within {self.deadline_s:g}s")
                continue
            if parsed is not None:
                await asyncio.to_thread(index.add, path, parsed)
        if listing.skipped:
            log.warning("corpus %s: files left out: %s", folder, listing.skipped)
        return index

    async def search(
        self, query: str, *, max_results: int, settings: SearchSettings
    ) -> list[SearchHit]:
        """Return the files that best match ``query``."""
        self.check(settings)
        folder = Path(settings.corpus_dir).expanduser().resolve()
        async with self._lock:  # branches share one index per folder, built once
            if folder not in self._indexes:
                self._indexes[folder] = await self._build(folder)
        try:
            return await asyncio.to_thread(self._indexes[folder].search, query, max_results)
        except sqlite3.Error as exc:
            raise SearchError(self.name, query, f"index error: {exc}") from exc
