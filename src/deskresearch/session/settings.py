"""A run's settings as a plain mapping: every value with where it came from and how to change it.

Precedence, highest first, for every entry point: the caller's per-run values (a tool call's
arguments, the page's form, a batch line) > command-line flags > the ``--config`` file (TOML) >
the saved run (a resume) > the environment (``DESKRESEARCH_<FIELD>``) > the entry point's own
defaults > ``Context``'s. A resumed run's secret-bearing values were never saved, so they come
from the environment again. Besides ``Context``'s fields the mapping holds the run's places,
``output_dir`` and ``checkpoints`` (flag, ``DESKRESEARCH_CHECKPOINTS``, default), and ``review``
(a review answer file, or ``-`` for a person at the terminal).

A bad value is reported as ``field=value from <where>: <what is wrong> (<how to fix it>)``, one
per field (``problems`` lists them for a form); a rule about a setting holds wherever the value
came from (``review_plan`` without anybody to review; a locked setting from a served caller).
Light on purpose: the command line reads its settings before it imports the research path.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from deskresearch.config.context import Context, Problem, problems_in
from deskresearch.config.deployment import Deployment
from deskresearch.errors import ConfigError
from deskresearch.services.storage.checkpoints import CHECKPOINTS_ENV
from deskresearch.session.options import OPTIONS, given_settings
from deskresearch.text.clean import clean_topic

PLACES = ("output_dir", "checkpoints", "review")  # the run's own, not Context's
_FLAGS = {"output_dir": "-o", "checkpoints": "--checkpoints", "review": "--review"}
_ENV = {o.name: o.env for o in OPTIONS} | {"checkpoints": CHECKPOINTS_ENV}
_FLAG = {o.name: o.flag for o in OPTIONS} | _FLAGS


@dataclass(frozen=True)
class Given:
    """One setting's value and its origin."""

    value: Any
    origin: str  # "the flag --url-per-query", "DESKRESEARCH_X in the environment", ...
    fix: str  # what to change
    kind: str = ""  # caller, flag, config, saved, environment or default


Settings = dict[str, Given]
"""A run's settings: name (a Context field or one of PLACES) → its value and origin."""


@dataclass(frozen=True)
class Sources:
    """Where one run's settings come from (see the module's doc for the precedence).

    Args:
        caller: per-run values of the caller (a tool call, the page, a batch line).
        caller_name: how messages name the caller ("the tool call", "the page", "line 3").
        flags: command-line values by name (None: not given); field names, PLACES.
        config: a TOML file of settings (``--config``).
        environ: the environment.
        defaults: the entry point's own defaults (``output_dir``).
    """

    caller: Mapping[str, Any] = field(default_factory=dict)
    caller_name: str = "the caller's context"
    flags: Mapping[str, Any] = field(default_factory=dict)
    config: str | None = None
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    defaults: Mapping[str, Any] = field(default_factory=dict)


def per_caller(
    values: Mapping[str, Any], caller_name: str, *, defaults: Mapping[str, Any]
) -> Callable[[dict[str, Any]], Sources]:
    """A serving command's parsed arguments → a caller's values → where a run's settings come from.

    For a command that runs research for callers (``mcp``'s tool calls, ``ui``'s page): the
    caller's values over the command's setting flags, ``--checkpoints``, ``-o``, its ``--config``
    file, the environment and ``defaults``: the command is the deployment.
    """
    flags = {**given_settings(dict(values)), "output_dir": values.get("output_dir"),
             "checkpoints": values.get("checkpoints")}  # fmt: skip

    def sources(caller: dict[str, Any]) -> Sources:
        return Sources(caller=caller, caller_name=caller_name, flags=flags,
                       config=values.get("config"), environ=os.environ, defaults=defaults)  # fmt: skip

    return sources


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


def _flag(name: str, value: Any) -> Given:
    flag = _FLAG[name]
    if name in _EMPTY_MEANS and not str(value).strip():
        raise ConfigError(
            f"{flag} {value!r}: an empty value for a flag that takes domains (who.int,.gov): "
            f"leave the flag out to {_EMPTY_MEANS[name]}"
        )
    shown = "--no-" + flag[2:] if value is False else flag
    return Given(value, f"the flag {shown}", f"change {shown}", "flag")


