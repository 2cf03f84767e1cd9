"""What each search backend needs configured, checked without importing its client.

The backends' ``check`` methods use these rules, and the CLI runs them on the whole chain before
its head start sends anything (``deskresearch.cli.headstart``): a run whose search settings cannot
work spends nothing. Light on purpose: no search client is imported here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from deskresearch.config.fields import BACKENDS
from deskresearch.errors import ConfigError
from deskresearch.records import SearchSettings
from deskresearch.safety.masking import mask_secrets


def _http(url: str) -> bool:
    return url.startswith(("http://", "https://"))


def check_backend(name: str, settings: SearchSettings) -> None:
    """Raise ConfigError when backend ``name`` cannot work with ``settings``."""
    if name == "tavily" and not _http(settings.tavily_base_url):
        raise ConfigError(
            f"tavily_base_url={settings.tavily_base_url!r} is not an http(s) URL: "
            "set --tavily-base-url or DESKRESEARCH_TAVILY_BASE_URL"
        )
    if name == "searxng" and not _http(settings.searxng_url):
        raise ConfigError(
            f"search=searxng needs the instance's URL (got {mask_secrets(settings.searxng_url)!r}): "
            "set SEARXNG_URL or --searxng-url, e.g. http://localhost:8888"
        )
    if name == "corpus":
        if not settings.corpus_dir:
            raise ConfigError(
                "search=corpus needs a folder: set --corpus-dir or DESKRESEARCH_CORPUS_DIR"
            )
        if not Path(settings.corpus_dir).expanduser().is_dir():
            raise ConfigError(
                f"corpus_dir={settings.corpus_dir!r} is not a folder: point --corpus-dir at "
                "a folder of .md/.txt/.html/.pdf files"
            )


def check_chain(settings: SearchSettings) -> None:
    """Check every backend of the real chain, as ``SearchRouter.check`` does with its own."""
    for name in settings.backends:
        if name not in BACKENDS:
            raise ConfigError(
                f"search backend {name!r} is unknown: use one of {', '.join(sorted(BACKENDS))}"
            )
        check_backend(name, settings)


def _count(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class _Usage(NamedTuple):
    """The figures of Tavily's ``GET /usage`` answer (None: not a number there)."""

    used: float | None
    limit: float | None
    plan: float | None
    plan_limit: float | None
    paygo: float | None
    paygo_limit: float | None


def _usage(answer: Any) -> _Usage:
    key = answer.get("key") if isinstance(answer, dict) else None
    key = key if isinstance(key, dict) else {}
    account = answer.get("account") if isinstance(answer, dict) else None
    account = account if isinstance(account, dict) else {}
    return _Usage(_count(key.get("usage")), _count(key.get("limit")),
                  _count(account.get("plan_usage")), _count(account.get("plan_limit")),
                  _count(account.get("paygo_usage")), _count(account.get("paygo_limit")))  # fmt: skip


def credits_used_up(usage: Any) -> str | None:
    """Why Tavily's ``GET /usage`` answer shows no credit left for a search, and the fix; or None.

    Only what the answer states for certain: the key's own limit reached, or the plan's credits
    and a pay-as-you-go allowance both spent. A limit that is missing, null or 0 may mean none
    (Tavily's free plan answers ``paygo_limit: null``), so it never stops a run.
    """
    u = _usage(usage)
    if u.used is not None and u.limit and u.used >= u.limit:
        return (f"this key's limit is reached ({u.used:,.0f} of {u.limit:,.0f} credits used). "
                "Raise the key's limit at app.tavily.com")  # fmt: skip
    if (u.plan is not None and u.plan_limit and u.plan >= u.plan_limit
            and u.paygo is not None and u.paygo_limit and u.paygo >= u.paygo_limit):  # fmt: skip
        return (f"the account's credits are used up (plan: {u.plan:,.0f} of {u.plan_limit:,.0f}; "
                f"pay-as-you-go: {u.paygo:,.0f} of {u.paygo_limit:,.0f}). Add credits at "
                "app.tavily.com")  # fmt: skip
    return None


class Credits(NamedTuple):
    """What Tavily's ``GET /usage`` answer states is left."""

    left: float
    figures: str  # the answer's own numbers, as a user reads them
    certain: bool  # a stated limit: searches past it are refused (else they may be billed)


def credits_left(usage: Any) -> Credits | None:
    """The fewest credits Tavily's ``GET /usage`` answer states are left; or None.

    The key's own limit, and the account's plan (with its pay-as-you-go allowance when one is
    stated): a limit that is missing, null or 0 states nothing. A plan whose pay-as-you-go limit
    is not stated is not certain: Tavily's free plan has none, a paid one may have no cap.
    """
    u, found = _usage(usage), list[Credits]()
    if u.used is not None and u.limit:
        found.append(
            Credits(u.limit - u.used, f"this key: {u.used:,.0f} of {u.limit:,.0f} used", True)
        )
    if u.plan is not None and u.plan_limit:
        figures = f"plan: {u.plan:,.0f} of {u.plan_limit:,.0f} used"
        if u.paygo is not None and u.paygo_limit:
            left = u.plan_limit - u.plan + max(u.paygo_limit - u.paygo, 0)
            figures += f", pay-as-you-go: {u.paygo:,.0f} of {u.paygo_limit:,.0f}"
            found.append(Credits(left, figures, True))
        else:
            figures += ", no pay-as-you-go limit stated"
            found.append(Credits(u.plan_limit - u.plan, figures, False))
    return min(found, key=lambda c: (c.left, not c.certain)) if found else None
