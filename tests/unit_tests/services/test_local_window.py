"""What a local server says of its context, asked in the pre-flight (services.local_window).

The loopback web answers Ollama's ``GET /api/ps``, LM Studio's ``GET /api/v1/models`` and
llama.cpp's ``GET /props`` in their documented shapes when told to, and 404 otherwise, as any
other server does.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from deskresearch.config.context import Context
from deskresearch.services import local_window
from deskresearch.services.local_window import (
    asked_context,
    asked_window,
    llamacpp_context,
    lmstudio_context,
    lmstudio_v0_context,
    modelfile_context,
    ollama_context,
)
from deskresearch.session.plan import Plan
from deskresearch.session.settings import Given, context_from
from tests.support.loopback import serve
from tests.support.server import free_port


def ps(**held: Any) -> dict[str, Any]:
    return {"models": [{"name": n, "model": n, "context_length": c} for n, c in held.items()]}


@pytest.mark.parametrize(
    ("body", "model", "tokens"),
    [
        (ps(**{"llama3.1:latest": 32768}), "llama3.1", 32768),  # the tag Ollama adds
        (ps(**{"llama3.1:latest": 32768}), "llama3.1:latest", 32768),
        (ps(**{"qwen2.5:7b": 8192, "llama3.1:latest": 4096}), "qwen2.5:7b", 8192),
        (ps(**{"qwen2.5:7b": 8192}), "llama3.1", 0),  # not held: it says nothing of it
        ({"models": []}, "llama3.1", 0),
        (ps(**{"llama3.1": "32768"}), "llama3.1", 0),  # not a number
        (ps(**{"llama3.1": True}), "llama3.1", 0),
        (ps(**{"llama3.1": 12}), "llama3.1", 0),  # not a context any server gives
        ({"error": "not found"}, "llama3.1", 0),
        (None, "llama3.1", 0),
    ],
)
def test_ollama_s_answer_gives_the_context_of_the_model_it_holds(
    body: Any, model: str, tokens: int
) -> None:
    assert ollama_context(body, model) == tokens


def lms(**loaded: list[Any]) -> dict[str, Any]:
    """LM Studio's /api/v1/models: each model key with the contexts of its loaded instances."""
    return {"models": [
        {"type": "llm", "key": k, "max_context_length": 131072,
         "loaded_instances": [{"id": k if n == 0 else f"{k}:{n + 1}", "config": {"context_length": c}}
                              for n, c in enumerate(contexts)]}
        for k, contexts in loaded.items()
    ]}  # fmt: skip


@pytest.mark.parametrize(
    ("body", "model", "tokens"),
    [
        (lms(**{"qwen/qwen3-8b": [16384]}), "qwen/qwen3-8b", 16384),
        (lms(**{"qwen/qwen3-8b": [16384, 8192]}), "qwen/qwen3-8b", 8192),  # any instance answers
        (lms(**{"qwen/qwen3-8b": [16384, 8192]}), "qwen/qwen3-8b:2", 8192),  # that instance
        (lms(**{"qwen/qwen3-8b": []}), "qwen/qwen3-8b", 0),  # downloaded, not loaded
        (lms(**{"qwen/qwen3-8b": [16384]}), "llama3.1", 0),
        (lms(**{"qwen/qwen3-8b": ["16384"]}), "qwen/qwen3-8b", 0),  # not a number
        (lms(**{"qwen/qwen3-8b": [16384, 12]}), "qwen/qwen3-8b", 0),  # one instance says nonsense
        ({"models": [{"key": "m", "loaded_instances": [{"id": "m", "config": None}]}]}, "m", 0),
        ({"models": [{"key": "m", "loaded_instances": {"id": "m"}}]}, "m", 0),
        ({"models": ["m", 4096]}, "m", 0),
        ({"data": []}, "m", 0),  # the OpenAI-compatible list: no contexts in it
        (None, "m", 0),
    ],
)
def test_lm_studio_s_answer_gives_the_context_of_the_model_it_has_loaded(
    body: Any, model: str, tokens: int
) -> None:
    assert lmstudio_context(body, model) == tokens


