"""Context: every setting of one research run (LangGraph Studio renders it as a form).

Precedence, in one place, for every entry point: a value given explicitly (``Context(...)``, a
context dict from the SDK or Studio, a CLI flag) wins over a ``DESKRESEARCH_<FIELD>`` variable,
which wins over the default; the constructor reads the environment itself. A run invoked with
no context at all (a parent graph, ``as_tool``, a bare ``ainvoke``) gets ``Context()``: the same.
Secrets are not settings: API keys come from the environment (``OPENAI_API_KEY``,
``TAVILY_API_KEY``), so they never land in state, checkpoints or run records.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from langgraph.runtime import Runtime
from platformdirs import user_cache_dir
from pydantic import Field, ValidationError, model_validator
from pydantic.dataclasses import dataclass
from pydantic_core import ArgsKwargs

from deskresearch.errors import ConfigError
from deskresearch.providers import split_model
from deskresearch.records import CachePolicy, FetchLimits, ModelSpec, SearchSettings

ENV_PREFIX = "DESKRESEARCH_"
BACKENDS = ("tavily", "duckduckgo", "searxng", "corpus")
_NAME = "(" + "|".join(BACKENDS) + ")"
SEARCH_CHAIN = rf"^\s*(auto|{_NAME}(\s*,\s*{_NAME})*)\s*$"
_MODEL_PICKER = {"__template_metadata__": {"kind": "llm"}}  # Studio shows a model picker


@dataclass(kw_only=True, frozen=True)
class Context:
    """Settings for one research run."""

    language: Annotated[
        str,
        Field(
            min_length=1,
            max_length=64,
            description="Report language: a code or a name (en-us, zh-cn, German). Passed to every writing prompt.",
        ),
    ] = "en-us"
    summary_model: Annotated[
        str,
        Field(
            min_length=1,
            description="Model for keywords, query planning, ranking and page summaries (cheap, many calls). provider:model picks a local server's usual URL: ollama:, vllm:, llamacpp:, lmstudio:, openai:.",
            json_schema_extra=_MODEL_PICKER,
        ),
    ] = "gpt-4o-mini"
    report_model: Annotated[
        str,
        Field(
            min_length=1,
            description="Model that writes the final report (one call, long output); provider:model as for summary_model.",
            json_schema_extra=_MODEL_PICKER,
        ),
    ] = "gpt-4o"
    base_url: Annotated[
        str,
        Field(
            description="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 for Ollama. Empty: OPENAI_BASE_URL, else api.openai.com."
        ),
    ] = ""
    structured_output: Annotated[
        Literal["auto", "json_schema", "function_calling", "json_mode", "text"],
        Field(
            description="How structured answers are requested. auto: json_schema, then function_calling, json_mode and JSON found in plain text, remembering what the server rejects; any other value uses that method only."
        ),
    ] = "auto"
    model_timeout_s: Annotated[
        float, Field(gt=0, le=1800, description="Seconds one model call may take.")
    ] = 120.0
    max_model_calls: Annotated[
        int,
        Field(
            ge=1,
            le=256,
            description="Model calls in flight at once per endpoint, across all branches of a run.",
        ),
    ] = 8
    model_requests_per_s: Annotated[
        float,
        Field(
            ge=0,
            le=1000,
            description="Model requests started per second per endpoint, across all branches (0: no pacing). Set it to your provider's rate limit.",
        ),
    ] = 0.0
    model_attempts: Annotated[
        int,
        Field(
            ge=1,
            le=10,
            description="Attempts per model call on HTTP 429/5xx or timeouts (Retry-After honoured, else exponential backoff with jitter).",
        ),
    ] = 4
    retry_backoff_s: Annotated[
        float,
        Field(ge=0, le=60, description="Delay before the first retry; doubles per attempt."),
    ] = 1.0
    max_retries_per_run: Annotated[
        int,
        Field(
            ge=0,
            le=1000,
            description="Retries one run may spend on all its model calls together; then failing calls fall back at once.",
        ),
    ] = 40
    token_budget: Annotated[
        int,
        Field(
            ge=0,
            le=100_000_000,
            description="Tokens (in + out) the run may spend gathering; once reached it stops ranking and summarising and writes the report from what it has, saying so. 0: no budget.",
        ),
    ] = 0
    max_keywords: Annotated[
        int, Field(ge=1, le=10, description="Search keywords proposed for the topic (MetaGPT: 2).")
    ] = 2
    max_output_retries: Annotated[
        int,
        Field(
            ge=0,
            le=5,
            description="Extra attempts when the model's keywords are malformed, before falling back to the topic.",
        ),
    ] = 1
    decomposition_nums: Annotated[
        int,
        Field(ge=1, le=20, description="Research queries planned from the keywords (MetaGPT: 4)."),
    ] = 4
    url_per_query: Annotated[
        int,
        Field(ge=1, le=20, description="Pages kept per research query after ranking (MetaGPT: 4)."),
    ] = 4
    review_plan: Annotated[
        bool,
        Field(
            description="Pause after ranking to show the queries and pages for review (interrupt); resume to accept, trim or drop them.",
        ),
    ] = False
    search: Annotated[
        str,
        Field(
            pattern=SEARCH_CHAIN,
            description="Search backends in the order tried, comma-separated: tavily (TAVILY_API_KEY), duckduckgo (no key), searxng (searxng_url), corpus (corpus_dir). The next is tried when one fails or finds nothing. auto: tavily,duckduckgo with a Tavily key, else duckduckgo.",
        ),
    ] = "auto"
    tavily_base_url: Annotated[
        str,
        Field(
            min_length=1, description="Tavily API base URL (a self-hosted proxy or a test server)."
        ),
    ] = "https://api.tavily.com"
    corpus_dir: Annotated[
        str, Field(description="Folder of .md/.txt/.html files searched when search=corpus.")
    ] = ""
    searxng_url: Annotated[
        str,
        Field(
            max_length=2000,
            description="Base URL of a SearxNG instance with its JSON API on (e.g. http://localhost:8888). Empty: SEARXNG_URL.",
        ),
    ] = ""
    search_timeout_s: Annotated[
        float, Field(gt=0, le=300, description="Seconds one search request may take.")
    ] = 30.0
    max_fetches: Annotated[
        int, Field(ge=1, le=256, description="Pages read at once, across all branches of a run.")
    ] = 16
    max_fetches_per_host: Annotated[
        int, Field(ge=1, le=64, description="Pages read at once from one host (politeness).")
    ] = 4
    allow_hosts: Annotated[
        str,
        Field(
            max_length=2000,
            description="Comma-separated hosts, IPs or CIDR ranges the fetcher may read although they are loopback or private (e.g. intranet.example,10.0.0.0/8). Empty: public addresses only.",
        ),
    ] = ""
    page_timeout_s: Annotated[
        float, Field(gt=0, le=300, description="Seconds to read one page, redirects included.")
    ] = 20.0
    max_page_bytes: Annotated[
        int,
        Field(
            ge=10_000, le=100_000_000, description="Bytes read per page; longer pages are cut here."
        ),
    ] = 5_000_000
    max_redirects: Annotated[
        int, Field(ge=0, le=20, description="Redirects followed per page.")
    ] = 5
    min_page_chars: Annotated[
        int,
        Field(
            ge=0, le=10_000, description="Pages whose main text is shorter are rejected as empty."
        ),
    ] = 200
    max_chunk_tokens: Annotated[
        int,
        Field(
            ge=200,
            le=200_000,
            description="Upper bound on tokens per summarised chunk; the summary model's window may lower it.",
        ),
    ] = 6000
    skip_unrelated_chunks: Annotated[
        bool,
        Field(
            description="Skip a page's chunks that share no word with the queries while its other chunks do (no model call; recorded in provenance).",
        ),
    ] = True
    summary_context_window: Annotated[
        int,
        Field(
            ge=0,
            le=10_000_000,
            description="Context window of the summary model in tokens; 0 = known from its name, else 8192.",
        ),
    ] = 0
    report_words: Annotated[
        int,
        Field(
            ge=100, le=20_000, description="Target length of the report in words (MetaGPT: 2000)."
        ),
    ] = 2000
    cache: Annotated[
        bool,
        Field(
            description="Keep model answers, searches (per day) and pages in a persistent SQLite cache, so re-running a research costs no tokens and no fetches. false (--no-cache): neither read nor write it.",
        ),
    ] = True
    cache_path: Annotated[
        str,
        Field(
            max_length=4096,
            description="The cache's SQLite file. Empty: cache.sqlite in your user cache folder.",
        ),
    ] = ""
    cache_page_hours: Annotated[
        float,
        Field(
            ge=0,
            le=24 * 365,
            description="Hours a cached page is used without asking its server; older copies are revalidated (ETag / Last-Modified) and re-read only when changed.",
        ),
    ] = 24.0

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

    def _spec(self, name: str) -> ModelSpec:
        model, provider_url = split_model(name)
        return ModelSpec(
            model=model,
            base_url=self.base_url or provider_url,
            method=self.structured_output,
            timeout_s=self.model_timeout_s,
            max_concurrent=self.max_model_calls,
            requests_per_s=self.model_requests_per_s,
            max_attempts=self.model_attempts,
            backoff_s=self.retry_backoff_s,
            run_retries=self.max_retries_per_run,
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
        )

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


def validated(values: Mapping[str, Any], *, source: str) -> Context:
    """Build a Context, turning pydantic's errors into one ConfigError naming every bad field."""
    try:
        return Context(**values)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            name = ".".join(str(p) for p in err["loc"]) or "?"
            lines.append(
                f"{name}={err.get('input')!r}: {err['msg']} (set --{name.replace('_', '-')} "
                f"or {ENV_PREFIX}{name.upper()})"
            )
        raise ConfigError(f"invalid setting from {source}: " + "; ".join(lines)) from None
    except TypeError as exc:  # an unknown keyword
        raise ConfigError(f"invalid setting from {source}: {exc}") from None


def resolve(runtime: Runtime[Context]) -> Context:
    """Return the run's Context, or one from the environment when the caller passed none."""
    # Parent graphs, as_tool() and a bare ainvoke() pass no context: runtime.context is None.
    ctx = runtime.context
    if ctx is None:
        return Context.from_env()
    if isinstance(ctx, Mapping):  # a caller that bypassed LangGraph's own coercion
        return validated(ctx, source="context")
    return ctx
