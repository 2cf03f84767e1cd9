"""ChatService over langchain-openai's ChatOpenAI: any OpenAI-compatible endpoint.

One retry layer: ChatOpenAI's own retries are off (``max_retries=0``); transient failures become
``ModelCallError(transient=True)`` and the graph's per-node RetryPolicy retries them with backoff.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import httpx
import openai
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_openai import ChatOpenAI
from pydantic import SecretStr, ValidationError

from deskresearch.errors import ConfigError, ModelCallError, ModelOutputError
from deskresearch.prompts.common import JSON_MODE_INSTRUCTION
from deskresearch.records import ModelSpec, Stage, Usage
from deskresearch.services.base import M, Reply

_THINK = re.compile(r"<think>.*?(</think>|\Z)", re.DOTALL | re.IGNORECASE)
NO_ENDPOINT = (
    "no model endpoint configured: set OPENAI_API_KEY to use OpenAI, or point at an "
    "OpenAI-compatible server (Ollama, vLLM, llama.cpp) with OPENAI_BASE_URL or --base-url, "
    "e.g. http://localhost:11434/v1"
)


def strip_reasoning(text: str) -> str:
    """Remove ``<think>…</think>`` blocks that reasoning models put before their answer."""
    return _THINK.sub("", text).strip()


def usage_of(message: Any, *, stage: Stage, model: str) -> Usage:
    """Read token usage from an AIMessage (zero when the server reports none)."""
    meta = getattr(message, "usage_metadata", None) or {}
    return Usage(
        stage=stage,
        model=model,
        input_tokens=int(meta.get("input_tokens", 0)),
        output_tokens=int(meta.get("output_tokens", 0)),
        calls=1,
    )


def trace_config(stage: Stage, *tags: str) -> RunnableConfig:
    """Name and tag one model call by its stage, so traces read as the graph does."""
    return {"run_name": f"{stage} model", "tags": [f"stage:{stage}", *tags]}


class OpenAIChat:
    """Calls OpenAI-compatible chat endpoints through ChatOpenAI.

    Args:
        api_key: overrides ``OPENAI_API_KEY``; never stored in graph state.
        http_async_client: the httpx client ChatOpenAI uses (tests pass one on a MockTransport).
        environ: where ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` are read (default: os.environ).
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        http_async_client: httpx.AsyncClient | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._api_key = api_key
        self._http = http_async_client
        self._env = os.environ if environ is None else environ
        self._models: dict[ModelSpec, ChatOpenAI] = {}

    def _endpoint(self, spec: ModelSpec) -> tuple[str | None, str | None]:
        base = spec.base_url or self._env.get("OPENAI_BASE_URL") or None
        key = self._api_key or self._env.get("OPENAI_API_KEY") or None
        return base, key

    def check(self, spec: ModelSpec) -> None:
        """Raise ConfigError when there is neither an API key nor a base URL."""
        base, key = self._endpoint(spec)
        if not key and not base:
            raise ConfigError(NO_ENDPOINT)

    def _model(self, spec: ModelSpec) -> ChatOpenAI:
        if spec not in self._models:
            self.check(spec)
            base, key = self._endpoint(spec)
            self._models[spec] = ChatOpenAI(
                model=spec.model,
                base_url=base,
                # Local servers ignore the key but the client insists on one.
                api_key=SecretStr(key or "not-needed"),
                timeout=spec.timeout_s,
                max_retries=0,
                http_async_client=self._http,
            )
        return self._models[spec]

    async def structured(
        self, messages: Sequence[BaseMessage], schema: type[M], *, spec: ModelSpec, stage: Stage
    ) -> Reply[M]:
        """Ask for an answer shaped like ``schema``; raise ModelOutputError when it is not."""
        msgs = list(messages)
        if spec.method == "json_mode":
            # json_mode only promises JSON; the schema has to be in the prompt.
            schema_text = json.dumps(schema.model_json_schema())
            msgs.append(SystemMessage(JSON_MODE_INSTRUCTION.format(schema=schema_text)))
        runnable = self._model(spec).with_structured_output(
            schema, method=spec.method, include_raw=True
        )
        # JSON answers are useless token by token: keep them out of `messages` streams
        # ("nostream" for LangGraph, "langsmith:nostream" for LangSmith and the server).
        config = trace_config(stage, "nostream", "langsmith:nostream")
        out = await self._call(partial(runnable.ainvoke, config=config), msgs, spec)
        raw = out.get("raw") if isinstance(out, dict) else None
        usage = usage_of(raw, stage=stage, model=spec.model)
        parsed = out.get("parsed") if isinstance(out, dict) else None
        if isinstance(parsed, schema):
            return Reply(parsed, usage)
        detail = out.get("parsing_error") if isinstance(out, dict) else None
        raise ModelOutputError(
            f"{stage}: {spec.model} did not return a valid {schema.__name__}: {detail}",
            usage=usage,
        )

    async def text(
        self, messages: Sequence[BaseMessage], *, spec: ModelSpec, stage: Stage
    ) -> Reply[str]:
        """Ask for free text; reasoning blocks are removed."""
        config = trace_config(stage)
        out = await self._call(
            partial(self._model(spec).ainvoke, config=config), list(messages), spec
        )
        usage = usage_of(out, stage=stage, model=spec.model)
        content = out.text if isinstance(out, AIMessage) else str(out)
        return Reply(strip_reasoning(content), usage)

    async def _call(self, fn: Any, messages: list[BaseMessage], spec: ModelSpec) -> Any:
        """Run one call, translating openai errors into ours."""
        base = spec.base_url or self._env.get("OPENAI_BASE_URL") or "api.openai.com"
        try:
            return await fn(messages)
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise ConfigError(
                f"the model endpoint {base} rejected the API key ({exc.status_code}): "
                "check OPENAI_API_KEY"
            ) from exc
        except openai.NotFoundError as exc:
            raise ConfigError(
                f"model {spec.model!r} is not served at {base}: pick one it has "
                "(--summary-model / --report-model)"
            ) from exc
        except (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError) as exc:
            raise ModelOutputError(f"{spec.model} stopped early: {exc}") from exc
        except (ValidationError, json.JSONDecodeError) as exc:
            # json_schema parsing happens inside the openai client, before include_raw can help.
            raise ModelOutputError(
                f"{spec.model} returned malformed structured output: {exc}"
            ) from exc
        except openai.APIStatusError as exc:
            transient = exc.status_code == 429 or exc.status_code >= 500
            raise ModelCallError(
                f"{spec.model} at {base} answered HTTP {exc.status_code}: {exc.message}",
                transient=transient,
            ) from exc
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise ModelCallError(
                f"{spec.model} at {base} unreachable: {exc} (is the server running?)",
                transient=True,
            ) from exc
