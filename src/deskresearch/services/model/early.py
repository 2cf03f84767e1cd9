"""The head start's request and reply as plain data, shared by the CLI and HeadStartChat.

Light on purpose (no client library): the CLI imports it before the research path.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from deskresearch.records import ModelSpec

STAGE = "generate_keywords"
Prompt = list[tuple[str, Any]]  # (message type, content), as the cache keys them


@dataclass(frozen=True)
class EarlyReply:
    """What the early request got back: the answer's text and what it cost."""

    content: str
    input_tokens: int
    output_tokens: int


@dataclass
class HeadStart:
    """One request sent ahead of the graph; its reply is handed over once, to the same question."""

    prompt: Prompt
    schema: dict[str, Any]  # the answer's JSON schema (Keywords)
    spec: ModelSpec
    endpoint: str
    reply: Future[EarlyReply | None]
    taken: bool = False

    def claim(self, prompt: Prompt, schema: Any, spec: ModelSpec, endpoint: str) -> bool:
        """True once, for the question this head start asked: same prompt, schema, model, endpoint."""
        same = (prompt, schema, spec.model, spec.method, endpoint) == (
            self.prompt, self.schema, self.spec.model, self.spec.method, self.endpoint,
        )  # fmt: skip
        if not same or self.taken:
            return False
        self.taken = True
        return True
