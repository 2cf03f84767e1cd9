"""Each topic's files, written as the single-run command writes them, owned by the batch.

A topic's report (``--format``) and its result JSON (the published contract) go through the same
code as ``deskresearch TOPIC``: nothing is overwritten that is not the batch's own. The first
time, a topic takes the first free name (``<slug>.md``, else ``<slug>-2.md``...); running the
batch again finds the files its previous run wrote (``batch.json``) and keeps them when the
topic had finished then, or replaces them when it ran again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from deskresearch.batch.runner import Job


@dataclass(frozen=True)
class Outputs:
    """Where and how the reports are written, and what a previous run of the batch wrote."""

    dir: Path
    fmt: str = "md"  # md, html or md+html; the JSON is always written
    earlier: dict[str, list[str]] = field(default_factory=dict)  # thread id → its files

    def _mine(self, job: Job) -> list[Path]:
        """The files a previous run of this batch wrote for this topic, here, in this format."""
        paths = [Path(f) for f in self.earlier.get(job.topic.thread_id, [])]
        wanted = {".json"} | {"." + f for f in self.fmt.split("+")}
        if {p.suffix for p in paths} != wanted or any(p.parent != self.dir for p in paths):
            return []
        return paths

    def kept(self, job: Job) -> list[Path]:
        """The topic's files from the previous run, if all are still there (else [])."""
        mine = self._mine(job)
        return mine if mine and all(p.is_file() for p in mine) else []

    def save(self, job: Job, values: dict[str, Any], *, run: str, wall_s: float) -> list[Path]:
        """The topic's files: those of the previous run when it had finished then, else written.

        Raises:
            OSError: the folder or a file cannot be written.
        """
        if run == "earlier" and (kept := self.kept(job)):
            return kept
        return self.write(job, values, wall_s=wall_s, resumed=run == "resumed")

    def write(
        self, job: Job, values: dict[str, Any], *, wall_s: float, resumed: bool
    ) -> list[Path]:
        """Write the topic's report and JSON; return their paths (the JSON last).

        Raises:
            OSError: the folder or a file cannot be written.
        """
        from deskresearch.cli.output import report_texts, write_files
        from deskresearch.report.contract import document

        t, ctx = job.topic, job.settings()
        texts = report_texts(values, topic=t.topic, language=ctx.language, fmt=self.fmt)
        finished = datetime.now().astimezone()

        def doc(paths: dict[str, Path]) -> dict[str, Any]:
            names = {"report" if s == ".md" else s[1:]: p.name for s, p in paths.items()}
            return document(
                {**values, "topic": t.topic}, ctx=ctx, thread_id=t.thread_id, clocks={},
                started=finished - timedelta(seconds=wall_s), finished=finished,
                resumed=resumed, files=names,
            )  # fmt: skip

        mine = self._mine(job)
        stem = mine[-1].stem if mine else t.name
        return write_files(self.dir, stem, texts, doc, overwrite=bool(mine))
