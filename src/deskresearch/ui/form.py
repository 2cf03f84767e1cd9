"""The page's form: the settings people change, their defaults, and problems as the page shows them.

The defaults are the values a run started now would take if the form left them alone: the
command's flags, its ``--config`` file, the environment, ``Context``'s defaults (gathered by the
session, as for any run). A problem belongs to a field (a setting, or ``topic``) and is said in
the pre-flight's own words, so the page and the command line say the same thing about a value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from deskresearch.config.context import Context
from deskresearch.config.context import Problem as SettingProblem
from deskresearch.errors import ConfigError
from deskresearch.session.options import OPTIONS
from deskresearch.session.settings import Given, context_from


@dataclass(frozen=True)
class Field:
    """One setting in the form."""

    name: str
    label: str
    kind: str = "text"  # the input's type
    placeholder: str = ""


FIELDS = (
    Field("language", "Report language", placeholder="en-us, German, fr"),
    Field("max_rounds", "Research rounds", "number"),
    Field("report_words", "Report length (words)", "number"),
    Field("since", "Pages published since", placeholder="YYYY-MM-DD"),
    Field("include_domains", "Only these sites", placeholder="who.int, .gov"),
    Field("exclude_domains", "Never these sites", placeholder="example.com"),
    Field("summary_model", "Summary model"),
    Field("report_model", "Report model"),
    Field("review_plan", "Review the pages before they are read", "checkbox"),
)
SETTINGS = frozenset(o.name for o in OPTIONS)  # what a request may set (the locks still apply)
_OPTION = {o.name: o for o in OPTIONS}


@dataclass(frozen=True)
class Problem:
    """A problem as the page shows it: next to its field ("": the run as a whole)."""

    field: str
    message: str
    value: str


class Refusal(Exception):
    """A request the desk does not carry out: an HTTP status, a message and field problems."""

    def __init__(self, status: int, message: str, found: list[Problem] | None = None) -> None:
        super().__init__(message)
        self.status, self.problems = status, found or []


def problem_of(found: SettingProblem) -> Problem:
    """A setting's problem (``session.settings.problems``) for the page."""
    return Problem(found.name, found.message, "" if found.value is None else str(found.value))


def form(settings: Mapping[str, Given]) -> dict[str, Any]:
    """The form's fields with the values a run here would use, and a warning if one is bad."""
    warning = ""
    try:
        ctx = context_from(settings)
    except ConfigError as exc:  # the deployment's own value is wrong: say so above the form
        warning, ctx = str(exc), Context()
    fields = []
    for f in FIELDS:
        given = settings.get(f.name)
        fields.append(asdict(f) | {
            "value": getattr(ctx, f.name),
            "origin": given.origin if given else "the default",
            "help": _OPTION[f.name].help,
            "flag": _OPTION[f.name].flag,
        })  # fmt: skip
    return {"fields": fields, "warning": warning}


def as_dicts(found: list[Problem]) -> list[dict[str, str]]:
    """Problems as JSON objects."""
    return [asdict(p) for p in found]
