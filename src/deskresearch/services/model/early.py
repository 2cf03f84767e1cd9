"""Requests sent before the model client is imported: the head start's, and the early calls.

Light on purpose (no client library): the CLI imports it before the research path. Importing
langchain-openai and openai costs about a second of CPU; the CLI does it on a thread while its
first steps wait on the network (``client_import``). The head start (``cli.headstart``) sends
generate_keywords' request before the graph exists; an ``OpenAIChat(early=True)`` sends the
structured calls that come before the import is done (plan_queries, on a 2-core machine) the
same way: the request ChatOpenAI would send for a ``json_schema`` answer (``request_body``; a
test compares the two), with plain httpx. Either only ever saves time: whatever it cannot do is
asked the usual way.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deskresearch._version import __version__
from deskresearch.config.providers import OPENAI_DEFAULT_URL
from deskresearch.records import ModelSpec

if TYPE_CHECKING:
    import httpx
    from langchain_core.messages import BaseMessage

# Models ChatOpenAI asks differently (o-series: a developer role; codex, gpt-5*-pro: the
# Responses API), as langchain-openai 1.x decides; early requests leave them to it.
OTHER_REQUEST = re.compile(r"^o\d|codex|^gpt-\d[\d.]*-pro")
# ChatOpenAI sends these when its variables are set; so do early requests.
OPENAI_HEADERS = {"OpenAI-Organization": "OPENAI_ORG_ID", "OpenAI-Project": "OPENAI_PROJECT_ID"}


def request_body(model: str, system: str, user: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The chat request ChatOpenAI sends for a ``json_schema`` structured answer."""
    shape = dict(schema)
    name = shape.pop("title")
    description = shape.pop("description", None)
    return {
        "model": model,
        "stream": False,
        "messages": [{"content": system, "role": "system"}, {"content": user, "role": "user"}],
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": name,
                "description": description,
                "strict": False,
                "schema": shape,
            },
        },
    }


def headers_for(key: str | None, environ: Mapping[str, str], agent: str) -> dict[str, str]:
    """The headers an early request carries (as the openai client's, with our User-Agent)."""
    headers = {
        "Authorization": f"Bearer {key or 'not-needed'}",  # as OpenAIChat: local servers want one
        "User-Agent": agent,
        **{h: environ[v] for h, v in OPENAI_HEADERS.items() if environ.get(v)},
    }
    if "OpenAI-Organization" not in headers and environ.get("OPENAI_ORGANIZATION"):
        headers["OpenAI-Organization"] = environ["OPENAI_ORGANIZATION"]  # its older name
    return headers


def asked_differently(model: str, environ: Mapping[str, str]) -> bool:
    """Whether ChatOpenAI would send this model another request than ``request_body``'s."""
    return bool(OTHER_REQUEST.search(model) or environ.get("LC_OUTPUT_VERSION")
                or environ.get("LANGSMITH_GATEWAY"))  # fmt: skip


def client_imported() -> bool:
    """Whether the model client (ChatOpenAI) is imported and ready in this process."""
    return hasattr(sys.modules.get("langchain_openai"), "ChatOpenAI")


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


class EarlyCalls:
    """Structured calls sent as ChatOpenAI sends them, with plain httpx (see the module's doc).

    Args:
        environ: where the OpenAI headers' variables and ``OPENAI_PROXY`` are read.
        http: the client to send with, or what gives it for a spec (the chat service's, which
            ChatOpenAI uses too); default: its own (``model.http``).
    """

    def __init__(
        self,
        environ: Mapping[str, str],
        http: httpx.AsyncClient | Callable[[ModelSpec], httpx.AsyncClient] | None = None,
    ) -> None:
        self._env = environ
        self._http = http

    def _client(self, spec: ModelSpec) -> httpx.AsyncClient:
        if self._http is None:
            from deskresearch.services.model.http import async_client

            self._http = async_client(self._env, spec.timeout_s)
        return self._http(spec) if callable(self._http) else self._http

    async def ask(
        self,
        messages: Sequence[BaseMessage],
        schema: dict[str, Any],
        spec: ModelSpec,
        base: str | None,
        key: str | None,
    ) -> EarlyReply | None:
        """One ``json_schema`` request, or None.

        None when it cannot be sent as ChatOpenAI would send it, or was refused: the caller
        then asks the usual way, with its own errors. A timeout, a lost connection, a 429 or a
        5xx raise a transient ``ModelCallError``, as the usual call would: the retry layer
        waits before asking again (at once, the request would only be paid twice).
        """
        texts = [(m.type, m.content) for m in messages]
        plain = all(isinstance(content, str) for _, content in texts)
        if [kind for kind, _ in texts] != ["system", "human"] or not plain:
            return None
        if asked_differently(spec.model, self._env):
            return None
        body = request_body(spec.model, str(texts[0][1]), str(texts[1][1]), schema)
        headers = headers_for(key, self._env, f"deskresearch/{__version__} (early)")
        url = (base or OPENAI_DEFAULT_URL).rstrip("/") + "/chat/completions"
        import httpx

        from deskresearch.services.model.http import call_timeout

        try:
            response = await self._client(spec).post(
                url, json=body, headers=headers, timeout=call_timeout(spec.timeout_s)
            )
        except httpx.UnsupportedProtocol:
            return None  # a URL without http(s)://: the usual call names the setting
        except httpx.TransportError as exc:
            raise unreachable(spec.model, url, exc) from exc
        except Exception:  # noqa: BLE001 - a bad proxy or port setting: the usual call says it
            return None
        if (error := busy(spec.model, url, response)) is not None:
            raise error
        return reply_of(response)


def unreachable(model: str, url: str, exc: Exception) -> Exception:
    """A timeout or a lost connection after an early request left: transient for the retry layer.

    Sent, maybe answered and paid: asking again at once would double it. The retry layer waits
    and asks again, as for the usual call's timeout.
    """
    from deskresearch.errors import ModelCallError

    return ModelCallError(f"{model} at {url} unreachable: {exc!r} (is the server running?)",
                          transient=True)  # fmt: skip


def busy(model: str, url: str, response: httpx.Response) -> Exception | None:
    """A 408/409/429/5xx answer as a transient error (the retry layer's backoff, not now)."""
    code = response.status_code
    if code not in (408, 409, 429) and code < 500:
        return None
    from deskresearch.errors import ModelCallError
    from deskresearch.services.model.retry import retry_after  # not at import: it is heavier

    return ModelCallError(f"{model} at {url} answered HTTP {code}", transient=True, status=code,
                          retry_after=retry_after(response))  # fmt: skip


def reply_of(response: httpx.Response) -> EarlyReply | None:
    """The answer of a 200, else None.

    None for a refused method, a wrong key or model, or a malformed body: the usual call then
    says which.
    """
    if response.status_code != 200:
        return None
    try:
        data = response.json()
        counted = data.get("usage") or {}
        return EarlyReply(
            content=str(data["choices"][0]["message"].get("content") or ""),
            input_tokens=int(counted.get("prompt_tokens") or 0),
            output_tokens=int(counted.get("completion_tokens") or 0),
        )
    except Exception:  # noqa: BLE001 - the usual call reports whatever went wrong
        return None
