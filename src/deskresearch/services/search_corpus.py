"""Search a local folder of .md/.txt/.html/.pdf files with SQLite's FTS5 index (BM25).

The index is built once per folder, in memory, on first search; the files' text travels with
each hit as ``raw_content``, so the page step reads the file we indexed and fetches nothing.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from pathlib import Path

from deskresearch.errors import ConfigError, SearchError
from deskresearch.pdf import pdf_text
from deskresearch.records import SearchHit, SearchSettings
from deskresearch.text import html_title, visible_text

SUFFIXES = {
    ".md": "text/markdown",
    ".txt": "text/plain",
    ".html": "text/html",
    ".htm": "text/html",
    ".pdf": "application/pdf",
}
MAX_FILE_BYTES = 20_000_000
_WORD = re.compile(r"\w+", re.UNICODE)


def _fts_query(query: str) -> str:
    """Turn free text into an FTS5 query: any of its words, each quoted (no FTS syntax leaks)."""
    words = {w.lower() for w in _WORD.findall(query) if len(w) > 1}
    return " OR ".join(f'"{w}"' for w in sorted(words))


def _title_of(path: Path, text: str, content_type: str) -> str:
    if content_type == "text/html" and (title := html_title(text)):
        return title
    for line in text.splitlines():
        if line.strip():
            return line.strip().lstrip("#").strip()[:200]
    return path.stem


class CorpusIndex:
    """An in-memory FTS5 index over one folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute(
            "CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, ctype UNINDEXED, title, body,"
            " raw UNINDEXED, tokenize='unicode61 remove_diacritics 2')"
        )
        for path in sorted(folder.rglob("*")):
            ctype = SUFFIXES.get(path.suffix.lower())
            if ctype is None or not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
                continue
            data = path.read_bytes()
            if ctype == "application/pdf":  # indexed and cited as its text layer
                found = pdf_text(data)
                if found is None:
                    continue
                pdf_title, raw = found
                ctype, title, body = "text/plain", pdf_title or path.stem, raw
            else:
                raw = data.decode("utf-8", errors="replace")
                body = visible_text(raw) if ctype == "text/html" else raw
                title = _title_of(path, raw, ctype)
            self.db.execute(
                "INSERT INTO docs VALUES (?, ?, ?, ?, ?)",
                (str(path.resolve()), ctype, title, body, raw),
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
    """SearchBackend over local files (``corpus_dir``)."""

    name = "corpus"

    def __init__(self) -> None:
        self._indexes: dict[Path, CorpusIndex] = {}
        self._lock = asyncio.Lock()

    def check(self, settings: SearchSettings) -> None:
        """Require an existing folder."""
        if not settings.corpus_dir:
            raise ConfigError(
                "search=corpus needs a folder: set --corpus-dir or DESKRESEARCH_CORPUS_DIR"
            )
        if not Path(settings.corpus_dir).expanduser().is_dir():
            raise ConfigError(
                f"corpus_dir={settings.corpus_dir!r} is not a folder: point --corpus-dir at "
                "a folder of .md/.txt/.html/.pdf files"
            )

    async def search(
        self, query: str, *, max_results: int, settings: SearchSettings
    ) -> list[SearchHit]:
        """Return the files that best match ``query``."""
        self.check(settings)
        folder = Path(settings.corpus_dir).expanduser().resolve()
        async with self._lock:  # branches share one index per folder, built once
            if folder not in self._indexes:
                self._indexes[folder] = await asyncio.to_thread(CorpusIndex, folder)
        try:
            return await asyncio.to_thread(self._indexes[folder].search, query, max_results)
        except sqlite3.Error as exc:
            raise SearchError(self.name, query, f"index error: {exc}") from exc
