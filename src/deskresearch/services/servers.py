"""Pre-flight, the network part: each server a run needs answers, before anything is sent or saved.

One quick request each, all at the same time, no retries (``services.preflight`` is the local
part, run first):

- each model endpoint (``GET /models``, free on every OpenAI-compatible server): it answers, it
  takes the key, and, when it lists its models, it serves the ones the run names (a local
  server that answers but lacks the model would otherwise fail the run's first call);
- the search engines of an explicitly named chain that live at a URL (Tavily, SearXNG): when
  none of them answers, every search would fail and the run would end with nothing;
- Tavily's key, whenever Tavily's own API is in the chain with a key (``GET /usage``, free): a
  rejected key would fail every search, or leave every search to the next engine without a
  word (a gateway at another URL is only asked whether it answers); and, when Tavily is the
  chain's only engine, that the same answer does not show its credits used up (every search
  would fail); when Tavily is the chain's first engine, fewer credits left than a new run's
  searches is a notice, not a stop (the cache, or an engine after it, may cover them);
- a PostgreSQL checkpoint database, and a Ray cluster's address;
- for a new run whose summary model is on a local server with no window given, the context that
  server gives it (``services.local_window``: Ollama's ``/api/ps`` and ``/api/show``, LM
  Studio's ``/api/v1/models``, llama.cpp's ``/props``; a few more free requests, each given a
  second, which never stop the run).

A refused connection fails in milliseconds instead of after the run's retries, and before a
checkpoint exists. Each failure is one line naming where the value came from and the fix.
httpx and psycopg are imported only when a check needs them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from deskresearch.config.context import Context
from deskresearch.errors import ConfigError, Unreachable, in_words
from deskresearch.safety.masking import mask_secrets
from deskresearch.services.local_window import Window, asked_context
from deskresearch.services.preflight import endpoints, models_on, origin_of, where_from
from deskresearch.services.probe import TIMEOUT_S, get_json
from deskresearch.services.search.checks import credits_left, credits_used_up
from deskresearch.services.storage.checkpoints import NO_POSTGRES, POSTGRES_SCHEMES
from deskresearch.text.plural import plural


def _listed(body: Any) -> set[str] | None:
    """The model ids a ``/models`` answer lists; None when it lists none we can trust.

    llama.cpp's server lists its one file and answers to any model name: not a list to hold a
    run's names against.
    """
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list) or not data:
        return None
    if any(isinstance(m, dict) and m.get("owned_by") == "llamacpp" for m in data):
        return None
    return {str(m["id"]) for m in data if isinstance(m, dict) and m.get("id")}


def _serves(listed: set[str], model: str) -> bool:
    # Ollama lists llama3.1:latest and answers to llama3.1. A LiteLLM proxy with wildcard
    # routing lists its routes as written ("*", "anthropic/*"): only "*" is a wildcard there.
    if model in listed or f"{model}:latest" in listed or model.removesuffix(":latest") in listed:
        return True
    return any(
        "*" in route and re.fullmatch(re.escape(route).replace(r"\*", ".*"), model)
        for route in listed
    )


async def _model_endpoint(
    base: str, setting: str, key: str | None, models: Mapping[str, str],
    origins: Mapping[str, str],
) -> None:  # fmt: skip
    import httpx

    shown = mask_secrets(base)
    where = origin_of(setting, origins)
    try:
        status, body = await get_json(base.rstrip("/") + "/models",
                                  {"Authorization": f"Bearer {key or 'not-needed'}"})  # fmt: skip
    except httpx.TransportError as exc:
        raise Unreachable(
            f"the model endpoint {shown} does not answer ({in_words(exc, TIMEOUT_S)}). Start the "
            f"server, or fix the URL (it comes from {where})"
        ) from None
    if status in (401, 403):
        raise ConfigError(
            f"the model endpoint {shown} rejected the API key (HTTP {status}): check "
            "OPENAI_API_KEY for that server"
        )
    listed = _listed(body) if status == 200 else None
    for model, role in models.items():
        if listed is not None and not _serves(listed, model):
            served = ", ".join(sorted(listed)[:8]) + (", ..." if len(listed) > 8 else "")
            raise ConfigError(
                f"the model endpoint {shown} does not serve the model {model!r} (from "
                f"{where_from(origins, role, f'the default {role}')}): it serves {served}. "
                "Name one of those, or load the model on that server"
            )


# Where a 401 on GET /usage can only mean the key: Tavily's own API. A gateway at another URL may
# hold the real key itself and route only /search, so there only "does it answer" is asked.
TAVILY_HOSTS = frozenset({"api.tavily.com"})
FALLBACK_TIMEOUT_S = 1.0  # a Tavily check another engine would cover holds the head start no longer


async def _engine(
    name: str, url: str, setting: str, origins: Mapping[str, str], *, key: str | None = None,
    proxy: str | None = None, timeout: float = TIMEOUT_S, alone: bool = False,
    searches: int = 0, what: str = "this run", after: str = "",
) -> str | None:  # fmt: skip
    """A search engine at ``url`` answers (any HTTP answer will do) and, given ``key``, takes it.

    The key goes to Tavily's ``GET /usage`` (free, no credit spent): a 401 there is the 401
    every search would get. ``alone``: no engine follows in the chain, so credits used up (a
    432 or 433 on every search) stop the run here too. The same answer showing fewer credits
    left than ``what`` makes ``searches`` is a notice (``after``: the engine the rest go to).
    """
    import httpx

    path, headers = ("/usage", {"Authorization": f"Bearer {key}"}) if key else ("/", {})
    try:
        status, body = await get_json(url.rstrip("/") + path, headers, proxy=proxy, timeout=timeout)
    except httpx.TransportError as exc:
        where = where_from(origins, setting, f"the default {setting}")
        raise Unreachable(
            f"the search engine {name} at {mask_secrets(url)} does not answer "
            f"({in_words(exc, timeout)}). Start it or fix the URL (it comes from {where}), or "
            "name another engine with --search"
        ) from None
    if key and status == 401:
        raise ConfigError(
            f"the search engine {name} at {mask_secrets(url)} rejected the API key (HTTP 401): "
            "check TAVILY_API_KEY, or name another engine with --search"
        )
    if key and alone and status == 200 and (spent := credits_used_up(body)):
        raise ConfigError(
            f"the search engine {name} at {mask_secrets(url)} would refuse every search: "
            f"{spent}, or name another engine with --search (e.g. --search duckduckgo)"
        )
    credits = credits_left(body) if key and status == 200 and searches else None
    if credits is None or credits.left >= searches:
        return None
    left = int(max(credits.left, 0))
    rest = f"go to {after}" if after else "fail (the run goes on with what the others found)"
    return (
        f"the search engine {name} at {mask_secrets(url)} has "
        f"{plural(left, 'credit') if left else 'no credits'} left ({credits.figures}); {what} "
        f"makes up to {plural(searches, 'search', 'searches')}, and those past its credits "
        f"{'' if credits.certain else 'may '}{rest}. Add credits at app.tavily.com, or name "
        "another engine with --search"
    )


def _tavily_check(url: str, environ: Mapping[str, str]) -> dict[str, Any]:
    """How Tavily at ``url`` is asked: with the key at Tavily's own API, through its proxy."""
    target = urlsplit(url)
    key = (environ.get("TAVILY_API_KEY") or None) if target.hostname in TAVILY_HOSTS else None
    proxy = environ.get("TAVILY_HTTPS_PROXY" if target.scheme == "https" else "TAVILY_HTTP_PROXY")
    return {"key": key, "proxy": proxy or None}


