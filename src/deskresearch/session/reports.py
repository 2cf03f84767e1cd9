"""A run's report files: written once, found again by thread id, and one message when they cannot be.

Every entry point writes a finished run's files here: the report in the formats asked (``.md``,
``.html``) and the result document (``.json``, the published contract), under the topic's slug
(``session.files`` keeps names free and writes safely). A run whose own files are already in the
folder (found by the thread id each result document records) gets them back instead of a second
copy, or has them replaced in place when it ran again; a file that cannot be written is one
``ConfigError`` saying where the folder came from and how to write the saved run elsewhere.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from deskresearch.config.context import Context
from deskresearch.errors import ConfigError
from deskresearch.records import StageClock
from deskresearch.session.files import report_texts, slug_for, write_files
from deskresearch.session.settings import Given


def _plain(name: object) -> bool:
    """Whether ``name`` is a file name alone (no folder, no "..", not hidden)."""
    return (isinstance(name, str) and bool(name) and Path(name).name == name
            and not name.startswith(".") and "\\" not in name)  # fmt: skip


def documents(folder: Path) -> dict[str, list[str]]:
    """The files of each thread id whose result document is in ``folder`` (report first)."""
    found: dict[str, list[str]] = {}
    for js in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            doc = json.loads(js.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and doc.get("thread_id"):
            named = doc.get("files") or {}
            # Only plain names of this folder: a document that names "../x" or "/etc/x" (edited
            # or planted) must not make a delete remove a file elsewhere.
            files = [str(folder / named[k]) for k in ("report", "html") if _plain(named.get(k))]
            found.setdefault(str(doc["thread_id"]), []).extend([*files, str(js)])
    return found


@dataclass(frozen=True)
class Written:
    """A run's files and whether they were there already."""

    paths: list[Path]
    reused: bool = False


@dataclass
class ReportFiles:
    """Where and how a session writes each finished run's files.

    Args:
        folder: the output folder, with where it came from (for the message when it fails).
        fmt: ``md``, ``html`` or ``md+html``; the JSON is always written.
        overwrite: replace files of the same name that are not this run's own.
        earlier: thread id → the files a previous run wrote (a batch knows them from its
            summary); by default the folder's result documents are read once, when first asked.
    """

    folder: Given
    fmt: str = "md"
    overwrite: bool = False
    earlier: Mapping[str, list[str]] | None = None
    _known: dict[str, list[str]] | None = field(default=None, repr=False)

    @property
    def path(self) -> Path:
        """The folder."""
        return Path(str(self.folder.value)).expanduser()

    def _of(self, thread: str) -> list[Path]:
        """This run's files from before, here, in the format asked ([] if any is missing)."""
        if self._known is None:
            self._known = dict(self.earlier) if self.earlier is not None else documents(self.path)
        paths = [Path(f) for f in self._known.get(thread, [])]
        wanted = {".json"} | {"." + f for f in self.fmt.split("+")}
        if {p.suffix for p in paths} != wanted or any(p.parent != self.path for p in paths):
            return []
        return paths

    def found(self, thread: str) -> list[Path]:
        """The run's files from before, if every one is still there."""
        mine = self._of(thread)
        return mine if mine and all(p.is_file() for p in mine) else []

    def save(
        self,
        values: dict[str, Any],
        *,
        thread: str,
        ctx: Context,
        again: str,
        earlier: bool = False,
        stem: str = "",
        clocks: Mapping[str, StageClock] | None = None,
        started: datetime | None = None,
        resumed: bool = False,
    ) -> Written:
        """The run's files: those from before for a run that had finished then, else written.

        ``values`` carry the topic; ``again`` is how to write the saved run elsewhere (for the
        message); ``stem`` a file name to use instead of the topic's slug.

        Raises:
            ConfigError: the folder or a file cannot be written.
        """
        if earlier and (kept := self.found(thread)):
            return Written(kept, reused=True)
        topic = str(values.get("topic") or "")
        texts = report_texts(values, topic=topic, language=ctx.language, fmt=self.fmt)
        done = datetime.now().astimezone()

        def doc(paths: dict[str, Path]) -> dict[str, Any]:
            from deskresearch.report.contract import document

            names = {"report" if s == ".md" else s[1:]: p.name for s, p in paths.items()}
            return document(
                values, ctx=ctx, thread_id=thread, clocks=dict(clocks or {}),
                started=started or done, finished=done, resumed=resumed, files=names,
            )  # fmt: skip

        mine = self._of(thread)  # a run written before is replaced in place, not copied
        try:
            paths = write_files(self.path, mine[-1].stem if mine else stem or slug_for(topic),
                                texts, doc, overwrite=bool(mine) or self.overwrite)  # fmt: skip
        except OSError as exc:
            raise ConfigError(
                f"cannot write the report in {self.path}: {exc.strerror or exc} (the folder comes "
                f"from {self.folder.origin}); the run is saved: write it elsewhere with {again}"
            ) from None
        if self._known is not None:
            self._known[thread] = [str(p) for p in paths]
        return Written(paths)


def remove(files: list[str]) -> list[str]:
    """Delete a run's files; return those that were there."""
    gone = []
    for name in files:
        try:
            Path(name).unlink()
        except FileNotFoundError:
            continue
        gone.append(name)
    return gone
