"""Helpers to run the real graph against the loopback web."""

from __future__ import annotations

import os
from typing import Any

from deskresearch import Context, build_graph
from deskresearch.services.model.llm import OpenAIChat
from deskresearch.services.search.corpus import CorpusSearch
from deskresearch.services.search.router import SearchRouter
from deskresearch.services.search.searxng import SearxngSearch
from deskresearch.services.search.tavily import TavilySearch
from tests.support.loopback import FakeWeb

LOOPBACK = "127.0.0.0/8"  # the loopback web; the fetcher refuses it unless allowed


def services_for(web: FakeWeb) -> dict[str, Any]:
    """Real ChatOpenAI and tavily-python, pointed at the loopback web (build_graph keywords)."""
    llm = OpenAIChat(environ={"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": web.base + "/v1"})
    search = SearchRouter({
        "tavily": TavilySearch(environ={"TAVILY_API_KEY": "tvly-test"}),
        "searxng": SearxngSearch(),
        "corpus": CorpusSearch(),
    })  # fmt: skip
    return {"llm": llm, "search": search}


def graph_for(web: FakeWeb, **kw: Any) -> Any:
    """The real graph: real ChatOpenAI and tavily-python, pointed at the loopback web."""
    return build_graph(**services_for(web), **kw)


def context_for(web: FakeWeb, **kw: Any) -> Context:
    kw.setdefault("allow_hosts", LOOPBACK)
    kw.setdefault("search", "tavily")  # never "auto": it could pick the real DuckDuckGo
    kw.setdefault("retry_backoff_s", 0.05)  # the fake model's 429s/500s need no real patience
    kw.setdefault("cache", False)  # tests (and bench) measure real work unless they ask for it
    return Context(tavily_base_url=web.base, **kw)


async def run(web: FakeWeb, topic: str = "EV battery recycling", **ctx: Any) -> dict[str, Any]:
    out = await graph_for(web).ainvoke({"topic": topic}, context=context_for(web, **ctx))
    assert isinstance(out, dict)
    return out


def loopback_env(web: FakeWeb, **extra: str) -> dict[str, str]:
    """This process's environment, minus every provider setting, pointed at the loopback web."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "TAVILY_", "DESKRESEARCH_", "LANGSMITH_", "LANGCHAIN_"))
    }
    return env | {
        "OPENAI_API_KEY": "test-key",
        "OPENAI_BASE_URL": web.base + "/v1",
        "TAVILY_API_KEY": "tvly-test",
        "DESKRESEARCH_TAVILY_BASE_URL": web.base,
        "DESKRESEARCH_ALLOW_HOSTS": LOOPBACK,
        "DESKRESEARCH_SEARCH": "tavily",
        "DESKRESEARCH_RETRY_BACKOFF_S": "0.05",
        "DESKRESEARCH_CACHE": "false",
        **extra,
    }
