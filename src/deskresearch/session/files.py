"""Report files: never overwritten silently, never through a symlink, never half-written.

Without ``--overwrite`` the pair ``<slug>.md`` / ``<slug>.json`` takes the first free name
(``<slug>-2.md``, ...): each file is created with O_EXCL, which fails on any existing name, a
symlink included, so nothing is followed and a name taken meanwhile moves on to the next one.
With ``--overwrite`` each file is written to a temporary file beside it and renamed over the
name: a symlink there is replaced, not followed, and a reader never sees half a file.
"""

from __future__ import annotations

import itertools
import json
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from slugify import slugify

MAX_SLUG_CHARS = 80
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def slug_for(topic: str) -> str:
    """Return a file-name-safe slug for any topic (unicode transliterated, length capped)."""
    return slugify(topic, max_length=MAX_SLUG_CHARS, word_boundary=True) or "research"


def _create(path: Path, text: str) -> None:
    """Create ``path`` with ``text``; FileExistsError when the name is taken (even by a link)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


def _replace(path: Path, text: str) -> None:
    """Write ``text`` beside ``path``, then rename it over ``path`` (a link there is replaced)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def report_texts(
    result: Mapping[str, Any], *, topic: str, language: str, fmt: str
) -> dict[str, str]:
    """The report in the formats ``fmt`` asks for ("md", "html", "md+html"), by file suffix."""
    texts = {}
    if "md" in fmt:
        texts[".md"] = str(result.get("report", ""))
    if "html" in fmt:
        from deskresearch.report.html import render_html  # only when asked: a light start-up

        texts[".html"] = render_html(result, topic=topic, language=language)
    return texts


def write_files(
    out_dir: Path,
    slug: str,
    texts: dict[str, str],
    document: Callable[[dict[str, Path]], dict[str, Any]],
    *,
    overwrite: bool = False,
) -> list[Path]:
    """Write ``<slug><suffix>`` for each of ``texts`` (".md", ".html"), then ``<slug>.json``.

    All share one stem: the first under which none of them exists. ``document(paths)`` builds
    the JSON document once the names are known (it records them; keys are the suffixes).
    Returns the paths written, the JSON last.

    Raises:
        OSError: the folder or a file cannot be written.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    for n in itertools.count(1):
        stem = slug if n == 1 else f"{slug}-{n}"
        paths = {suffix: out_dir / f"{stem}{suffix}" for suffix in [*texts, ".json"]}
        contents = {**texts, ".json": ""}
        contents[".json"] = json.dumps(document(paths), ensure_ascii=False, indent=2) + "\n"
        if overwrite:
            for suffix, path in paths.items():
                _replace(path, contents[suffix])
            return list(paths.values())
        if any(os.path.lexists(p) for p in paths.values()):
            continue
        written: list[Path] = []
        try:
            for suffix, path in paths.items():
                _create(path, contents[suffix])
                written.append(path)
        except FileExistsError:  # taken meanwhile: this stem is not ours after all
            for path in written:
                path.unlink()
            continue
        return written
    raise AssertionError("unreachable")  # itertools.count never ends
