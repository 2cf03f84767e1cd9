"""Helpers for batch tests: the batch command as a process, topics files, calls per topic."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from tests.support.loopback import Call

ROOT = Path(__file__).parents[2]
_TOPIC = re.compile(r"Research topic:\s*(?:<topic>\s*)?(.+)")


def write_topics(path: Path, lines: list[str]) -> Path:
    """Write a topics file, one line each."""
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def batch(
    env: dict[str, str], *args: str, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    """Run ``deskresearch batch ARGS`` as a user would (stderr is a pipe: plain lines)."""
    return subprocess.run(
        [sys.executable, "-m", "deskresearch", "batch", *args],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def topic_of(call: Call) -> str:
    """The research topic a model call was about ("" for other calls, and for the citation
    judge's and the repair's, whose prompts name no topic)."""
    if call.kind != "model":
        return ""
    for message in call.body.get("messages", []):
        if message.get("role") == "user" and (m := _TOPIC.search(str(message.get("content")))):
            return m.group(1).strip()
    return ""


def calls_per_topic(log: list[Call]) -> Counter[str]:
    """Model calls per topic."""
    return Counter(topic_of(c) for c in log if c.kind == "model")


def summary(out_dir: Path) -> dict[str, Any]:
    """The batch.json of a batch, with its rows by line number."""
    data: dict[str, Any] = json.loads((out_dir / "batch.json").read_text(encoding="utf-8"))
    data["by_line"] = {row["line"]: row for row in data["topics"]}
    return data
