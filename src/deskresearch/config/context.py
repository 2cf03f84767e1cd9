"""Context: every setting of one research run (LangGraph Studio renders it as a form).

Precedence, in one place, for every entry point: a value given explicitly (``Context(...)``, a
context dict from the SDK or Studio, a CLI flag) wins over a ``DESKRESEARCH_<FIELD>`` variable,
which wins over the default; the constructor reads the environment itself. A run invoked with
no context at all (a parent graph, ``as_tool``, a bare ``ainvoke``) gets ``Context()``: the same.
Secrets are not settings: API keys come from the environment (``OPENAI_API_KEY``,
``TAVILY_API_KEY``), so they never land in state, checkpoints or run records.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from platformdirs import user_cache_dir
from pydantic import ValidationError, model_validator
from pydantic.dataclasses import dataclass
from pydantic_core import ArgsKwargs

from deskresearch.config.fields import ModelFields, PlanFields
from deskresearch.config.fields_io import CacheFields, PageFields, SearchFields
from deskresearch.config.providers import endpoint_for, model_calls, model_timeout, split_model
from deskresearch.errors import ConfigError
from deskresearch.records import CachePolicy, DomainScope, FetchLimits, ModelSpec, SearchSettings
from deskresearch.safety.masking import mask_secrets
from deskresearch.safety.scope import parse_domains

if (
    TYPE_CHECKING
):  # LangGraph is imported by the graph, not by reading settings (the CLI's head start)
    from langgraph.runtime import Runtime

ENV_PREFIX = "DESKRESEARCH_"


@dataclass(kw_only=True, frozen=True)
class Context(CacheFields, PageFields, SearchFields, PlanFields, ModelFields):
    """Settings for one research run (the fields: ``deskresearch.config.fields``)."""

    @model_validator(mode="before")
    @classmethod
    def _environment_defaults(cls, data: Any) -> Any:
        """Fill every field the caller left out from its DESKRESEARCH_<FIELD> variable.

        LangGraph turns a context dict (SDK, Studio, ``context={...}``) into ``Context(**dict)``
        itself, so the environment must act here, in the constructor, to apply everywhere.
        """
        if isinstance(data, ArgsKwargs):
            args, given = data.args, dict(data.kwargs or {})
        elif isinstance(data, Mapping):
            args, given = (), dict(data)
        else:
            return data
        for name in field_names():
            var = ENV_PREFIX + name.upper()
            if name not in given and var in os.environ:
                given[name] = os.environ[var]
        return ArgsKwargs(args, given)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Context:
        """Build a Context from ``DESKRESEARCH_<FIELD>`` variables; explicit overrides win.

        Raises:
            ConfigError: a value is out of range or of the wrong type; names the variable.
        """
        values: dict[str, Any] = {}
        if environ is not None:  # os.environ itself is read by the constructor
            for name in field_names():
                var = ENV_PREFIX + name.upper()
                if var in environ:
                    values[name] = environ[var]
        values.update({k: v for k, v in overrides.items() if v is not None})
        return validated(values, source="environment")

    def summary_spec(self) -> ModelSpec:
        """Return the call settings for the summary model."""
        return self._spec(self.summary_model)

    def report_spec(self) -> ModelSpec:
        """Return the call settings for the report model."""
        return self._spec(self.report_model)

    def judge_spec(self) -> ModelSpec:
        """Return the call settings for the citation judge (and the repair call)."""
        return self._spec(self.judge_model or self.summary_model)

    def _spec(self, name: str) -> ModelSpec:
        model, provider_url = split_model(name)
        base = self.base_url or provider_url
        url = endpoint_for(base, os.environ)[0]  # what the calls go to: local or hosted
        return ModelSpec(
            model=model,
            base_url=base,
            method=self.structured_output,
            timeout_s=model_timeout(self.model_timeout_s, url),
            max_concurrent=model_calls(self.max_model_calls, url),
            requests_per_s=self.model_requests_per_s,
            max_attempts=self.model_attempts,
            backoff_s=self.retry_backoff_s,
            run_retries=self.max_retries_per_run,
            token_budget=self.token_budget,
            cache=self.cache_policy(),
        )

    def search_settings(self) -> SearchSettings:
        """Return the search backend settings."""
        return SearchSettings(
            backends=search_chain(self.search, os.environ),
            tavily_base_url=self.tavily_base_url,
            corpus_dir=self.corpus_dir,
            searxng_url=self.searxng_url or os.environ.get("SEARXNG_URL", ""),
            timeout_s=self.search_timeout_s,
            cache=self.cache_policy(),
            scope=self.domain_scope(),
            since=self.since,
        )

    def fetch_limits(self) -> FetchLimits:
        """Return the bounds for reading one page."""
        return FetchLimits(
            timeout_s=self.page_timeout_s,
            max_bytes=self.max_page_bytes,
            max_redirects=self.max_redirects,
            max_concurrent=self.max_fetches,
            max_per_host=self.max_fetches_per_host,
            allow_hosts=tuple(h.strip() for h in self.allow_hosts.split(",") if h.strip()),
            cache=self.cache_policy(),
            scope=self.domain_scope(),
        )

    def domain_scope(self) -> DomainScope:
        """Return the sites this run keeps to (include_domains) and never reads (exclude_domains)."""
        return DomainScope(
            include=parse_domains(self.include_domains), exclude=parse_domains(self.exclude_domains)
        )

    def public_settings(self) -> dict[str, Any]:
        """Return the settings to show or write (JSON, traces): secrets in values masked."""
        return {k: mask_secrets(v) if isinstance(v, str) else v for k, v in self._items()}

    def resumable_settings(self) -> dict[str, Any]:
        """Return the settings a run keeps in its state, minus values that carry a secret.

        A resumed run gets those from the environment or a flag again, never from a checkpoint.
        """
        return {k: v for k, v in self._items() if not isinstance(v, str) or mask_secrets(v) == v}

    def _items(self) -> list[tuple[str, Any]]:
        return list(dataclasses.asdict(self).items())

    def cache_policy(self) -> CachePolicy | None:
        """Return where the cache is and its page TTL, or None when the cache is off."""
        if not self.cache:
            return None
        path = self.cache_path or str(Path(user_cache_dir("deskresearch")) / "cache.sqlite")
        return CachePolicy(path=path, page_ttl_s=self.cache_page_hours * 3600)


def search_chain(search: str, environ: Mapping[str, str]) -> tuple[str, ...]:
    """Resolve ``Context.search`` into backend names; ``auto`` depends on a Tavily key."""
    if search.strip() == "auto":
        return ("tavily", "duckduckgo") if environ.get("TAVILY_API_KEY") else ("duckduckgo",)
    return tuple(dict.fromkeys(name.strip() for name in search.split(",")))


def field_names() -> list[str]:
    """Return the Context field names in declaration order."""
    return list(Context.__dataclass_fields__)


def field_description(name: str) -> str:
    """Return the description of one Context field."""
    fields: dict[str, Any] = getattr(Context, "__pydantic_fields__", {})
    return str(fields[name].description or "") if name in fields else ""


_PLAIN = {
    ("search", "string_pattern_mismatch"): "not a search chain: name tavily, duckduckgo, "
    "searxng or corpus, comma-separated in the order to try, or auto",
}


def problem(err: Mapping[str, Any]) -> str:
    """Pydantic's words for a bad value, or plainer ones where its own are a regular expression."""
    name = str(err["loc"][0]) if err.get("loc") else "?"
    # A validator's own ConfigError already says what is wrong: without pydantic's prefix.
    return _PLAIN.get((name, str(err.get("type"))), str(err["msg"]).removeprefix("Value error, "))


