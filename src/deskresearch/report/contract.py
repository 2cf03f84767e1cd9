"""The result document the CLI writes as ``<slug>.json``: a versioned, published contract.

Its JSON Schema ships in the package (``result.schema.json``; ``schema()`` loads it). Within one
major ``schema_version`` keys are only added, never renamed or removed; readers should ignore
keys they do not know. ``citations`` is optional: present once the citation check has run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from importlib import resources
from typing import Any

from deskresearch._version import __version__
from deskresearch.config.context import Context
from deskresearch.config.pricing import estimate
from deskresearch.records import ModelSpec, StageClock, Usage
from deskresearch.safety.masking import mask_secrets

# 1.1: budget_stopped; 1.2: reason, rounds, a source's round; 1.3: disagreements, changes, a
# source's origin group and copy, a citation's origins, dates and dispute, a model's timeout and
# calls at once (the values used when the settings say 0: auto)
SCHEMA_VERSION = "1.3"
OPENAI_DEFAULT = "https://api.openai.com/v1"
RESULT_KEYS = ("status", "reason", "report", "sources", "queries", "usage", "provenance")
WEIGHING_KEYS = ("disagreements", "changes")
ROUNDS_KEY = "rounds"


def schema() -> dict[str, Any]:
    """Return the published JSON Schema of the result document."""
    text = resources.files("deskresearch.report").joinpath("result.schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def endpoint_of(spec: ModelSpec, environ: Mapping[str, str] | None = None) -> str:
    """Return the URL a model call goes to (masked), as the model client resolves it."""
    env = os.environ if environ is None else environ
    return mask_secrets(spec.base_url or env.get("OPENAI_BASE_URL") or OPENAI_DEFAULT)


def totals(usage: Sequence[Usage]) -> dict[str, Any]:
    """A run's tokens, calls, cached calls and estimated cost (None when a model is unpriced).

    ``counted_calls`` only when some call's tokens are our count (its server reported none).
    """
    usd, unpriced = estimate(usage)
    counted = sum(u.get("counted_calls", 0) for u in usage)
    return {
        "input_tokens": sum(u["input_tokens"] for u in usage),
        "output_tokens": sum(u["output_tokens"] for u in usage),
        "calls": sum(u["calls"] for u in usage),
        "cached_calls": sum(u.get("cached_calls", 0) for u in usage),
        **({"counted_calls": counted} if counted else {}),
        "estimated_cost_usd": None if unpriced else round(usd, 6),
    }


def _stages(usage: list[Usage], clocks: Mapping[str, StageClock]) -> list[dict[str, Any]]:
    """One row per node: its tasks' timings (seconds from the run's start) and its tokens."""
    rows: dict[str, dict[str, Any]] = {}
    for name, c in clocks.items():
        rows[name] = {
            "stage": name,
            "tasks": c.tasks,
            "started_s": round(c.first or 0.0, 3),
            "finished_s": round(c.last or 0.0, 3),
            "busy_s": round(c.busy, 3),
        }
    for u in usage:
        row = rows.setdefault(
            u["stage"],
            {"stage": u["stage"], "tasks": 0, "started_s": 0.0, "finished_s": 0.0, "busy_s": 0.0},
        )
        for key in ("input_tokens", "output_tokens", "calls", "cached_calls"):
            row[key] = row.get(key, 0) + u.get(key, 0)
        if u.get("counted_calls"):
            row["counted_calls"] = row.get("counted_calls", 0) + u["counted_calls"]
    for row in rows.values():
        for key in ("input_tokens", "output_tokens", "calls", "cached_calls"):
            row.setdefault(key, 0)
    return sorted(rows.values(), key=lambda r: (r["started_s"], r["stage"]))


def document(
    result: Mapping[str, Any],
    *,
    ctx: Context,
    thread_id: str,
    clocks: Mapping[str, StageClock],
    started: datetime,
    finished: datetime,
    resumed: bool,
    files: Mapping[str, str],
) -> dict[str, Any]:
    """Build the result document for one run's final state."""
    usage: list[Usage] = list(result.get("usage") or [])
    specs = {"summary": ctx.summary_spec(), "report": ctx.report_spec(), "judge": ctx.judge_spec()}
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "deskresearch_version": __version__,
        "thread_id": thread_id,
        "topic": result.get("topic", ""),
        "language": result.get("language", ctx.language),
        **{k: result.get(k) for k in RESULT_KEYS},
        "reason": str(result.get("reason") or ""),
        ROUNDS_KEY: list(result.get(ROUNDS_KEY) or []),
        **{k: list(result.get(k) or []) for k in WEIGHING_KEYS},
        "budget_stopped": bool(result.get("budget_stopped")),
        "totals": totals(usage),
        "stages": _stages(usage, clocks),
        "run": {
            "started_at": started.isoformat(timespec="seconds"),
            "finished_at": finished.isoformat(timespec="seconds"),
            "duration_s": round((finished - started).total_seconds(), 3),
            "resumed": resumed,
        },
        "models": {
            role: {
                "model": spec.model,
                "endpoint": endpoint_of(spec),
                "timeout_s": spec.timeout_s,
                "calls_at_once": spec.max_concurrent,
            }
            for role, spec in specs.items()
        },
        "search_backends": list(ctx.search_settings().backends),
        "settings": ctx.public_settings(),
        "files": dict(files),
    }
    if result.get("citations") is not None:
        doc["citations"] = result["citations"]
    return doc
