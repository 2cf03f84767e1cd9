"""Deployment-locked settings: what a served caller's per-run context may not change.

Served by ``langgraph dev`` or a LangGraph API server, the graph takes a context from whoever
calls it, while the server holds the API keys, the network position and the files. A per-run
context that chose the model or search endpoint would make the server send its keys to the
caller's host; one that chose the corpus folder, the host allow-list or the cache file would
let the caller read the server's files, reach its private network, or write where it likes.
Those settings are the deployment's: they come from the server's environment
(``DESKRESEARCH_<FIELD>``, ``langgraph.json``'s ``env``), and a served run that sets one to
anything else is refused with an error that names it. A deployment that wants callers to choose
one lists it in ``DESKRESEARCH_OVERRIDABLE`` (empty by default).

Only the served graph (``deskresearch.served.graph``, the one ``langgraph.json`` names) checks;
``build_graph()`` without a deployment, ``Context(...)`` passed in-process and the CLI keep full
control: whoever runs them already holds the keys.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from pydantic import ConfigDict, model_validator
from pydantic.dataclasses import dataclass as pydantic_dataclass
from pydantic_core import ArgsKwargs

from deskresearch.config.context import ENV_PREFIX, Context, validated
from deskresearch.config.providers import endpoint_for, split_model
from deskresearch.errors import ConfigError
from deskresearch.safety.masking import masked

OVERRIDABLE_ENV = "DESKRESEARCH_OVERRIDABLE"

LOCKED: dict[str, str] = {
    "base_url": "the model endpoint would receive the server's OPENAI_API_KEY",
    "tavily_base_url": "the search endpoint would receive the server's TAVILY_API_KEY",
    "searxng_url": "the server would send its searches to a host the caller chose",
    "corpus_dir": "the server would read and quote files from a folder the caller chose",
    "allow_hosts": "the fetcher would read the server's loopback and private network",
    "cache_path": "the server would write its cache where the caller chose",
}
"""Settings a served run may not change, and why (docs/security.md lists them)."""

MODEL_FIELDS = (
    "summary_model",
    "report_model",
    "judge_model",
)  # a provider prefix picks an endpoint


@dataclass(frozen=True)
class Deployment:
    """The deployment's side of the settings: which locked ones callers may change after all.

    Args:
        overridable: locked settings a served run may set (default: none).
        settings: the deployment's values (default: ``Context.from_env()`` at each run).
    """

    overridable: frozenset[str] = frozenset()
    settings: Context | None = None

    def __post_init__(self) -> None:
        """Reject an allow-list entry that is not a locked setting (a typo would open nothing)."""
        unknown = sorted(set(self.overridable) - set(LOCKED))
        if unknown:
            raise ConfigError(
                f"{OVERRIDABLE_ENV} names {', '.join(unknown)}: only locked settings can be "
                f"opened to callers ({', '.join(LOCKED)}); every other setting is open already"
            )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Deployment:
        """Read ``DESKRESEARCH_OVERRIDABLE`` (comma-separated setting names)."""
        raw = (os.environ if environ is None else environ).get(OVERRIDABLE_ENV, "")
        return cls(frozenset(n.strip() for n in raw.split(",") if n.strip()))

    def baseline(self) -> Context:
        """Return the deployment's own settings."""
        return self.settings if self.settings is not None else Context.from_env()

    def shown(self) -> dict[str, Any]:
        """The locked settings as a served form shows them: the values the server will use.

        An empty setting shows what the server falls back to (``OPENAI_BASE_URL``,
        ``SEARXNG_URL``); credentials in a URL are masked, as everywhere.
        """
        base = self.baseline()
        values: dict[str, Any] = {name: getattr(base, name) for name in LOCKED}
        values["base_url"] = endpoint_for(base.base_url, os.environ)[0] or ""
        values["searxng_url"] = base.searxng_url or os.environ.get("SEARXNG_URL", "")
        shown: dict[str, Any] = masked(values)
        return shown

    def form_defaults(self) -> dict[str, Any]:
        """What a served form shows as each setting's default where it is not the class's own.

        The locked settings (``shown``) and every open one the deployment's environment sets:
        a run that leaves a setting out gets the deployment's value, so the form says that one.
        """
        base = self.baseline()
        values: dict[str, Any] = masked({f.name: v for f in fields(Context)
                                         if (v := getattr(base, f.name)) != f.default})  # fmt: skip
        return values | self.shown()

    def without_echoes(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """``given`` less the locked settings it sends back exactly as the form showed them.

        A form (Studio's) may send every field it shows; a shown value is the deployment's own,
        masked: such an echo means "the deployment's", never a change, so it is dropped and the
        deployment's real value applies.
        """
        if not given.keys() & LOCKED.keys():
            return dict(given)
        shown = self.shown()
        return {k: v for k, v in given.items() if not (k in LOCKED and v == shown[k])}

    def refusals(self, given: Mapping[str, Any]) -> list[tuple[str, str]]:
        """Return (locked setting, why) for each change ``given`` (a caller's context) asks."""
        locked = {k: v for k, v in given.items() if k in LOCKED or k in MODEL_FIELDS}
        if not locked:
            return []
        base = self.baseline()
        asked = validated(locked, source="the run's context")  # typed like the fields
        problems = []
        for name in LOCKED:
            if name not in locked or name in self.overridable:
                continue
            mine, theirs = getattr(asked, name), getattr(base, name)
            if mine == theirs:
                continue
            problems.append((name, f"{name}={_shown(mine)}: {LOCKED[name]}"))
        if "base_url" not in self.overridable and not base.base_url:
            for name in MODEL_FIELDS:
                wanted = split_model(getattr(asked, name))[1]
                if name in locked and wanted != split_model(getattr(base, name))[1]:
                    why = (
                        f"{name}={getattr(asked, name)!r}: its provider prefix sends the model "
                        f"calls, and the server's API key, to {wanted or 'the default endpoint'}"
                    )
                    problems.append(("base_url", why))
        return problems

    def check(self, given: Mapping[str, Any]) -> None:
        """Raise ConfigError naming every locked setting ``given`` tries to change."""
        problems = self.refusals(given)
        if problems:
            names = sorted({name for name, _ in problems})
            raise ConfigError(
                "this server does not let a run change "
                + "; ".join(why for _, why in problems)
                + ". The deployment sets "
                + ", ".join(names)
                + " (its environment: "
                + ", ".join(ENV_PREFIX + n.upper() for n in names)
                + "); one that trusts its callers opens them with "
                + f"{OVERRIDABLE_ENV}={','.join(names)}."
            )


def _shown(value: Any) -> str:
    return repr(masked(value))


def served_context(deployment: Deployment) -> type[Context]:
    """Return the Context class a served graph coerces callers' contexts into.

    LangGraph turns a context dict (SDK, Studio, assistants, ``configurable``) into
    ``context_schema(**dict)``; this class refuses a locked setting there, for a new run and for
    a resumed one alike. Its JSON schema marks locked settings read-only for Studio's form, and
    shows the deployment's values (masked) as the defaults, not the class's.
    """

    # A refused value is not echoed back in the error (it may carry a caller's credential).
    @pydantic_dataclass(kw_only=True, frozen=True, config=ConfigDict(hide_input_in_errors=True))
    class ServedContext(Context):
        """Settings for one served run; deployment settings are locked (deskresearch.config.deployment)."""

        served_by: ClassVar[Deployment] = deployment

        @model_validator(mode="before")
        @classmethod
        def _environment_defaults(cls, data: Any) -> Any:
            given = dict(data.kwargs or {}) if isinstance(data, ArgsKwargs) else data
            if isinstance(given, Mapping):
                given = cls.served_by.without_echoes(given)
                cls.served_by.check(given)
                args = data.args if isinstance(data, ArgsKwargs) else ()
                data = ArgsKwargs(args, given)
            return Context._environment_defaults.__func__(cls, data)

        @classmethod
        def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> Any:
            schema = handler(core_schema)
            props = handler.resolve_ref_schema(schema).get("properties", {})
            try:
                defaults = cls.served_by.form_defaults()
            except ConfigError:  # a bad deployment value: every run says so; the form still loads
                defaults = {}
            for name, value in defaults.items():
                if name in props:
                    props[name]["default"] = value
            for name in LOCKED:
                if name in props and name not in cls.served_by.overridable:
                    props[name]["readOnly"] = True
            return schema

    return ServedContext
