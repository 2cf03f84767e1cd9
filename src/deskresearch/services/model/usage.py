"""A call's token usage: what the server reports, else our own count of what was sent and read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

from deskresearch.records import Stage, Usage


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


def prompt_text(messages: Sequence[BaseMessage]) -> str:
    """A prompt's text as it is counted: the messages' contents, one after another."""
    return "\n".join(str(m.content) for m in messages)


def counted(messages: Sequence[BaseMessage], answer: str, usage: Usage) -> Usage:
    """``usage`` with our tokenizer's count of the prompt and the answer, for a server's silence.

    A call streamed through LangGraph's ``messages`` mode gets no usage from a server not asked
    for it (or not able): counted here, budgets and the per-stage figures still hold. The call
    is marked (``counted_calls``): another model's tokenizer counts a few percent otherwise.
    """
    from deskresearch.services.model.tokens import count_tokens  # loads the tokenizer

    prompt = prompt_text(messages)
    return usage | {"input_tokens": count_tokens(prompt), "output_tokens": count_tokens(answer),
                    "counted_calls": usage["calls"]}  # fmt: skip