@dataclasses.dataclass(frozen=True)
class Problem:
    """One invalid setting: for a message, or for a form's field."""

    name: str
    value: Any
    origin: str  # where the value came from ("the flag --url-per-query"); "" when unknown
    message: str
    fix: str

    def __str__(self) -> str:
        """``name=value from <origin>: <what is wrong> (<fix>)``."""
        where = f" from {self.origin}" if self.origin else ""
        fix = f" ({self.fix})" if self.fix else ""
        return f"{self.name}={self.value!r}{where}: {self.message}{fix}"


def problems_in(
    exc: ValidationError, origin_of: Callable[[str], tuple[str, str]] | None = None
) -> list[Problem]:
    """Pydantic's errors as Problems; ``origin_of(name)`` says (where from, how to fix)."""
    found = []
    for err in exc.errors():
        name = ".".join(str(p) for p in err["loc"]) or "?"
        origin, fix = origin_of(name) if origin_of else ("", "")
        fix = fix or f"set --{name.replace('_', '-')} or {ENV_PREFIX}{name.upper()}"
        found.append(Problem(name, err.get("input"), origin, problem(err), fix))
    return found


def validated(values: Mapping[str, Any], *, source: str) -> Context:
    """Build a Context, turning pydantic's errors into one ConfigError naming every bad field."""
    try:
        return Context(**values)
    except ValidationError as exc:
        lines = "; ".join(map(str, problems_in(exc)))
        raise ConfigError(f"invalid setting from {source}: {lines}") from None
    except TypeError as exc:  # an unknown keyword
        raise ConfigError(f"invalid setting from {source}: {exc}") from None


def settings_of(state: Mapping[str, Any]) -> Context:
    """The run's Context for a router, which LangGraph gives no runtime.

    Inside a run that is the runtime's; where the graph is driven by ``update_state`` (Studio's
    state editor, a caller resuming from an edited state) there is none, and the settings the
    run started with (``start_run`` saved them in state) stand in.
    """
    from langgraph.runtime import get_runtime

    try:
        runtime = get_runtime(Context)
    except RuntimeError:  # not inside a graph step at all
        runtime = None
    if runtime is not None:
        return resolve(runtime)
    saved = state.get("settings")
    return validated(saved, source="the saved run") if saved else Context.from_env()


def resolve(runtime: Runtime[Context]) -> Context:
    """Return the run's Context, or one from the environment when the caller passed none."""
    # Parent graphs, as_tool() and a bare ainvoke() pass no context: runtime.context is None.
    ctx = runtime.context
    if ctx is None:
        return Context.from_env()
    if isinstance(ctx, Mapping):  # a caller that bypassed LangGraph's own coercion
        return validated(ctx, source="context")
    return ctx
