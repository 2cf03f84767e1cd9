"""A judge that errs on purpose, for the grounding benchmark's ``--judge-error-rate`` and tests.

A share of the sentences the fake judge is asked about gets the wrong verdict, in both
directions: a sentence it would call supported is called *unsupported* (a false "unsupported"),
and one it would not (another source states it, or none does) is called *supported* by a source
it cites, naming that source's real fact nearest to the sentence's words (a false "supported":
the fact is the source's, it just does not say what the sentence says).

Which sentences err is fixed per sentence and per prompt: a draw from the seed, the name of the
prompt's answer schema and the sentence's text. A model at temperature 0 that misjudges a
sentence misjudges it again when asked the same way, whatever else is in the batch or however
often it is asked; a prompt built differently (another schema) draws again, as a different
question to such a model may or may not be answered right. ``ERRS_ALIKE`` as the draw's key
for every prompt is the worst case: whatever the question, the same sentences are misjudged.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from tests.support.chaos import draw

ERRS_ALIKE = "every prompt"  # a draw key shared by all prompts: they err on the same sentences
FALSE_UNSUPPORTED = "false unsupported"
FALSE_SUPPORTED = "false supported"

# (sentence, the cited sources' facts, the cited ids) -> the fields naming its backing
Nearest = Callable[[str, Mapping[int, Sequence[tuple[str, str]]], Collection[int]], dict[str, Any]]


def errs(seed: int, prompt: str, sentence: str, rate: float, always: Sequence[str] = ()) -> bool:
    """Whether the judge answers ``sentence`` wrongly when asked by ``prompt`` (fixed).

    A sentence containing one of ``always`` is answered wrongly whatever the draw (tests).
    """
    if any(part in sentence for part in always):
        return True
    return rate > 0 and draw(seed, prompt, " ".join(sentence.split())) < rate


def misjudge(
    verdicts: Sequence[dict[str, Any]],
    sentences: Mapping[int, tuple[str, set[int]]],
    evidence: Mapping[int, Sequence[tuple[str, str]]],
    *,
    rate: float,
    seed: int,
    prompt: str,
    nearest: Nearest,
    says: Mapping[str, str] = MappingProxyType({}),
    key: str = "",
    unnamed: Mapping[str, Any] = MappingProxyType({"fact": None}),
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Return the verdicts with the erring sentences' answers turned round, and the wrong ones.

    ``sentences`` maps a sentence number to (text, cited ids); ``evidence`` lists each shown
    source's (claim, quote) pairs, in the order the prompt lists them;
    ``nearest(sentence, facts, cited)`` gives the fields of a "supported" answer naming the
    cited sources' fact sharing most words with a sentence (its source, and its number or
    quote, as the prompt asks). ``says`` (tests) maps part of a sentence to the verdict
    the judge gives it whatever the draw ("supported" or "unsupported", as above). ``key``
    replaces ``prompt`` in the draw: one key for every prompt makes them err on the same
    sentences (the benchmark's worst case). ``unnamed``: the fields of an "unsupported"
    answer that names nothing (``{"quote": ""}`` for a prompt asking for quotes).
    """
    out: list[dict[str, Any]] = []
    wrong: list[dict[str, Any]] = []
    for v in verdicts:
        n = int(v["sentence"])
        text, cited = sentences.get(n, ("", set()))
        told = next((verdict for part, verdict in says.items() if part in text), None)
        if n not in sentences or (told is None and not errs(seed, key or prompt, text, rate)):
            out.append(v)
            continue
        stated = told == "supported" if told else v["verdict"] != "supported"  # turned round
        if not stated:
            kind, answer = FALSE_UNSUPPORTED, {"sentence": n, "verdict": "unsupported",
                                               "source": None, **unnamed}  # fmt: skip
        else:
            mine = {s: f for s, f in evidence.items() if s in cited and f}
            kind = FALSE_SUPPORTED
            answer = {"sentence": n, "verdict": "supported", **nearest(text, mine, cited)}
        out.append(answer)
        wrong.append({"text": text, "kind": kind, "prompt": prompt, **answer})
    return out, wrong
