"""ChatService over langchain-openai's ChatOpenAI: any OpenAI-compatible endpoint.

The client (langchain-openai and openai: about a second of CPU to import; the command keeps
openai's aiohttp transport out) is imported at the first call, not with the graph. The CLI's client
(``early=True``) sends its first structured calls without it (``model.early``) and imports it on a
thread while the first of them waits on the network (``client_import``).

One retry layer: ChatOpenAI's own retries are off (``max_retries=0``); transient failures become
``ModelCallError(transient=True)`` carrying the status and ``Retry-After``, and
``services.retry.RetryingChat`` retries them under the run's rate limits and retry budget.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

import httpx
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from pydantic import SecretStr, ValidationError

from deskresearch.config.providers import OPENAI_DEFAULT_URL, endpoint_for
from deskresearch.errors import (
    NO_ENDPOINT,
    ConfigError,
    ContextLengthError,
    ModelCallError,
    ModelOutputError,
)
from deskresearch.prompts.common import JSON_MODE_INSTRUCTION
from deskresearch.records import ModelSpec, Stage, Usage
from deskresearch.safety.masking import mask_secrets
from deskresearch.services.base import M, Reply
from deskresearch.services.model.client_import import client_imported, import_client_soon
from deskresearch.services.model.cut import check_read, suspect
from deskresearch.services.model.early import EarlyCalls
from deskresearch.services.model.early import client_imported as client_imported_now
from deskresearch.services.model.http import async_client, call_timeout, sync_client
from deskresearch.services.model.structured import (
    Method,
    json_schema,
    methods_for,
    parse_tolerant,
    strip_reasoning,
)
from deskresearch.services.model.usage import counted, usage_of
from deskresearch.state import merge_usage

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI


def salvage(raw: Any, schema: type[M]) -> M:
    """Read ``schema`` from an answer the client could not parse: tool arguments or free text."""
    for call in getattr(raw, "tool_calls", None) or []:
        try:
            return schema.model_validate(call.get("args") or {})
        except ValidationError:
            continue
    text = raw.text if isinstance(raw, AIMessage) else str(raw or "")
    return parse_tolerant(text, schema)


def trace_config(stage: Stage, *tags: str) -> RunnableConfig:
    """Name and tag one model call by its stage, so traces read as the graph does."""
    return {"run_name": f"{stage} model", "tags": [f"stage:{stage}", *tags]}


class OpenAIChat:
    """Calls OpenAI-compatible chat endpoints through ChatOpenAI.

    Args:
        api_key: overrides ``OPENAI_API_KEY``; never stored in graph state.
        http_async_client: the httpx client ChatOpenAI uses (tests pass one on a MockTransport).
        environ: where ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` are read (default: os.environ).
        early: while the client is not yet imported (then imported on a thread), send
            ``json_schema`` calls as ChatOpenAI would, with plain httpx (``model.early``): the
            second call of a command need not wait for the import. Whatever the early request
            cannot answer is asked the usual way.
        client_ready: whether the client is imported (tests force the early path).
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        http_async_client: httpx.AsyncClient | None = None,
        environ: Mapping[str, str] | None = None,
        early: bool = False,
        client_ready: Callable[[], bool] = client_imported_now,
    ) -> None:
        self._api_key = api_key
        self._http = http_async_client
        self._given = http_async_client is not None  # a test's transport: ChatOpenAI's sync too
        self._env = os.environ if environ is None else environ
        self._early = EarlyCalls(self._env, self._async_http) if early else None
        self._client_ready = client_ready
        # One client per (model, endpoint, timeout): a run's budget or limits must not make a
        # new client that outlives the run.
        self._models: dict[tuple[str, str, float], ChatOpenAI] = {}
        self._unstreamed_models: dict[tuple[str, str, float], ChatOpenAI] = {}  # copies of those
        self._runnables: dict[tuple[int, type, Method], Any] = {}  # (id of a model above, ...)
        self._rejected: set[tuple[tuple[str, str], Method]] = set()  # (endpoint, model), method

    def _endpoint(self, spec: ModelSpec) -> tuple[str | None, str | None]:
        return endpoint_for(spec.base_url, self._env, self._api_key)

    def endpoint(self, spec: ModelSpec) -> str:
        """Return the base URL this service calls for ``spec`` (the cache and limits key on it)."""
        return self._endpoint(spec)[0] or OPENAI_DEFAULT_URL

    def check(self, spec: ModelSpec) -> None:
        """Raise ConfigError when there is neither an API key nor a base URL."""
        base, key = self._endpoint(spec)
        if not key and not base:
            raise ConfigError(NO_ENDPOINT)

    def _model(self, spec: ModelSpec) -> ChatOpenAI:
        client = (spec.model, spec.base_url, spec.timeout_s)
        if client not in self._models:
            from langchain_openai import ChatOpenAI  # at the first call: see the module's doc

            self.check(spec)
            base, key = self._endpoint(spec)
            self._models[client] = ChatOpenAI(
                model=spec.model,
                base_url=base,
                # Local servers ignore the key but the client insists on one.
                api_key=SecretStr(key or "not-needed"),
                timeout=call_timeout(spec.timeout_s),
                max_retries=0,
                http_async_client=self._async_http(spec),
                http_client=None if self._given else sync_client(self._env, spec.timeout_s),
                # Our clients carry OPENAI_PROXY already; ChatOpenAI refuses a proxy beside them.
                openai_proxy=self._env.get("OPENAI_PROXY") if self._given else None,
                # A streamed call (LangGraph's `messages` mode: Studio, the SDK) reports usage
                # only when asked; OpenAI's API takes the ask, other servers may refuse it.
                stream_usage=(base or OPENAI_DEFAULT_URL).rstrip("/") == OPENAI_DEFAULT_URL or None,
            )
        return self._models[client]

    def _unstreamed(self, spec: ModelSpec) -> ChatOpenAI:
        """``_model(spec)``, never streamed: for the structured calls.

        LangGraph's ``messages`` mode streams any call made under it (its "nostream" tag only
        keeps the chunks out of the stream); a JSON answer is of no use token by token, and a
        streamed one comes without usage from most servers.
        """
        client = (spec.model, spec.base_url, spec.timeout_s)
        if client not in self._unstreamed_models:
            model = self._model(spec).model_copy(update={"disable_streaming": True})
            self._unstreamed_models[client] = model
        return self._unstreamed_models[client]

    def _runnable(
        self,
        model: ChatOpenAI,
        schema: type[M],
        method: Literal["json_schema", "function_calling", "json_mode"],
    ) -> Any:
        """``model``'s structured-output runnable for ``schema``, built once (it keeps no state)."""
        key = (id(model), schema, method)
        if key not in self._runnables:
            self._runnables[key] = model.with_structured_output(
                json_schema(schema), method=method, include_raw=True
            )
        return self._runnables[key]

    def _async_http(self, spec: ModelSpec) -> httpx.AsyncClient:
        """The given client, else one of ours on the shared TLS context (``model.http``)."""
        if self._http is None:
            self._http = async_client(self._env, spec.timeout_s)
        return self._http

    async def structured(
        self, messages: Sequence[BaseMessage], schema: type[M], *, spec: ModelSpec, stage: Stage
    ) -> Reply[M]:
        """Ask for an answer shaped like ``schema``, trying the method chain when ``auto``.

        A method the server rejects (HTTP 400/422) is skipped for this endpoint from then on;
        an answer that does not parse moves this call to the next method. Every attempt's
        tokens are counted.
        """
        endpoint = (self._endpoint(spec)[0] or "", spec.model)
        chain = methods_for(spec.method)
        methods = [m for m in chain if (endpoint, m) not in self._rejected] or [chain[-1]]
        spent: list[Usage] = []
        problems: list[str] = []
        if self._early and methods[0] == "json_schema" and not self._client_ready():
            import_client_soon()  # while this call waits on the network, not before
            base, key = self._endpoint(spec)
            got = await self._early.ask(messages, json_schema(schema), spec, base, key)
            if got is not None:
                usage = Usage(stage=stage, model=spec.model, input_tokens=got.input_tokens,
                              output_tokens=got.output_tokens, calls=1)  # fmt: skip
                await self._read_whole(messages, usage, spec)
                try:
                    return Reply(parse_tolerant(got.content, schema), usage)
                except ModelOutputError:
                    spent.append(usage)  # asked again the usual way; its tokens still count
        for method in methods:
            try:
                value, usage = await self._structured_once(messages, schema, spec, stage, method)
            except ContextLengthError as exc:
                if spent and exc.usage:  # earlier attempts' tokens count too
                    exc.usage = merge_usage([], [*spent, exc.usage])[0]
                raise
            except ModelCallError as exc:
                if len(chain) == 1 or exc.status not in (400, 422) or method == methods[-1]:
                    raise
                self._rejected.add((endpoint, method))
                problems.append(f"{method} rejected by the server ({exc.status})")
                continue
            except ModelOutputError as exc:
                spent += [exc.usage] if exc.usage else []
                problems.append(f"{method}: {exc}")
                continue
            # Same stage and model for every attempt: the reducer adds them into one row.
            return Reply(value, merge_usage([], [*spent, usage])[0])
        raise ModelOutputError(
            f"{stage}: {spec.model} gave no valid {schema.__name__}: " + "; ".join(problems),
            usage=merge_usage([], spent)[0] if spent else None,
        )

    async def _structured_once(
        self,
        messages: Sequence[BaseMessage],
        schema: type[M],
        spec: ModelSpec,
        stage: Stage,
        method: Method,
    ) -> tuple[M, Usage]:
        msgs = list(messages)
        if method in ("json_mode", "text"):
            # Neither carries the schema to the server: it has to be in the prompt.
            schema_text = json.dumps(json_schema(schema))
            msgs.append(SystemMessage(JSON_MODE_INSTRUCTION.format(schema=schema_text)))
        # JSON answers are useless token by token: keep them out of `messages` streams
        # ("nostream" for LangGraph, "langsmith:nostream" for LangSmith and the server).
        config = trace_config(stage, "nostream", "langsmith:nostream")
        await client_imported()
        model = self._unstreamed(spec)
        if method == "text":
            raw = await self._call(partial(model.ainvoke, config=config), msgs, spec)
            parsed: Any = None
        else:
            # A dict schema, not the class: the openai client would parse a class itself and
            # raise on a bad answer before include_raw could hand us the answer and its usage.
            runnable = self._runnable(model, schema, method)
            out = await self._call(partial(runnable.ainvoke, config=config), msgs, spec)
            raw, parsed = out.get("raw"), out.get("parsed")
        usage = usage_of(raw, stage=stage, model=spec.model)
        await self._read_whole(msgs, usage, spec)
        try:
            return schema.model_validate(parsed), usage
        except ValidationError:
            pass
        try:
            return salvage(raw, schema), usage
        except ModelOutputError as exc:
            raise ModelOutputError(str(exc), usage=usage) from None

    async def text(
        self, messages: Sequence[BaseMessage], *, spec: ModelSpec, stage: Stage
    ) -> Reply[str]:
        """Ask for free text; reasoning blocks are removed."""
        config = trace_config(stage)
        await client_imported()
        out = await self._call(
            partial(self._model(spec).ainvoke, config=config), list(messages), spec
        )
        content = out.text if isinstance(out, AIMessage) else str(out)
        usage = usage_of(out, stage=stage, model=spec.model)
        if usage["input_tokens"] or usage["output_tokens"]:
            await self._read_whole(messages, usage, spec)
        else:  # streamed by a server that says nothing (our count cannot tell a cut prompt)
            # Counting may load the tokenizer (a file read): off the event loop, which
            # `langgraph dev` checks for blocking calls.
            usage = await asyncio.to_thread(counted, messages, content, usage)
        finish = (getattr(out, "response_metadata", None) or {}).get("finish_reason")
        return Reply(strip_reasoning(content), usage, truncated=finish == "length")

    async def _read_whole(
        self, messages: Sequence[BaseMessage], usage: Usage, spec: ModelSpec
    ) -> None:
        """Raise ContextLengthError when a local server says it read far less than it was sent.

        Only local servers are checked; the count runs off the event loop (it may load the
        tokenizer), and only for a prompt ``suspect`` finds long for what the server read.
        """
        base = self.endpoint(spec)
        if suspect(messages, usage, base):
            await asyncio.to_thread(check_read, messages, usage, model=spec.model, base=base)

    async def _call(self, fn: Any, messages: list[BaseMessage], spec: ModelSpec) -> Any:
        """Run one call, translating openai errors into ours (``model.call_errors``)."""
        base = mask_secrets(spec.base_url or self._env.get("OPENAI_BASE_URL") or "api.openai.com")
        try:
            return await fn(messages)
        except Exception as exc:
            # Imported here: it imports openai, which a command imports on a thread (client_import).
            from deskresearch.services.model.call_errors import translated

            if (ours := translated(exc, spec.model, base)) is None:
                raise
            raise ours from exc
