"""The model client imported on a thread, and its first call's one-time work done there too.

Importing langchain-openai and openai costs about a second of CPU; a command does it on a
thread while its first calls wait on the network (``import_client_soon``, from
``OpenAIChat.structured``'s early path). The first call through ChatOpenAI then still pays
about 75 ms once per process: building the client (pydantic validation, openai's resources),
the structured-output runnable, and the modules its first answer imports (jiter, the tracers).
The same thread pays that too (``warm_first_call``), with a key that is never sent.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from importlib import import_module

# Imported by ChatOpenAI's first call, not by ``import langchain_openai`` (checked with
# langchain-openai 1.x and openai 2.x; a name another version lacks is skipped).
FIRST_CALL_MODULES = (
    "jiter",
    "langchain_core.runnables.fallbacks",
    "langchain_core.tracers.langchain",
    "langchain_core.tracers.stdout",
    "openai.lib.streaming.chat",
    "openai.resources.chat",
)
WARM_SCHEMA = {
    "title": "WarmUp",
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
}


def warm_first_call() -> None:
    """Do, once, what the first call through ChatOpenAI does once per process; send nothing."""
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    from deskresearch.services.model.http import async_client, sync_client

    for name in FIRST_CALL_MODULES:
        try:
            import_module(name)
        except ImportError:
            continue
    model = ChatOpenAI(model="gpt-4o-mini", api_key=SecretStr("warm-up, never sent"),
                       http_async_client=async_client({}, 5.0), http_client=sync_client({}, 5.0),
                       max_retries=0, openai_proxy=None)  # fmt: skip
    model.with_structured_output(WARM_SCHEMA, method="json_schema", include_raw=True)


def _import_client() -> None:
    try:
        import_module("langchain_openai")
        warm_first_call()
    except Exception:  # noqa: BLE001 - a broken install: the first call raises it, once
        pass


_importing: list[threading.Thread] = []  # the one import thread of this process, once started


def import_client_soon() -> threading.Thread:
    """Start importing the model client on a thread (once), so a call need not wait for it.

    For a caller whose next steps need no client (the CLI: the head start answered the
    keywords, the early calls go out without it): the import's CPU fills a network wait.
    """
    if not _importing:
        thread = threading.Thread(target=_import_client, name="import-langchain-openai",
                                  daemon=True)  # fmt: skip
        thread.start()
        _importing.append(thread)
    return _importing[0]


async def client_imported() -> None:
    """Import the model client off the event loop, once: a served graph's first call."""
    # In sys.modules but without ChatOpenAI yet: another thread is still importing it.
    if not hasattr(sys.modules.get("langchain_openai"), "ChatOpenAI"):
        await asyncio.to_thread(import_module, "langchain_openai")