def searches_at_most(ctx: Context) -> int:
    """The searches a run makes at most: its keywords, its plan's queries, each round's leads."""
    return (
        ctx.max_keywords + ctx.decomposition_nums + (ctx.max_rounds - 1) * ctx.followups_per_round
    )


async def _search_engines(
    ctx: Context, origins: Mapping[str, str], environ: Mapping[str, str], *, new: bool = True,
    searches: tuple[int, str] | None = None,
) -> list[str]:  # fmt: skip
    """One of the chain's engines answers when all live at a URL; Tavily's key is taken.

    A key Tavily rejects fails the run even when an engine follows Tavily in the chain: that
    engine would otherwise serve every search without a word about the key the user set. The
    notices: Tavily's credits, when fewer are left than ``searches`` (how many, for what: by
    default a new run's at most).
    """
    settings = ctx.search_settings()
    urls = {"tavily": (settings.tavily_base_url, "tavily_base_url"),
            "searxng": (settings.searxng_url, "searxng_url")}  # fmt: skip
    tavily = _tavily_check(settings.tavily_base_url, environ)
    chain = settings.backends
    if "tavily" in chain:  # a resumed run may need no more search; a first engine, every one
        first = new and chain[0] == "tavily"
        count, what = searches or (searches_at_most(ctx), "this run")
        tavily |= {"alone": first and len(chain) == 1, "after": " then ".join(chain[1:]),
                   "searches": count if first else 0, "what": what}  # fmt: skip
    if not chain or any(b not in urls for b in chain):
        # The chain's fallback covers a Tavily that does not answer; not a key it rejects.
        if "tavily" in chain and tavily["key"]:
            with contextlib.suppress(Unreachable):
                notice = await _engine("tavily", *urls["tavily"], origins,
                                       **tavily | {"timeout": FALLBACK_TIMEOUT_S})  # fmt: skip
                return [notice] if notice else []
        return []
    results = await asyncio.gather(
        *(_engine(b, *urls[b], origins, **(tavily if b == "tavily" else {})) for b in chain),
        return_exceptions=True,
    )
    failed = [r for r in results if isinstance(r, BaseException)]
    if rejected := [r for r in failed if isinstance(r, ConfigError)]:
        raise rejected[0]
    if len(failed) == len(results):
        raise failed[0]
    return [r for r in results if isinstance(r, str)]