@pytest.mark.parametrize(
    ("parameters", "tokens"),
    [
        ('num_ctx                        32768\nstop "<|eot_id|>"', 32768),
        ('stop "<|eot_id|>"\nnum_ctx 8192', 8192),
        ('stop "<|eot_id|>"', 0),  # none set: the server's default, which it does not say
        ("num_ctx 12", 0),  # not a context any server gives
        ("num_ctx_extra 8192", 0),
        ("num_ctx 8192 tokens", 0),
        (8192, 0),
    ],
)
def test_ollama_s_model_card_gives_the_num_ctx_its_modelfile_sets(
    parameters: Any, tokens: int
) -> None:
    assert modelfile_context({"parameters": parameters}) == tokens


def test_a_modelfile_s_num_ctx_past_what_the_model_was_trained_on_is_cut_to_that() -> None:
    card = {"parameters": "num_ctx 131072", "model_info": {"general.architecture": "qwen3",
                                                           "qwen3.context_length": 40960}}  # fmt: skip
    assert modelfile_context(card) == 40960, "Ollama loads it with the smaller"
    card["model_info"] = {"general.architecture": "qwen3", "qwen3.context_length": 262144}
    assert modelfile_context(card) == 131072
    card["model_info"] = {"general.architecture": "qwen3", "llama.context_length": 2048}
    assert modelfile_context(card) == 131072, "another architecture's number says nothing"


def test_lm_studio_0_3_s_answer_gives_a_loaded_model_s_context() -> None:
    def v0(**loaded: Any) -> dict[str, Any]:
        return {"data": [{"id": m, "state": "loaded" if n else "not-loaded",
                          "max_context_length": 131072, **({"loaded_context_length": n} if n else {})}
                         for m, n in loaded.items()]}  # fmt: skip

    assert (
        lmstudio_v0_context(v0(**{"qwen/qwen3-8b": 16384, "gemma": 8192}), "qwen/qwen3-8b") == 16384
    )
    assert lmstudio_v0_context(v0(**{"qwen/qwen3-8b": 0}), "qwen/qwen3-8b") == 0, "not loaded"
    assert lmstudio_v0_context(v0(gemma=8192), "qwen/qwen3-8b") == 0
    assert lmstudio_v0_context({"data": ["x"]}, "x") == 0
    assert lmstudio_v0_context(None, "x") == 0


def test_a_model_ollama_does_not_hold_yet_is_asked_what_its_modelfile_sets() -> None:
    with serve() as web:
        base = web.base + "/v1"
        web.held_models = {}  # Ollama, holding nothing yet
        web.modelfiles = {"llama3.1-32k:latest": 32768, "qwen2.5:7b": 0, "phi4-16k": 16384}
        where = "its Modelfile's num_ctx, /api/show"
        assert asyncio.run(asked_window(base, ["llama3.1-32k"])) == (32768, where)
        assert asyncio.run(asked_window(base, ["qwen2.5:7b"])) == (0, ""), "it sets none"
        assert asyncio.run(asked_window(base, ["mistral"])) == (0, ""), "no such model"
        # The run's other models on that server: the smallest context told, named by its source.
        assert asyncio.run(asked_window(base, ["llama3.1-32k", "phi4-16k"])) == (16384, where)
        assert asyncio.run(asked_window(base, ["llama3.1-32k", "qwen2.5:7b"])) == (32768, where)
        web.held_models = {"qwen2.5:7b": 8192}  # the report model held: its context counts too
        said = asyncio.run(asked_window(base, ["llama3.1-32k", "qwen2.5:7b"]))
        assert said == (8192, "its /api/ps")
        web.held_models = {"llama3.1-32k": 32768}  # the summary model held, another not yet
        said = asyncio.run(asked_window(base, ["llama3.1-32k", "phi4-16k"]))
        assert said == (16384, where), "a model not held yet is asked about too"
        web.trained_context = 8192  # a Modelfile asking more than the model was trained on
        assert asyncio.run(asked_window(base, ["phi4-16k"])) == (8192, where)
        web.local_keys.clear()
        asyncio.run(asked_window(base, ["llama3.1-32k", "qwen2.5:7b"], "sk-o"))
        assert web.local_keys.count("Bearer sk-o") == 7, "ps, v1/v0 models, 3 props, a show"


def test_llamacpp_s_answer_gives_a_slot_s_context() -> None:
    assert llamacpp_context({"default_generation_settings": {"n_ctx": 8192}}) == 8192
    assert llamacpp_context({"default_generation_settings": {}}) == 0
    assert llamacpp_context({"n_ctx": 8192}) == 0
    assert llamacpp_context([]) == 0


