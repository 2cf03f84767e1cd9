"""The ``provider:model`` form: ``ollama:llama3.1`` means that model on that server's usual port.

Every provider here speaks the OpenAI API, so one client serves them all; the prefix only picks
the base URL (an explicit ``base_url`` still wins). A prefix that is not a known provider is
part of the model name (Ollama tags such as ``llama3.1:8b`` contain colons).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from urllib.parse import urlsplit

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"  # the openai client's own default

PROVIDERS: dict[str, str] = {
    "openai": "",  # OPENAI_BASE_URL, else api.openai.com; needs OPENAI_API_KEY
    "ollama": "http://localhost:11434/v1",
    "vllm": "http://localhost:8000/v1",
    "llamacpp": "http://localhost:8080/v1",
    "lmstudio": "http://localhost:1234/v1",
}


def split_model(name: str) -> tuple[str, str]:
    """Return ``(model, base_url)`` for ``name``; base_url is "" without a known provider prefix."""
    prefix, sep, rest = name.partition(":")
    if sep and rest and prefix.lower() in PROVIDERS:
        return rest, PROVIDERS[prefix.lower()]
    return name, ""


def endpoint_for(
    base_url: str, environ: Mapping[str, str], api_key: str | None = None
) -> tuple[str | None, str | None]:
    """Return ``(base URL, API key)`` a call goes out with; None where neither gives one.

    The setting (or its provider's URL) wins over ``OPENAI_BASE_URL``, then ``OPENAI_API_BASE``
    (langchain-openai's older name); a given key over ``OPENAI_API_KEY``. None as the base URL
    means the OpenAI default (``OPENAI_DEFAULT_URL``), or a LangSmith gateway ChatOpenAI picks.
    """
    base = base_url or environ.get("OPENAI_BASE_URL") or environ.get("OPENAI_API_BASE") or None
    key = api_key or environ.get("OPENAI_API_KEY") or None
    return base, key


# What a local server gives a model when nobody says more: Ollama (under 24 GiB of VRAM; 2,048
# before 0.6), llama.cpp's server and LM Studio load a model with a 4,096-token context whatever
# the model could take, and Ollama cuts a longer prompt without a word (its instructions first).
LOCAL_SERVER_WINDOW = 4096
_LOCAL_SERVERS = ("ollama", "llamacpp", "lmstudio")
OLLAMA_PORT = 11434


# Their usual ports (llama.cpp 8080, LM Studio 1234) name them on this machine only: elsewhere
# they are as likely a hosted API's proxy. Ollama's own port names it on any host.
_LOCAL_PORTS = frozenset(urlsplit(PROVIDERS[name]).port for name in _LOCAL_SERVERS)


def is_loopback(host: str) -> bool:
    """``localhost``, or an address of this machine's loopback (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def local_window(base_url: str | None) -> int | None:
    """The context a local server gives its models by default, when ``base_url`` is one; else None.

    Known by Ollama's port on any host, or by llama.cpp's or LM Studio's usual port on this
    machine (the prefixes' own URLs, and ``http://127.0.0.1:8080/v1`` as ``localhost``).
    """
    if not base_url:
        return None
    try:
        parts = urlsplit(base_url)
        port = parts.port
    except ValueError:
        return None
    here = port in _LOCAL_PORTS and is_loopback(parts.hostname or "")
    return LOCAL_SERVER_WINDOW if port == OLLAMA_PORT or here else None


HOSTED_CALLS = 16  # a round's page summaries go out together instead of queuing for places
# Ollama serves one call at a time unless OLLAMA_NUM_PARALLEL says more (llama.cpp and LM Studio
# one or a few) and queues the rest, and a call's timeout runs while it waits in that queue: two
# in flight keep the next one ready without leaving the later ones to time out there.
LOCAL_CALLS = 2


def model_calls(setting: int, base_url: str | None) -> int:
    """Model calls in flight to ``base_url``: the setting, else what its kind of server takes."""
    if setting:
        return setting
    return LOCAL_CALLS if local_window(base_url) else HOSTED_CALLS


HOSTED_TIMEOUT_S = 120.0
# A local server on a CPU alone reads a page piece's prompt at tens of tokens a second and writes
# a few: one summary call takes one to three minutes, and the call queued behind it as long again.
LOCAL_TIMEOUT_S = 600.0


def model_timeout(setting: float, base_url: str | None) -> float:
    """Seconds a call to ``base_url`` may take: the setting, else what its kind of server needs."""
    if setting:
        return setting
    return LOCAL_TIMEOUT_S if local_window(base_url) else HOSTED_TIMEOUT_S
