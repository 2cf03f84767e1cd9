"""Exceptions raised by deskresearch.

DeskResearchError
├── ConfigError        a setting, input or credential is wrong; says which and how to fix it
├── ServiceError       an I/O service failed; ``transient`` says whether a retry may help
│   ├── ModelCallError the model endpoint failed (HTTP 5xx/429, timeout, connection)
│   │   ├── ContextLengthError  the input is longer than the model's window (retry smaller)
│   │   └── BudgetExhausted     the run's token budget is spent: no more gathering calls
│   ├── Unreachable    a server the run needs does not answer (found by the pre-flight)
│   ├── SearchError    .backend, .query, .reason
│   └── FetchError     .url, .reason ("timeout", "too_many_redirects", "not_html", "http_404", ...)
│       └── RefusedURL the network policy refuses the URL (scheme, address, malformed): never a source
│           └── OutOfScope  the URL or a redirect leaves the run's domain scope (include/exclude_domains)
├── RunFailed          a run ended with an error on the server that ran it
└── ModelOutputError   the model answered, but not in the shape we asked for

``ConfigError`` subclasses ``ValueError`` so callers that validate input can catch it as such.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deskresearch.records import Usage


class DeskResearchError(Exception):
    """Base class of every error deskresearch raises on purpose."""


class ConfigError(DeskResearchError, ValueError):
    """A setting, an input or a credential is wrong; the message names it and the fix."""


class ServiceError(DeskResearchError):
    """An I/O service failed.

    Attributes:
        transient: True when the same call may succeed later (HTTP 429/5xx, timeouts,
            dropped connections); the graph's retry policy retries only these.
    """

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient


class ModelCallError(ServiceError):
    """The model endpoint did not answer usefully.

    Attributes:
        status: the HTTP status, when there was one.
        retry_after: seconds the server asked us to wait (``Retry-After``), when it said.
    """

    def __init__(
        self,
        message: str,
        *,
        transient: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, transient=transient)
        self.status = status
        self.retry_after = retry_after


class Unreachable(ServiceError):
    """A server the run needs (model endpoint, search engine, database, cluster) does not answer.

    Raised by the pre-flight (services.preflight) before anything is sent or saved.
    """


def in_words(exc: BaseException, timeout_s: float) -> str:
    """A failed connection in words, not a class name: refused, timed out, or its own text.

    httpx says "All connection attempts failed" (its class: ConnectError) for a refused one.
    """
    text = " ".join(str(exc).split())
    name = type(exc).__name__
    if (
        "refused" in text.lower()
        or name == "ConnectError"
        or isinstance(exc, ConnectionRefusedError)
    ):
        return "nothing accepts connections there"
    if "Timeout" in name or isinstance(exc, TimeoutError):
        return f"no answer within {timeout_s:g} s"
    return text[:160] or "the connection failed"


NO_ENDPOINT = (
    "no model endpoint configured: set OPENAI_API_KEY to use OpenAI, or point at an "
    "OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio) with OPENAI_BASE_URL or --base-url, "
    "e.g. http://localhost:11434/v1"
)


class ContextLengthError(ModelCallError):
    """The prompt is longer than the model's context window; a shorter one may work.

    Attributes:
        usage: the tokens a call cost when the server answered from a prompt it cut.
    """

    def __init__(self, message: str, *, status: int | None = None, usage: Usage | None = None):
        super().__init__(message, status=status)
        self.usage = usage


BUDGET_REACHED = "token budget reached"


def budget_reached(state: Mapping[str, Any]) -> bool:
    """Tell from a run's state whether its token budget refused a call (``budget_stopped``)."""
    return bool(state.get("budget_stopped"))


def budget_update(exc: BaseException) -> dict[str, bool]:
    """The state update an error handler adds when ``exc`` is the budget's refusal."""
    return {"budget_stopped": True} if isinstance(exc, BudgetExhausted) else {}


class BudgetExhausted(ModelCallError):
    """The run spent its token budget; calls that gather evidence are refused from now on."""

    def __init__(self, budget: int, spent: int) -> None:
        super().__init__(f"{BUDGET_REACHED} ({spent} of {budget} tokens): stopped gathering")


class SearchError(ServiceError):
    """A search backend failed for one query."""

    def __init__(self, backend: str, query: str, reason: str, *, transient: bool = False) -> None:
        super().__init__(f"{backend} search for {query!r} failed: {reason}", transient=transient)
        self.backend = backend
        self.query = query
        self.reason = reason


class FetchError(ServiceError):
    """A page could not be fetched or read.

    Attributes:
        chain: the URLs requested before it failed, the first to the last (redirects followed),
            when the fetcher knows them: the cache remembers a failure only with its chain.
    """

    def __init__(
        self, url: str, reason: str, *, transient: bool = False, chain: tuple[str, ...] = ()
    ) -> None:
        super().__init__(f"fetching {url} failed: {reason}", transient=transient)
        self.url = url
        self.reason = reason
        self.chain = chain


class RefusedURL(FetchError):
    """The network policy refuses this URL: not http(s), malformed, or a non-public address.

    Unlike other fetch failures it never falls back to the search snippet: a refused URL must
    not become a source, or the report would link readers to it.
    """

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(url, reason, transient=False)


class OutOfScope(RefusedURL):
    """The URL, or a redirect it leads to, is outside the run's domain scope.

    A host outside ``include_domains`` or under ``exclude_domains``: refused like a URL the
    network policy refuses (no snippet fallback), and recorded as ``out_of_scope``.
    """


class RunFailed(DeskResearchError):
    """A run ended with an error on the server that ran it; the message is one line."""


class ModelOutputError(DeskResearchError):
    """The model answered, but the answer does not have the shape we asked for.

    Attributes:
        usage: the tokens the failed call still cost, so they are not lost from the totals.
    """

    def __init__(self, message: str, *, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage = usage


def is_transient(exc: BaseException) -> bool:
    """Tell a RetryPolicy whether ``exc`` may go away on retry.

    Our services translate library errors at the boundary, so only ``ServiceError`` carries the
    answer; anything else (bugs, config, malformed output) is not retried by the graph.
    """
    return isinstance(exc, ServiceError) and exc.transient
