"""Structured output from any model: the method chain and tolerant parsing of free text.

Servers differ in what they support: OpenAI and recent vLLM/llama.cpp/Ollama take a JSON schema,
some only take tools, some only ``json_object``, and small local models often answer in prose
around a JSON object, sometimes after a ``<think>`` block. ``auto`` tries the methods in
``CHAIN`` order and remembers per endpoint which ones the server rejected.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from deskresearch.errors import ModelOutputError
from deskresearch.services.base import M

Method = Literal["json_schema", "function_calling", "json_mode", "text"]
CHAIN: tuple[Method, ...] = ("json_schema", "function_calling", "json_mode", "text")

_THINK = re.compile(r"<think>.*?(</think>|\Z)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_MAX_CANDIDATES = 50  # '{' positions tried; a prose answer rarely has more before its JSON


def strip_reasoning(text: str) -> str:
    """Remove ``<think>…</think>`` blocks (and an unclosed one) that reasoning models emit."""
    return _THINK.sub("", text).strip()


def methods_for(configured: str) -> tuple[Method, ...]:
    """Return the methods to try: the whole chain for ``auto``, else just the configured one."""
    if configured == "auto":
        return CHAIN
    return tuple(m for m in CHAIN if m == configured)


def parse_tolerant(text: str, schema: type[M]) -> M:
    """Find a JSON object in a model's free text that validates as ``schema``.

    Tries fenced ```json blocks first, then every ``{`` in order (``json.raw_decode`` reads one
    object and ignores what follows), after removing reasoning blocks.

    Raises:
        ModelOutputError: no object in the text fits the schema (a refusal, prose, truncation).
    """
    cleaned = strip_reasoning(text)
    sources = [m.group(1) for m in _FENCE.finditer(cleaned)] + [cleaned]
    decoder = json.JSONDecoder()
    problem = "no JSON object in the answer"
    for source in sources:
        starts = [i for i, ch in enumerate(source) if ch == "{"][:_MAX_CANDIDATES]
        for start in starts:
            try:
                obj, _ = decoder.raw_decode(source, start)
            except json.JSONDecodeError:
                continue
            if not isinstance(obj, dict):
                continue
            try:
                return schema.model_validate(obj)
            except ValidationError as exc:
                problem = (
                    f"JSON object does not fit {schema.__name__}: {exc.error_count()} error(s)"
                )
    preview = " ".join(cleaned.split())[:120]
    raise ModelOutputError(f"{problem} ({preview!r})")


def json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """``schema``'s JSON schema, a fresh copy per call (a caller may change it).

    Generated once per class: pydantic takes milliseconds of CPU for it, on every model call.
    """
    return json.loads(_schema_text(schema))  # type: ignore[no-any-return]


@cache
def _schema_text(schema: type[BaseModel]) -> str:
    return json.dumps(schema.model_json_schema())
