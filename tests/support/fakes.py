"""In-process test doubles for the service Protocols (node unit tests)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from deskresearch.errors import ConfigError, FetchError, ModelOutputError
from deskresearch.records import (
    Extracted,
    FetchedPage,
    FetchLimits,
    ModelSpec,
    SearchHit,
    SearchSettings,
    Stage,
    Usage,
    Validators,
)
from deskresearch.services.base import M, Reply


def usage(stage: Stage, model: str = "m", tokens: int = 10) -> Usage:
    return Usage(stage=stage, model=model, input_tokens=tokens, output_tokens=1, calls=1)


class ScriptedChat:
    """Answers each stage from a queue: a pydantic value, a str, or an exception to raise."""

    def __init__(
        self, script: dict[str, list[Any]] | None = None, *, has_endpoint: bool = True
    ) -> None:
        self.script: dict[str, list[Any]] = defaultdict(list, script or {})
        self.calls: list[tuple[str, list[BaseMessage]]] = []
        self.has_endpoint = has_endpoint

    def check(self, spec: ModelSpec) -> None:
        if not self.has_endpoint:
            raise ConfigError("no model endpoint configured")

    def _next(self, stage: str, messages: Sequence[BaseMessage]) -> Any:
        self.calls.append((stage, list(messages)))
        if not self.script[stage]:
            raise AssertionError(f"ScriptedChat: no answer scripted for {stage}")
        answer = self.script[stage].pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    async def structured(
        self, messages: Sequence[BaseMessage], schema: type[M], *, spec: ModelSpec, stage: Stage
    ) -> Reply[M]:
        answer = self._next(stage, messages)
        if isinstance(answer, str):  # malformed output
            raise ModelOutputError(
                f"not a {schema.__name__}: {answer}", usage=usage(stage, spec.model)
            )
        assert isinstance(answer, BaseModel)
        return Reply(schema.model_validate(answer.model_dump()), usage(stage, spec.model))

    async def text(
        self, messages: Sequence[BaseMessage], *, spec: ModelSpec, stage: Stage
    ) -> Reply[str]:
        return Reply(str(self._next(stage, messages)), usage(stage, spec.model))


def hit(
    i: int, *, snippet: str = "", raw: str | None = None, ctype: str | None = None
) -> SearchHit:
    return SearchHit(
        url=f"https://example.org/{i}",
        title=f"Page {i}",
        snippet=snippet or f"Snippet of page {i} with enough words to stand in for it.",
        raw_content=raw,
        content_type=ctype,
    )


class FakeSearch:
    """Returns a fixed list of hits per query (or raises)."""

    def __init__(self, results: dict[str, list[SearchHit] | BaseException] | None = None) -> None:
        self.results = results or {}
        self.queries: list[str] = []

    def check(self, settings: SearchSettings) -> None:
        return None

    async def search(
        self, query: str, *, max_results: int, settings: SearchSettings
    ) -> list[SearchHit]:
        self.queries.append(query)
        result = self.results.get(query, [])
        if isinstance(result, BaseException):
            raise result
        return result[:max_results]


class FakeFetcher:
    """Serves bodies from a dict; a FetchError value is raised."""

    def __init__(self, pages: dict[str, bytes | FetchError]) -> None:
        self.pages = pages
        self.fetched: list[str] = []

    async def fetch(
        self, url: str, *, limits: FetchLimits, validators: Validators | None = None
    ) -> FetchedPage:
        self.fetched.append(url)
        page = self.pages.get(url, FetchError(url, "http_404"))
        if isinstance(page, FetchError):
            raise page
        return FetchedPage(url=url, content_type="text/html", body=page, truncated=False)


class PlainExtractor:
    """Treats the body as the main text; title from the first line."""

    warmed = 0

    def warm(self) -> None:
        self.warmed += 1

    async def extract(self, body: bytes | str, *, url: str, content_type: str) -> Extracted | None:
        text = body.decode() if isinstance(body, bytes) else body
        if not text.strip():
            return None
        return Extracted(
            text=text, title=text.splitlines()[0][:40], published="2024-01-01", site="example.org"
        )


def runtime(ctx: Any = None, events: list[Any] | None = None) -> Any:
    """A Runtime carrying ``ctx`` whose stream writer appends to ``events``."""
    from langgraph.runtime import Runtime

    from deskresearch.config.context import Context

    sink = events if events is not None else []
    return Runtime(context=ctx or Context(), stream_writer=sink.append)