def gather(
    sources: Sources, *, saved: Mapping[str, Any] | None = None, thread: str = ""
) -> Settings:
    """Collect every setting given for a run, each from its highest source.

    ``saved``: the settings of the run being resumed (in place of the environment; a value
    not among them, one that carried a secret, is read from the environment again).

    Raises:
        ConfigError: the config file cannot be read or names an unknown setting.
    """
    from_file = read_config(sources.config) if sources.config else {}
    env = sources.environ
    given: Settings = {}
    for name in [o.name for o in OPTIONS] + list(PLACES):
        var = _ENV.get(name, "")
        if name in sources.caller:
            where = f"{sources.caller_name}'s {name}"
            fix = f"change {name} in {sources.caller_name}"
            given[name] = Given(sources.caller[name], where, fix, "caller")
        elif sources.flags.get(name) is not None:
            given[name] = _flag(name, sources.flags[name])
        elif name in from_file:
            where = f"{name} in {sources.config}"
            given[name] = Given(from_file[name], where, f"change {where}", "config")
        elif saved is not None and name in saved:
            origin = f"the saved run {thread}"
            fix = f"override it with {_FLAG[name]}"
            given[name] = Given(saved[name], origin, fix, "saved")
        elif var in env and (name != "checkpoints" or env[var].strip()):
            origin = f"{var} in the environment"
            given[name] = Given(env[var], origin, f"change or unset {var}", "environment")
        elif name in sources.defaults:
            value = sources.defaults[name]
            fix = f"give {_FLAG[name]}"
            given[name] = Given(value, f"the default ({value})", fix, "default")
    # --review asks for the pause review_plan makes, unless a flag says otherwise.
    review = given.get("review")
    if review and sources.flags.get("review_plan") is None and "review_plan" not in sources.caller:
        given["review_plan"] = Given(True, review.origin, "leave out --review", review.kind)
    return given


def problems(settings: Mapping[str, Given], *, topic: str | None = None) -> list[Problem]:
    """Every invalid value among ``settings``, one per field (empty: Context accepts them).

    ``topic``: a form's question, checked too (a ``topic`` problem). Nothing is run or sent.
    """
    found = _topic_problem(topic) if topic is not None else []

    def origin_of(name: str) -> tuple[str, str]:
        g = settings.get(name)
        return (g.origin, g.fix) if g else ("", "")

    try:
        Context(**_values(settings))
    except ValidationError as exc:
        return problems_in(exc, origin_of) + found
    return found


def _topic_problem(topic: str) -> list[Problem]:
    try:
        clean_topic(topic)
    except ConfigError as exc:
        return [Problem("topic", topic, "", str(exc), "")]
    return []


def _values(settings: Mapping[str, Given]) -> dict[str, Any]:
    return {n: g.value for n, g in settings.items() if n not in PLACES}


def context_from(settings: Mapping[str, Given]) -> Context:
    """Build the run's Context; a bad value names its origin and the fix.

    Raises:
        ConfigError: one or more values are invalid (each named with its origin).
    """
    if found := problems(settings):
        raise ConfigError("invalid setting: " + "; ".join(map(str, found)))
    return Context(**_values(settings))


def check_rules(
    settings: Mapping[str, Given], ctx: Context, *, reviewer: bool, locked: bool = False
) -> None:
    """The rules about settings that hold wherever a value came from.

    ``reviewer``: somebody can answer a review (not so in a batch or an MCP call).
    ``locked``: the caller's per-run values may not change the deployment's settings (a served
    or MCP caller); the command line's own flags, files and variables are the deployment.

    Raises:
        ConfigError: a rule is broken; named with the value's origin and the fix.
    """
    if ctx.review_plan and not reviewer:
        g = settings.get("review_plan") or Given(True, "", "leave it out")
        where = f" from {g.origin}" if g.origin else ""
        raise ConfigError(
            f"review_plan=true{where} pauses each run for a person to review its pages, and "
            f"nobody can answer here: {g.fix} (review single runs with deskresearch --review)"
        )
    if locked:
        asked = {n: g.value for n, g in settings.items() if g.kind == "caller"}
        if asked:
            base = {n: g for n, g in settings.items() if n not in asked}
            lock = Deployment.from_env()  # DESKRESEARCH_OVERRIDABLE opens some to callers
            Deployment(lock.overridable, settings=context_from(base)).check(asked)


def caller_field(message: str, settings: Mapping[str, Given]) -> str:
    """Which of the caller's values a pre-flight message is about ("": none of them).

    The one whose origin it names ("from the page's language"), else the one it names as
    ``name=value`` (as the locks and ``problems`` do): a form shows it at that field.
    """
    given = [name for name, g in settings.items() if g.kind == "caller"]
    for name in given:
        if settings[name].origin in message:
            return name
    return next((name for name in given if f"{name}=" in message), "")


def origins(settings: Mapping[str, Given]) -> dict[str, str]:
    """Where each setting and place came from, for the pre-flight's messages."""
    return {name: g.origin for name, g in settings.items()}


def place(settings: Mapping[str, Given], name: str) -> str | None:
    """A place's value as text (``output_dir``, ``checkpoints``, ``review``), None if not given."""
    g = settings.get(name)
    return None if g is None or g.value is None else str(g.value)