def test_the_server_is_asked_where_it_answers_and_says_which() -> None:
    with serve() as web:
        base = web.base + "/v1"
        assert asyncio.run(asked_window(base, ["llama3.1"])) == (0, ""), "neither kind of server"
        web.held_models = {"llama3.1:latest": 32768, "qwen2.5:7b": 8192}
        assert asyncio.run(asked_window(base, ["llama3.1"])) == (32768, "its /api/ps")
        assert asyncio.run(asked_window(base, ["mistral"])) == (0, ""), "a model it does not hold"
        # The run's other model on that server takes the window too: the smaller one is said.
        assert asyncio.run(asked_window(base, ["llama3.1", "qwen2.5:7b"])) == (8192, "its /api/ps")
        assert asyncio.run(asked_window(base, ["llama3.1", "mistral"])) == (32768, "its /api/ps")
        assert asyncio.run(asked_window(base, ["mistral", "llama3.1"])) == (0, ""), (
            "the summary model not held: nothing said"
        )
        web.held_models, web.loaded_models = None, {"qwen/qwen3-8b": 16384, "gemma": 8192}
        said = (16384, "its /api/v1/models")
        assert asyncio.run(asked_window(base, ["qwen/qwen3-8b", "llama3.1"])) == said
        assert asyncio.run(asked_window(base, ["qwen/qwen3-8b", "gemma"]))[0] == 8192
        assert asyncio.run(asked_window(base, ["llama3.1", "qwen/qwen3-8b"])) == (0, "")
        web.loaded_models, web.slot_context = None, 8192
        web.local_keys.clear()
        assert asyncio.run(asked_window(base, ["anything"], "sk-local")) == (8192, "its /props")
        assert web.local_keys == ["Bearer sk-local"] * 5, (
            "the key, as llama.cpp's --api-key and LM Studio's API tokens ask"
        )
        web.slot_context, web.router_contexts = None, {"qwen3-8b": 16384, "gemma3-4b": 8192}
        said = asyncio.run(asked_window(base, ["qwen3-8b"]))
        assert said == (16384, "its /props"), "router mode: each model's behind ?model="
        assert asyncio.run(asked_window(base, ["qwen3-8b", "gemma3-4b"]))[0] == 8192
        assert asyncio.run(asked_window(base, ["mistral"])) == (0, ""), "not a model it routes to"
        web.router_contexts = None
        web.slot_context, web.loaded_v0 = None, {"qwen/qwen3-8b": 12288}
        assert asyncio.run(asked_window(base, ["qwen/qwen3-8b"])) == (12288, "its /api/v0/models")
    closed = f"http://127.0.0.1:{free_port()}/v1"
    assert asyncio.run(asked_window(closed, ["llama3.1"])) == (0, ""), "nothing listens"


def test_an_answer_that_makes_no_sense_says_nothing_and_stops_nothing() -> None:
    weird = {"models": [{"name": ["llama3.1"], "model": {"x": 1}, "context_length": 4096}]}
    assert ollama_context(weird, "llama3.1") == 0
    assert ollama_context(ps(llama3=16_777_216), "llama3") == 0, "past what the setting takes"

    async def broken(*args: Any) -> tuple[int, str]:
        raise RecursionError("a JSON answer nested too deep")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(local_window, "asked_window", broken)
        found = asyncio.run(asked_context(Context(summary_model="ollama:llama3.1"), {}))
    assert found.tokens == 0 and "taken to have the 4,096-token context" in found.notices[0]


def test_the_plan_takes_the_window_the_server_said_and_keeps_it_with_its_settings() -> None:
    from deskresearch.services.local_window import Window
    from deskresearch.services.servers import Reached

    settings = {"summary_model": Given("ollama:llama3.1", "the flag --summary-model", "", "flag")}
    plan = Plan("t", "a topic", context_from(settings), settings)
    said = plan.reached(Reached(("a notice",), Window(32768, "its /api/ps")))
    assert said.notices == ("a notice",) and said.context.summary_context_window == 32768
    assert said.settings["summary_context_window"].origin == (
        "the summary model's server (its /api/ps)"
    )
    assert plan.context.summary_context_window == 0, "the plan it came from is unchanged"
    too_many = plan.reached(Reached(("a notice",), Window(20_000_000, "its /props")))
    assert too_many.context == plan.context, "a number the setting does not take: the default"
    silent = plan.reached(Reached(("a notice",)))
    assert silent.context == plan.context and "summary_context_window" not in silent.settings
