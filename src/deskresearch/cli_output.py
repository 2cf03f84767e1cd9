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
from collections.abc import Callable
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


def write_pair(
    out_dir: Path,
    slug: str,
    report: str,
    document: Callable[[Path, Path], dict[str, Any]],
    *,
    overwrite: bool = False,
) -> tuple[Path, Path]:
    """Write the report and its JSON document; return their paths.

    ``document(md, js)`` builds the JSON document once the names are known (it records them).

    Raises:
        OSError: the folder or a file cannot be written.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    for n in itertools.count(1):
        stem = slug if n == 1 else f"{slug}-{n}"
        md, js = out_dir / f"{stem}.md", out_dir / f"{stem}.json"
        payload = json.dumps(document(md, js), ensure_ascii=False, indent=2) + "\n"
        if overwrite:
            _replace(md, report)
            _replace(js, payload)
            return md, js
        if os.path.lexists(md) or os.path.lexists(js):
            continue
        try:
            _create(md, report)
        except FileExistsError:
            continue
        try:
            _create(js, payload)
        except FileExistsError:
            md.unlink()
            continue
        return md, js
    raise AssertionError("unreachable")  # itertools.count never ends