async def _postgres(url: str, origins: Mapping[str, str]) -> None:
    try:
        import psycopg
    except ImportError:
        raise ConfigError(NO_POSTGRES) from None
    try:
        conn = await psycopg.AsyncConnection.connect(url, connect_timeout=int(TIMEOUT_S))
        await conn.close()
    except psycopg.Error as exc:
        where = where_from(origins, "checkpoints", "DESKRESEARCH_CHECKPOINTS")
        first = " ".join(str(exc).split()).split(": ", 1)[-1][:200]
        raise Unreachable(
            f"the checkpoint database {mask_secrets(url)} does not answer ({first}). Start it, "
            f"fix the URL (it comes from {where}), or use a SQLite file"
        ) from None


@dataclass(frozen=True)
class Reached:
    """What the network pre-flight found that does not stop the run."""

    notices: tuple[str, ...] = ()  # Tavily's credits, a local server's window
    window: Window = Window()  # the summary model's context, as its local server said it


async def check_network(
    ctx: Context,
    *,
    checkpoints: str | None,
    origins: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
    providers: bool = True,
    new: bool = True,
    searches: tuple[int, str] | None = None,
) -> Reached:
    """Check that the servers the run needs answer: one quick request each, at the same time.

    Returns what it found that does not stop the run: the notices (Tavily's credits, a local
    server's window) and, for a new run whose summary model is on a local server with no
    ``summary_context_window`` given, the context that server says it gives the model.

    ``providers``: False to check only the checkpoint database (the model and search servers
    are another machine's: a Ray node's, a LangGraph server's). ``new``: False for a resumed
    run, which may need no more search: Tavily's credits are not held against it, and its
    window is the one it was saved with. ``searches``: the searches Tavily's credits are held
    against, and whose (a batch's); by default a new run's at most.

    Raises:
        Unreachable: a server does not answer (the first one found).
        ConfigError: a server answered that the key is wrong, or that it lacks a model.
    """
    origins = origins or {}
    env = os.environ if environ is None else environ
    checks: list[Coroutine[Any, Any, Any]] = []
    if providers:
        for base, (setting, key) in endpoints(ctx, env).items():
            checks.append(_model_endpoint(base, setting, key, models_on(ctx, base, env), origins))
        checks.append(_search_engines(ctx, origins, env, new=new, searches=searches))
    if checkpoints and checkpoints.startswith(POSTGRES_SCHEMES):
        checks.append(_postgres(checkpoints, origins))
    if providers and new:
        checks.append(asked_context(ctx, env))
    results = await asyncio.gather(*checks, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    window = next((r for r in results if isinstance(r, Window)), Window())
    notices = [notice for result in results if isinstance(result, list) for notice in result]
    return Reached((*notices, *window.notices), window)


def check_ray_address(address: str) -> None:
    """Raise Unreachable unless something listens at a Ray address (``host:port``, ``ray://``).

    ``auto`` and ``local`` are Ray's own to find. Without this, ``ray.init`` on an address where
    nothing listens retries for minutes before it gives up.
    """
    import socket

    if address in ("", "auto", "local"):
        return
    target = urlsplit(address if "://" in address else f"ray://{address}")
    host, port = target.hostname, target.port or (10001 if target.scheme == "ray" else 6379)
    if not host:
        raise ConfigError(f"--ray {address!r} is not an address: give host:port, e.g. head:6379")
    try:
        socket.create_connection((host, port), timeout=TIMEOUT_S).close()
    except OSError as exc:
        raise Unreachable(
            f"no Ray cluster answers at {host}:{port} ({in_words(exc, TIMEOUT_S)}). Start one "
            "with `ray start --head`, or give its address with --ray host:6379"
        ) from None
