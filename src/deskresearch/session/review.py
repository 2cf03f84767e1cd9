"""A review answer given as a file (``--review answers.json``): read and checked in the pre-flight.

(``checked`` is the check itself: the page's answers go through it too.)

The run would read it only when it pauses for the review, after its first model calls: a file
that is missing, not JSON or not an answer is found before anything is spent instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from deskresearch.errors import ConfigError

FIX = 'give a JSON file holding true or {"drop_urls"|"keep_urls"|"drop_queries": [...]}'


def answer_file(path: str, origin: str) -> Any:
    """The answer in ``path``, checked against the shapes review_plan takes.

    Raises:
        ConfigError: the file cannot be read, is not JSON, or is not an answer.
    """
    where = f"the review answer {path} (from {origin})"
    try:
        data = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{where} cannot be read ({exc.strerror}): {FIX}") from None
    except ValueError as exc:  # not UTF-8, not JSON
        raise ConfigError(
            f"{where} is not JSON ({' '.join(str(exc).split())[:120]}): {FIX}"
        ) from None
    return checked(data, where)


def checked(answer: Any, where: str, fix: str = FIX) -> Any:
    """``answer`` as the run is resumed with it, if it has a shape review_plan takes.

    Every way to accept (``None``, ``"accept"``, ``{}``) becomes ``True``: LangGraph cannot
    resume with ``None`` (it fails) or ``{}`` (read as no answer: the run asks again).

    Raises:
        ConfigError: it is not an answer (``where`` names it, ``fix`` says what to give).
    """
    from deskresearch.nodes.review_plan import accepts, dropped_by  # the node's rule, imported late

    try:
        dropped_by(answer, [])
    except ConfigError:
        raise ConfigError(f"{where} is not an answer: {fix}") from None
    return True if accepts(answer) else answer
