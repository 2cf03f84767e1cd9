"""openai's errors as ours: what the user can fix (ConfigError) and what the retry layer retries."""

from __future__ import annotations

import json

import openai
from pydantic import ValidationError

from deskresearch.errors import ConfigError, ContextLengthError, ModelCallError, ModelOutputError
from deskresearch.services.model.retry import retry_after

# OpenAI's code, vLLM's prose, llama.cpp's "exceeds the available context size"
# (exceed_context_size_error) and Ollama's "longer than the context length".
_CONTEXT_LENGTH = ("context_length", "context length", "maximum context", "context window",
                   "context size", "exceed_context")  # fmt: skip


def is_context_length(exc: openai.APIStatusError) -> bool:
    """Tell a too-long prompt from other bad requests (OpenAI's code, vLLM/llama.cpp prose)."""
    text = f"{getattr(exc, 'code', '') or ''} {exc.message}".lower()
    return any(marker in text for marker in _CONTEXT_LENGTH)


def translated(exc: Exception, model: str, base: str) -> Exception | None:
    """Our error for what a call to ``model`` at ``base`` raised; None when it is not openai's."""
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return ConfigError(
            f"the model endpoint {base} rejected the API key ({exc.status_code}): "
            "check OPENAI_API_KEY"
        )
    if isinstance(exc, openai.NotFoundError):
        return ConfigError(
            f"model {model!r} is not served at {base}: pick one it has "
            "(--summary-model / --report-model)"
        )
    if isinstance(exc, (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError)):
        return ModelOutputError(f"{model} stopped early: {exc}")
    if isinstance(exc, (ValidationError, json.JSONDecodeError)):
        # json_schema parsing happens inside the openai client, before include_raw can help.
        return ModelOutputError(f"{model} returned malformed structured output: {exc}")
    if isinstance(exc, openai.APIStatusError):
        code = exc.status_code
        if code == 400 and is_context_length(exc):
            return ContextLengthError(
                f"{model}: the prompt is longer than its context window ({exc.message})",
                status=code,
            )
        return ModelCallError(
            f"{model} at {base} answered HTTP {code}: {exc.message}",
            transient=code in (408, 409, 429) or code >= 500,
            status=code,
            retry_after=retry_after(exc.response),
        )
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError)):
        return ModelCallError(
            f"{model} at {base} unreachable: {exc} (is the server running?)", transient=True
        )
    return None
