"""The head start: a new run's first model call goes out while the command is still importing.

Importing LangGraph, langchain and the openai client costs about two seconds of CPU before a
graph can run, and the run's first step needs none of them: generate_keywords' prompt and
answer schema are known as soon as the settings are read. So ``deskresearch "topic"`` reads its
settings first (a light import), sends that one request on a thread with plain httpx and the
body ChatOpenAI would send for it (``json_schema``; a test compares the two), and only then
imports the research path. ``services.model.headstart.HeadStartChat`` hands the answer to
generate_keywords when the node asks exactly that question.

The head start only ever saves time. When it cannot answer — another structured-output
method, an answer the cache already holds, no endpoint configured, an HTTP error, a malformed
reply, a prompt that differs — the node's call is made the usual way, with its usual checks,
errors, retries and cache. Only the command line uses it: the settings are the user's own.
"""

from __future__ import annotations

import argparse
import os
import threading
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from deskresearch._version import __version__
from deskresearch.config.context import Context
from deskresearch.config.providers import OPENAI_DEFAULT_URL, endpoint_for
from deskresearch.prompts import keywords as prompt
from deskresearch.services.model.early import (
    EarlyReply,
    HeadStart,
    Prompt,
    asked_differently,
    busy,
    headers_for,
    reply_of,
    request_body,
    unreachable,
)
from deskresearch.services.storage.cache_store import answer_key, stored
from deskresearch.services.storage.checkpoints import default_location
from deskresearch.session.options import DEFAULT_OUTPUT, given_settings
from deskresearch.session.plan import Entry, Plan, reach
from deskresearch.session.plan import prepare as admit
from deskresearch.session.settings import Sources, gather

if TYPE_CHECKING:
    import httpx

    from deskresearch.services.servers import Reached

ENTRY = Entry("deskresearch", reviewer=True)  # a person at the terminal answers a review


@dataclass(frozen=True)
class Prepared:
    """A new run, admitted before the research path is imported, and its head start."""

    plan: Plan
    head: HeadStart | None
    checked: Future[Reached]  # the network pre-flight (what it found): before the head start


def prepare(ns: argparse.Namespace, environ: Mapping[str, str] = os.environ) -> Prepared:
    """Admit the new run the arguments ask for (the session's way), start the head start.

    Nothing is sent before the settings, the topic, the output folder, the checkpoint and cache
    files, the endpoint's URL and the search settings check out (the local pre-flight); the
    network pre-flight runs on a thread, and the head start's request waits for it.

    Raises:
        ConfigError: a bad setting, topic, path or URL, named with its origin and the fix.
    """
    plan = admit(ns.topic, gather(sources_of(ns, environ)), entry=ENTRY, environ=environ)
    checked: Future[Reached] = Future()
    threading.Thread(target=_check_network, args=(checked, plan, environ),
                     name="deskresearch-preflight", daemon=True).start()  # fmt: skip
    return Prepared(plan, begin(plan.context, plan.topic, environ, after=checked), checked)


def sources_of(ns: argparse.Namespace, environ: Mapping[str, str] = os.environ) -> Sources:
    """Where the parsed arguments' settings come from: flags, ``--config``, the environment."""
    flags = {**given_settings(vars(ns)), "output_dir": ns.output_dir,
             "checkpoints": ns.checkpoints, "review": ns.review}  # fmt: skip
    return Sources(flags=flags, config=ns.config, environ=environ,
                   defaults={"output_dir": DEFAULT_OUTPUT, "checkpoints": default_location()})  # fmt: skip


def _check_network(into: Future[Reached], plan: Plan, environ: Mapping[str, str]) -> None:
    """The network pre-flight on its own thread, while the research path imports."""
    import asyncio

    into.set_running_or_notify_cancel()
    try:
        found = asyncio.run(reach(plan.context, plan.settings, entry=ENTRY, environ=environ,
                                  new=not plan.resumed))  # fmt: skip
    except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which raises it
        into.set_exception(exc)
    else:
        into.set_result(found)


def begin(
    ctx: Context,
    topic: str,
    environ: Mapping[str, str] = os.environ,
    *,
    after: Future[Reached] | None = None,
) -> HeadStart | None:
    """Send generate_keywords' request on a thread, once ``after`` (the pre-flight) passed.

    None when the head start would not be used.
    """
    spec = ctx.summary_spec()
    if spec.method not in ("auto", "json_schema"):  # the first method tried is not json_schema
        return None
    base, key = endpoint_for(spec.base_url, environ)
    if not base and not key:
        return None  # the settings check names what is missing
    if asked_differently(spec.model, environ):
        return None  # ChatOpenAI sends these another request (developer role, Responses API)
    endpoint = base or OPENAI_DEFAULT_URL
    system, user = prompt.texts(topic=topic, max_keywords=ctx.max_keywords, today=date.today())
    pairs: Prompt = [("system", system), ("human", user)]
    schema = prompt.Keywords.model_json_schema()
    if spec.cache and stored(spec.cache.path, "answer", answer_key(endpoint, spec, pairs, schema)):
        return None  # answered from the cache, at no cost
    head = HeadStart(pairs, schema, spec, endpoint, Future())
    headers = headers_for(key, environ, f"deskresearch/{__version__} (head start)")
    body = request_body(spec.model, system, user, schema)
    url = endpoint.rstrip("/") + "/chat/completions"
    # The client is made here, the request sent on the thread: the imports that follow hold the
    # interpreter's lock most of the time, and the thread should need it only briefly.
    try:
        from deskresearch.services.model.http import sync_client

        client = sync_client(environ, spec.timeout_s)  # as the model calls' (the TLS context too)
        threading.Thread(
            target=_send, args=(head.reply, client, url, headers, body, after),
            name="deskresearch-head-start", daemon=True,
        ).start()  # fmt: skip
    except Exception:  # noqa: BLE001 - a bad proxy or CA setting: the usual call reports it
        return None
    return head


def _send(
    into: Future[EarlyReply | None],
    client: httpx.Client,
    url: str,
    headers: dict[str, str],
    body: dict[str, Any],
    after: Future[Reached] | None = None,
) -> None:
    """POST the request once the pre-flight passed.

    A refusal or a malformed answer gives None (asked as usual); a timeout, a lost connection,
    a 429 or a 5xx a transient ModelCallError, which the retry layer waits out before asking.
    """
    import httpx  # imported already: ``client`` is one

    if after is not None and after.exception() is not None:  # waits for it; a paid call
        client.close()  # must not leave for a run that cannot start
        into.set_result(None)
        return
    if not into.set_running_or_notify_cancel():  # the run stopped waiting already
        client.close()
        return
    try:
        with client:
            response = client.post(url, json=body, headers=headers)
    except httpx.UnsupportedProtocol:  # a URL without http(s)://: the usual call names it
        into.set_result(None)
        return
    except httpx.TransportError as exc:  # sent, maybe paid: not again at once
        into.set_exception(unreachable(body["model"], url, exc))
        return
    except Exception:  # noqa: BLE001 - a bad proxy setting: the usual call reports it
        into.set_result(None)
        return
    if (error := busy(body["model"], url, response)) is not None:
        into.set_exception(error)
        return
    into.set_result(reply_of(response))
