"""A judge that errs on purpose, for the grounding benchmark's ``--judge-error-rate``.

For a share of the sentences it is asked about, the fake judge's answer is replaced by one of the
two errors a real model makes: a *made-up quote* (it calls the sentence supported by a source it
cites and "quotes" the sentence itself, which that source does not say), or a *wrong source* (it
names another listed source, with a real quote of that source). The product believes a verdict
only when code finds its quote in the source it names; these errors show what that catches.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

MADE_UP = "made-up quote"
WRONG_SOURCE = "wrong source"
_MARKERS = re.compile(r"\s*\[[\d,; ]+\]")


def misjudge(
    verdicts: Sequence[dict[str, Any]],
    sentences: Mapping[int, tuple[str, set[int]]],
    evidence: Mapping[int, Sequence[tuple[str, str]]],
    *,
    rate: float,
    rng: random.Random,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Return the verdicts with a share ``rate`` replaced by wrong ones, and the wrong ones.

    ``sentences`` maps a sentence number to (text, cited ids); ``evidence`` lists each shown
    source's (claim, quote) pairs.
    """
    out: list[dict[str, Any]] = []
    wrong: list[dict[str, Any]] = []
    for v in verdicts:
        n = int(v["sentence"])
        if n not in sentences or rng.random() >= rate:
            out.append(v)
            continue
        text, cited = sentences[n]
        others = [s for s in sorted(evidence) if s != v.get("source") and evidence[s]]
        kind = rng.choice((MADE_UP, WRONG_SOURCE)) if others else MADE_UP
        if kind == MADE_UP:
            quote = " ".join(_MARKERS.sub("", text).split()).rstrip(".")
            answer = {"sentence": n, "verdict": "supported", "source": min(cited), "quote": quote}
        else:
            sid = rng.choice(others)
            verdict = "supported" if sid in cited else "other_source"
            answer = {"sentence": n, "verdict": verdict, "source": sid,
                      "quote": evidence[sid][0][1]}  # fmt: skip
        out.append(answer)
        wrong.append({"text": text, "kind": kind, **answer})
    return out, wrong
