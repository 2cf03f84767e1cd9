"""One `langgraph dev` (and its loopback web) for every test here: the SDK and Studio's API, the
served MCP tool, chat and A2A, and a batch on a server all drive it the same way.

Starting a server takes seconds of CPU; these modules ask it the same questions under the same
deployment settings, so they share one (``server``, ``web``). Under pytest-xdist their tests run
on one worker (the ``xdist_group`` each module carries), which holds the server once.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.loopback import FakeWeb, serve
from tests.support.runs import loopback_env
from tests.support.server import dev_server

SERVED = "langgraph-dev"  # the xdist group of the modules that share the server


@pytest.fixture(scope="session")
def served_web() -> Iterator[FakeWeb]:
    """The loopback web the shared server's runs use."""
    with serve(FakeWeb()) as fake:
        yield fake


@pytest.fixture(scope="session")
def served(served_web: FakeWeb, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A `langgraph dev` process whose every outside URL points at the loopback fakes."""
    env = loopback_env(
        served_web,
        OPENAI_API_KEY="sk-server-secret",
        TAVILY_API_KEY="tvly-server-secret",
        # The cache file is the deployment's to choose; a run may only turn the cache on.
        DESKRESEARCH_CACHE_PATH=str(tmp_path_factory.mktemp("cache") / "cache.sqlite"),
    )
    with dev_server(env, tmp_path_factory.mktemp("server") / "server.log") as url:
        yield url


@pytest.fixture
def web(served_web: FakeWeb) -> FakeWeb:
    """The shared server's loopback web (what its runs search, read and ask)."""
    return served_web


@pytest.fixture
def server(served: str) -> str:
    """The shared server's URL."""
    return served
