"""The context a local server gives the summary model: asked of the server, else its default.

A local server loads a model with the context it was started with (Ollama: 4,096 tokens under
24 GiB of VRAM, 32k on 24, 256k on 48, or ``OLLAMA_CONTEXT_LENGTH``; llama.cpp: ``-c``, or the
model's own since 2025), and Ollama cuts a longer prompt without a word. Two servers say it, for
free, in the network pre-flight:

- Ollama's ``GET /api/ps`` lists the models it holds in memory, each with the context it was
  loaded with (``context_length``). A model it does not hold yet is not listed: the default is
  taken, and the notice says how to say more. The run's other models on that server take the
  window too, so the smallest of those it holds is the one said.
- llama.cpp's ``GET /props`` gives each slot's context (``default_generation_settings.n_ctx``:
  ``-c`` shared by ``--parallel``), fixed when the server started.

What a server said is the run's ``summary_context_window`` (saved with it, so a resume fits its
prompts the same way; a flag overrides it then); a value the user gave is never asked about.
LM Studio says nothing here. Asking never stops a run: no answer, or nonsense, said nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from deskresearch.config.context import Context
from deskresearch.config.providers import LOCAL_SERVER_WINDOW, endpoint_for, local_window
from deskresearch.safety.masking import mask_secrets
from deskresearch.services.preflight import models_on
from deskresearch.services.probe import get_json

FEWEST, MOST = 256, 10_000_000  # a context a server gives, within what the setting takes
ASK_S = 1.0  # to connect, and to answer: a local server answers in milliseconds


@dataclass(frozen=True)
class Window:
    """What the pre-flight found of the summary model's window on its local server."""

    tokens: int = 0  # the context the server said it gives (0: it said nothing)
    said_by: str = ""  # where: "its /api/ps", "its /props"
    notices: tuple[str, ...] = ()


async def asked_context(ctx: Context, environ: Mapping[str, str]) -> Window:
    """Ask the summary model's local server its context (only when the user gave none).

    Never raises: a server that cannot be asked, or answers nonsense, said nothing.
    """
    spec = ctx.summary_spec()
    base, key = endpoint_for(spec.base_url, environ)
    if ctx.summary_context_window or not base or local_window(base) is None:
        return Window()
    try:
        tokens, said_by = await asked_window(base, list(models_on(ctx, base, environ)), key)
    except Exception:  # noqa: BLE001 - asking is a courtesy: the default stands
        tokens, said_by = 0, ""
    shown = mask_secrets(base)
    if tokens:
        notice = (f"{shown} holds {spec.model} with a {tokens:,}-token context ({said_by}): pages "
                  "are read and the report's prompts fitted to that; --summary-context-window "
                  "says otherwise")  # fmt: skip
        return Window(tokens, said_by, (notice,))
    return Window(notices=(default_notice(shown),))


def default_notice(shown: str) -> str:
    """The notice of a local server taken at the default window (it said nothing)."""
    return (
        f"{shown} is a local server: its models are taken to have the "
        f"{LOCAL_SERVER_WINDOW:,}-token context Ollama, llama.cpp and LM Studio give unless started "
        "with more, so pages are read in small pieces and the report's prompts keep the facts "
        "that fit. Started with more (OLLAMA_CONTEXT_LENGTH, llama.cpp's -c), pass "
        f"--summary-context-window with that number ({LOCAL_SERVER_WINDOW} to confirm the "
        "default); Ollama says it itself once it holds the model (`ollama ps`)"
    )


async def asked_window(base: str, models: list[str], key: str | None = None) -> tuple[int, str]:
    """The context the server at ``base`` says it gives ``models``, and where it said it.

    Ollama's is per model: the smallest it holds them with, and nothing unless it holds the
    first (the summary model; one it holds at a larger context than another is loaded with
    would be cut). llama.cpp's serves every name alike. ``(0, "")`` when it says nothing: not
    an Ollama or llama.cpp server, the model not held, no answer within ``ASK_S``. ``key`` is
    sent as the model calls send it (llama.cpp's ``--api-key`` guards ``/props`` too).
    """
    root = base.rstrip("/").removesuffix("/v1")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    ps, props = await asyncio.gather(_body(root + "/api/ps", headers),
                                     _body(root + "/props", headers))  # fmt: skip
    held = [ollama_context(ps, m) for m in models]
    if held and held[0]:
        return min(t for t in held if t), "its /api/ps"
    if tokens := llamacpp_context(props):
        return tokens, "its /props"
    return 0, ""


async def _body(url: str, headers: Mapping[str, str]) -> Any:
    try:
        status, body = await get_json(url, headers, timeout=ASK_S)
    except Exception:  # noqa: BLE001 - no answer, or none we can read: it said nothing
        return None
    return body if status == 200 else None


def ollama_context(body: Any, model: str) -> int:
    """The context ``/api/ps`` says ``model`` is held with (0: not held, or no such answer)."""
    models = body.get("models") if isinstance(body, dict) else None
    names = {model, f"{model}:latest", model.removesuffix(":latest")}
    for held in models if isinstance(models, list) else []:
        if not isinstance(held, dict):
            continue
        if names & {v for v in (held.get("name"), held.get("model")) if isinstance(v, str)}:
            return _tokens(held.get("context_length"))
    return 0


def llamacpp_context(body: Any) -> int:
    """A slot's context as ``/props`` says it (0: no such answer)."""
    settings = body.get("default_generation_settings") if isinstance(body, dict) else None
    return _tokens(settings.get("n_ctx")) if isinstance(settings, dict) else 0


def _tokens(value: Any) -> int:
    ok = isinstance(value, int) and not isinstance(value, bool) and FEWEST <= value <= MOST
    return value if ok else 0
