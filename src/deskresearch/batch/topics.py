"""The batch file: one topic a line, or one JSON object a line with that topic's own settings.

    How are EV batteries recycled?
    {"topic": "Nachtzüge in Europa", "language": "de", "decomposition_nums": 2}
    # comments and blank lines are ignored

A line that cannot be a topic (malformed JSON, an empty topic, an unknown or invalid setting, a
repeat of an earlier line) becomes a BadLine naming its number and the fix; the others run.
Each topic's thread id is a UUID derived from the batch id, the topic and the line's settings,
so running the same batch again finds every topic's checkpoints.
"""

from __future__ import annotations

import difflib
import json
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deskresearch.config.context import field_names
from deskresearch.errors import ConfigError
from deskresearch.session.files import slug_for
from deskresearch.text.clean import clean_topic

NAMESPACE = uuid.UUID("6f1d1b8e-5a0c-4d47-9a55-1f0b6c2e8d31")  # deskresearch batch threads
PATH_SETTINGS = ("corpus_dir", "cache_path")  # relative paths are read from the file's folder
MAX_SHOWN = 80  # characters of a bad line quoted back


@dataclass(frozen=True)
class Topic:
    """One topic of the batch, as its line gave it."""

    line: int
    topic: str
    settings: dict[str, Any] = field(default_factory=dict)  # the line's own settings
    thread_id: str = ""
    name: str = ""  # file stem of its report, unique within the batch


@dataclass(frozen=True)
class BadLine:
    """A line that was skipped, and why."""

    line: int
    text: str
    error: str


def thread_id_for(batch_id: str, topic: str, settings: dict[str, Any]) -> str:
    """The topic's thread id: the same batch, topic and settings give the same id, anywhere."""
    key = json.dumps([batch_id, topic, settings], ensure_ascii=False, sort_keys=True)
    return str(uuid.uuid5(NAMESPACE, key))


def default_batch_id(path: Path) -> str:
    """The batch id used unless --batch-id gives one: the file's absolute path."""
    return str(path.resolve())


def parse_line(text: str, folder: Path) -> tuple[str, dict[str, Any]]:
    """Return (topic, settings) of one non-blank line.

    Raises:
        ConfigError: malformed JSON, no topic, or an unknown setting.
    """
    if not text.startswith("{"):
        return clean_topic(text), {}
    try:
        data: dict[str, Any] = json.loads(text)  # a line starting with "{" is an object or bad
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"malformed JSON ({exc.msg} at column {exc.colno}): write one topic as plain text, "
            'or one object like {"topic": "...", "language": "de"}'
        ) from None
    topic = data.pop("topic", None)
    known = field_names()
    for key in data:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"did you mean {close[0]!r}?" if close else "see deskresearch batch --help"
            raise ConfigError(f"unknown setting {key!r}: {hint}")
    for key in PATH_SETTINGS:
        value = data.get(key)
        if isinstance(value, str) and value and not Path(value).expanduser().is_absolute():
            data[key] = str(folder / value)
    return clean_topic(topic), data


def read_batch(path: Path, batch_id: str) -> tuple[list[Topic], list[BadLine]]:
    """Read the batch file: its topics (thread ids and file names set) and its bad lines.

    Raises:
        ConfigError: the file cannot be read, is not UTF-8, or holds no line at all.
    """
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read the batch file {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"the batch file {path} is not UTF-8: save it as UTF-8") from None
    topics: list[Topic] = []
    bad: list[BadLine] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        try:
            topic, settings = parse_line(text, path.parent)
        except ConfigError as exc:
            bad.append(BadLine(number, _shown(text), str(exc)))
            continue
        tid = thread_id_for(batch_id, topic, settings)
        if tid in seen:
            bad.append(BadLine(number, _shown(text), f"repeats line {seen[tid]}: run once"))
            continue
        seen[tid] = number
        topics.append(Topic(number, topic, settings, tid))
    if not topics and not bad:
        raise ConfigError(f"no topics in {path}: write one research question a line")
    return with_names(topics), bad


def with_names(topics: list[Topic]) -> list[Topic]:
    """Give each topic its report's file stem: the slug, plus the thread id's start if shared."""
    slugs = Counter(slug_for(t.topic) for t in topics)
    named = []
    for t in topics:
        slug = slug_for(t.topic)
        name = slug if slugs[slug] == 1 else f"{slug}-{t.thread_id[:8]}"
        named.append(Topic(t.line, t.topic, t.settings, t.thread_id, name))
    return named


def _shown(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"
