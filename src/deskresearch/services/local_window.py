"""The context a local server gives the summary model: asked of the server, else its default.

A local server loads a model with the context it was started with (Ollama: 4,096 tokens under
24 GiB of VRAM, 32k on 24, 256k on 48, or ``OLLAMA_CONTEXT_LENGTH``; llama.cpp: ``-c``, or the
model's own since 2025; LM Studio: what its load settings say), and Ollama cuts a longer prompt
without a word. Three servers say it, for free, in the network pre-flight:

- Ollama's ``GET /api/ps`` lists the models it holds in memory, each with the context it was
  loaded with (``context_length``). A model it does not hold yet is asked of
  ``POST /api/show``: the ``num_ctx`` its Modelfile sets (``PARAMETER num_ctx 32768``, the
  usual way to give a model more room when its callers speak the OpenAI API), no more than
  it was trained on, is what it will be loaded with. A model that sets none gets the server's
  default, which no request tells: it is not counted.
- LM Studio's ``GET /api/v1/models`` (its REST API since 0.4) lists each model with the
  instances it has loaded, each with its ``config.context_length``; the older
  ``GET /api/v0/models`` (0.3) a loaded model's ``loaded_context_length``.
- llama.cpp's ``GET /props`` gives each slot's context (``default_generation_settings.n_ctx``:
  ``-c`` shared by ``--parallel``), fixed when the server started; in router mode (several
  models, one server) the bare ``/props`` says 0 and each model's is ``/props?model=NAME``
  (with ``autoload=false``: asking must not load a model, nor evict the one loaded).

These requests go at once (then, on Ollama, one ``/api/show`` per model it does not hold),
each given ``ASK_S`` to connect and as long to answer. The run's other models on the server
take the window too, so on Ollama and LM Studio the smallest context among the run's models it
tells is the one said, and nothing unless it tells the summary model's.

What a server said is the run's ``summary_context_window`` (saved with it, so a resume fits its
prompts the same way; a flag overrides it then); a value the user gave is never asked about.
Asking never stops a run: no answer, or nonsense, said nothing.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

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
    said_by: str = ""  # where: "its /api/ps", "its /props", ...
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
        notice = (f"{shown} gives {spec.model} a {tokens:,}-token context ({said_by}): pages "
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
        "default); Ollama and LM Studio say it themselves once they hold the model "
        "(`ollama ps`, `lms ps`), and Ollama before that when its Modelfile sets num_ctx"
    )


async def asked_window(base: str, models: list[str], key: str | None = None) -> tuple[int, str]:
    """The context the server at ``base`` says it gives ``models``, and where it said it.

    Ollama's and LM Studio's are per model: the smallest among those it tells, and nothing
    unless it tells the first's (the summary model; one given a larger context than another
    is loaded with would be cut). A model it cannot tell (not loaded, no ``num_ctx`` set) is
    not counted. llama.cpp's serves every name alike, unless in router mode (per model).
    ``(0, "")`` when it says nothing: none of those servers, the model not held, no answer
    within ``ASK_S``. ``key`` is sent as the model calls send it (llama.cpp's ``--api-key``
    guards ``/props`` too, LM Studio's API tokens its REST API).
    """
    root = base.rstrip("/").removesuffix("/v1")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    paths = ["/api/ps", "/api/v1/models", "/api/v0/models", "/props",
             *(f"/props?{urlencode({'model': m, 'autoload': 'false'})}" for m in models)]  # fmt: skip
    ps, listed, older, props, *per_model = await asyncio.gather(
        *(_body(root + path, headers) for path in paths)
    )
    lms = [(t, "its /api/v1/models") if (t := lmstudio_context(listed, m))
           else (lmstudio_v0_context(older, m), "its /api/v0/models") for m in models]  # fmt: skip
    if is_ollama(ps):
        told = await _ollama_sizes(root, headers, ps, models)
    elif any(t for t, _ in lms):  # LM Studio
        told = lms
    else:  # llama.cpp: one model's slots, or (router mode) each model's behind ?model=
        told = [
            (llamacpp_context(own) or llamacpp_context(props), "its /props") for own in per_model
        ]
    if told and told[0][0]:
        return min((t for t in told if t[0]), key=lambda t: t[0])
    return 0, ""


async def _ollama_sizes(
    root: str, headers: Mapping[str, str], ps: Any, models: list[str]
) -> list[tuple[int, str]]:
    """Each model's context on Ollama: as held (``/api/ps``), else as its Modelfile sets it."""
    held = [(ollama_context(ps, m), "its /api/ps") for m in models]
    todo = [m for m, (t, _) in zip(models, held, strict=True) if not t]
    shown = await asyncio.gather(
        *(_body(root + "/api/show", headers, post={"model": m}) for m in todo)
    )
    told = iter((modelfile_context(b), "its Modelfile's num_ctx, /api/show") for b in shown)
    return [h if h[0] else next(told) for h in held]


async def _body(url: str, headers: Mapping[str, str], post: Mapping[str, str] | None = None) -> Any:
    try:
        status, body = await get_json(url, headers, timeout=ASK_S, post=post)
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


def is_ollama(body: Any) -> bool:
    """``/api/ps`` answered as Ollama does (a list of the models it holds, maybe none)."""
    return isinstance(body, dict) and isinstance(body.get("models"), list)


_NUM_CTX = re.compile(r"^num_ctx[ \t]+([0-9]{1,9})[ \t]*$", re.MULTILINE)


def modelfile_context(body: Any) -> int:
    """The context Ollama's ``/api/show`` says the model will be loaded with (0: it cannot tell).

    That is the ``num_ctx`` its Modelfile sets, but no more than the model was trained on
    (``model_info``'s ``<architecture>.context_length``): Ollama loads it with the smaller.
    """
    if not isinstance(body, dict):
        return 0
    parameters, info = body.get("parameters"), body.get("model_info")
    found = _NUM_CTX.search(parameters) if isinstance(parameters, str) else None
    tokens = _tokens(int(found.group(1))) if found else 0
    info = info if isinstance(info, dict) else {}
    arch = info.get("general.architecture")
    trained = _tokens(info.get(f"{arch}.context_length")) if isinstance(arch, str) else 0
    return min(tokens, trained) if tokens and trained else tokens


def lmstudio_context(body: Any, model: str) -> int:
    """The context LM Studio's ``/api/v1/models`` says ``model`` is loaded with (0: not loaded).

    ``model`` names a model (its ``key``: any of its loaded instances may answer, so the
    smallest of theirs) or one loaded instance (its ``id``).
    """
    models = body.get("models") if isinstance(body, dict) else None
    for listed in models if isinstance(models, list) else []:
        if not isinstance(listed, dict):
            continue
        loaded = listed.get("loaded_instances")
        instances = [i for i in loaded if isinstance(i, dict)] if isinstance(loaded, list) else []
        named = (
            instances
            if listed.get("key") == model
            else [i for i in instances if i.get("id") == model]
        )
        sizes = [_tokens(c.get("context_length")) for i in named
                 if isinstance(c := i.get("config"), dict)]  # fmt: skip
        if sizes:
            return 0 if 0 in sizes else min(sizes)
    return 0


def lmstudio_v0_context(body: Any, model: str) -> int:
    """The context LM Studio's older ``/api/v0/models`` says ``model`` is loaded with (0: not)."""
    data = body.get("data") if isinstance(body, dict) else None
    for listed in data if isinstance(data, list) else []:
        if isinstance(listed, dict) and listed.get("id") == model:
            return _tokens(listed.get("loaded_context_length"))
    return 0


def llamacpp_context(body: Any) -> int:
    """A slot's context as ``/props`` says it (0: no such answer)."""
    settings = body.get("default_generation_settings") if isinstance(body, dict) else None
    return _tokens(settings.get("n_ctx")) if isinstance(settings, dict) else 0


def _tokens(value: Any) -> int:
    ok = isinstance(value, int) and not isinstance(value, bool) and FEWEST <= value <= MOST
    return value if ok else 0
