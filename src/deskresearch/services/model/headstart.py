"""HeadStartChat: hands the CLI's head-start answer to the node that asks its question.

The innermost layer, right around the model client: the cache, limits, retries and the run's
meter see the answer as if the client had given it (it is stored in the cache, its tokens are
counted). See ``deskresearch.cli.headstart`` for why there is a head start at all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar, cast

from deskresearch.errors import ModelOutputError
from deskresearch.records import Usage
from deskresearch.services.base import ChatCall, ChatLayer, ChatService, Reply
from deskresearch.services.model.early import STAGE, HeadStart
from deskresearch.services.model.structured import parse_tolerant
from deskresearch.state import merge_usage

T = TypeVar("T")


class HeadStartChat(ChatLayer):
    """A ChatService whose first keywords question may already have its answer."""

    def __init__(self, inner: ChatService, head: HeadStart) -> None:
        super().__init__(inner)
        self.head = head

    async def around(self, call: Callable[[], Awaitable[Reply[T]]], request: ChatCall) -> Reply[T]:
        """The head start's answer when this is its question and it parses; else the call."""
        spec, schema = request.spec, request.schema
        if request.stage != STAGE or schema is None:
            return await call()
        prompt = [(m.type, m.content) for m in request.messages]
        shape = schema.model_json_schema()
        if not self.head.claim(prompt, shape, spec, self.endpoint(spec)):
            return await call()
        early = await asyncio.wrap_future(self.head.reply)
        if early is None:  # no answer (an error, a refusal): ask as usual
            return await call()
        usage = Usage(stage=request.stage, model=spec.model, input_tokens=early.input_tokens,
                      output_tokens=early.output_tokens, calls=1)  # fmt: skip
        try:
            return Reply(cast(T, parse_tolerant(early.content, schema)), usage)
        except ModelOutputError:
            pass  # malformed: asked again as usual, the early tokens still counted
        try:
            reply = await call()
        except ModelOutputError as exc:  # malformed again: both answers' tokens go with it
            spent = [usage, *([exc.usage] if exc.usage else [])]
            raise ModelOutputError(str(exc), usage=merge_usage([], spent)[0]) from exc
        return Reply(reply.value, merge_usage([], [usage, reply.usage])[0], reply.truncated)
