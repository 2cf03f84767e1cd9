"""The CLI's settings: every value remembers where it came from, so an error can say so.

Precedence: a flag > the ``--config`` file > the environment (``DESKRESEARCH_<FIELD>``) > the
default. A resumed run takes the saved run's settings in place of the environment, except the
values that carry a secret (a password in a URL): those are never saved, so they come from the
environment again. A bad value
is reported as ``field=value from <where>: <what is wrong> (<how to fix it>)``, one per field.
"""

from __future__ import annotations

import argparse
import difflib
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from deskresearch.cli.options import OPTIONS, Option
from deskresearch.config.context import Context, problem
from deskresearch.errors import ConfigError


@dataclass(frozen=True)
class Given:
    """One setting's value and its origin."""

    value: Any
    origin: str  # "the flag --url-per-query", "DESKRESEARCH_X in the environment", ...
    fix: str  # what to change


def read_config(path: str) -> dict[str, Any]:
    """Return the settings in a TOML file (keys are field names; dashes allowed).

    Raises:
        ConfigError: the file cannot be read, is not TOML, or names an unknown setting.
    """
    try:
        data = tomllib.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"--config {path}: cannot read it ({exc.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--config {path}: not a TOML file ({exc})") from None
    names = [o.name for o in OPTIONS]
    values = {}
    for key, value in data.items():
        name = key.replace("-", "_")
        if name not in names:
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"did you mean {close[0]}?" if close else "deskresearch --help lists them"
            raise ConfigError(f"--config {path}: {key!r} is not a setting ({hint})")
        values[name] = value
    return values


# A domain flag given empty is a mistake (an unset variable in a script, or "none" spelled as
# nothing): the default already means every site, so say so rather than run wider than asked.
_EMPTY_MEANS = {"include_domains": "read every site", "exclude_domains": "exclude none"}


def _flag(opt: Option, value: Any) -> Given:
    if opt.name in _EMPTY_MEANS and not str(value).strip():
        raise ConfigError(
            f"{opt.flag} {value!r}: an empty value for a flag that takes domains (who.int,.gov): "
            f"leave the flag out to {_EMPTY_MEANS[opt.name]}"
        )
    shown = opt.flag if value is not False else "--no-" + opt.flag[2:]
    return Given(value, f"the flag {shown}", f"change {shown}")


def gather(
    ns: argparse.Namespace,
    environ: Mapping[str, str],
    *,
    saved: Mapping[str, Any] | None = None,
    thread: str = "",
) -> dict[str, Given]:
    """Collect every setting given for this run, highest precedence first.

    ``saved``: the settings of the run being resumed (they replace the environment; a setting
    not among them, one that carried a secret, is read from the environment again).
    """
    from_file = read_config(ns.config) if ns.config else {}
    given: dict[str, Given] = {}
    for opt in OPTIONS:
        flag = getattr(ns, opt.name, None)
        if flag is not None:
            given[opt.name] = _flag(opt, flag)
        elif opt.name in from_file:
            where = f"{opt.name} in {ns.config}"
            given[opt.name] = Given(from_file[opt.name], where, f"change {where}")
        elif saved is not None and opt.name in saved:
            origin = f"the saved run {thread}"
            given[opt.name] = Given(saved[opt.name], origin, f"override it with {opt.flag}")
        elif opt.env in environ:  # a resumed run's secret-bearing values were never saved
            origin = f"{opt.env} in the environment"
            given[opt.name] = Given(environ[opt.env], origin, f"change or unset {opt.env}")
    if ns.review and "review_plan" not in given:
        given["review_plan"] = Given(True, "the flag --review", "leave out --review")
    return given


def origins(given: Mapping[str, Given], ns: argparse.Namespace) -> dict[str, str]:
    """Where each setting and path of the run came from, for the pre-flight's messages."""
    found = {name: g.origin for name, g in given.items()}
    given_dir = str(ns.output_dir) != "reports"
    found["output_dir"] = "the flag -o" if given_dir else "the default (reports)"
    if getattr(ns, "checkpoints", None):
        found["checkpoints"] = "the flag --checkpoints"
    elif os.environ.get("DESKRESEARCH_CHECKPOINTS"):
        found["checkpoints"] = "DESKRESEARCH_CHECKPOINTS in the environment"
    return found


def context_from(given: Mapping[str, Given]) -> Context:
    """Build the run's Context; a bad value names its origin and the fix.

    Raises:
        ConfigError: one or more values are invalid (each named with its origin).
    """
    try:
        return Context(**{name: g.value for name, g in given.items()})
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            name = str(err["loc"][0]) if err["loc"] else "?"
            g = given.get(name)
            where = f" from {g.origin}" if g else ""
            fix = f" ({g.fix})" if g else ""
            problems.append(f"{name}={err.get('input')!r}{where}: {problem(err)}{fix}")
        raise ConfigError("invalid setting: " + "; ".join(problems)) from None
