"""The fields of ``deskresearch.config.context.Context``, in groups (each with its Studio description).

``Context`` inherits them all; dataclass inheritance puts the last-listed base's fields first, so
``Context(CacheFields, PageFields, SearchFields, PlanFields, ModelFields)`` shows models first.
Here: the models and the plan; the I/O groups (search, pages, cache) are in ``fields_io``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator
from pydantic.dataclasses import dataclass

from deskresearch.text.clean import MAX_LANGUAGE_CHARS, clean_language

BACKENDS = ("tavily", "duckduckgo", "searxng", "corpus")
_NAME = "(" + "|".join(BACKENDS) + ")"
SEARCH_CHAIN = rf"^\s*(auto|{_NAME}(\s*,\s*{_NAME})*)\s*$"
_MODEL_PICKER = {"__template_metadata__": {"kind": "llm"}}  # Studio shows a model picker
# Studio's form lists fields in this order; "x-group" names the group each belongs to, for any
# form that groups (JSON Schema has no grouping of its own).
MODELS: dict[str, object] = {"x-group": "Models"}
PLAN: dict[str, object] = {"x-group": "Plan"}
SEARCH: dict[str, object] = {"x-group": "Search"}
PAGES: dict[str, object] = {"x-group": "Pages"}
CACHE: dict[str, object] = {"x-group": "Cache"}
DEPLOYMENT = " Deployment setting: a served run may not change it (docs/security.md)."


@dataclass(kw_only=True, frozen=True)
class ModelFields:
    """The report's language and length; the models and how they are called."""

    language: Annotated[
        str,
        Field(
            title="Report language",
            # The length and shape are checked by _language_name (one message for both).
            json_schema_extra={**MODELS, "minLength": 1, "maxLength": MAX_LANGUAGE_CHARS},
            description="Report language: a code or a name of at most three words (en-us, zh-cn, German, Brazilian Portuguese). Passed to every writing prompt.",
        ),
    ] = "en-us"
    report_words: Annotated[
        int,
        Field(
            title="Report length (words)",
            json_schema_extra=MODELS,
            ge=100,
            le=20_000,
            description="Target length of the report in words (MetaGPT: 2000).",
        ),
    ] = 2000
    summary_model: Annotated[
        str,
        Field(
            title="Model for searching and reading",
            json_schema_extra={**_MODEL_PICKER, **MODELS},
            min_length=1,
            description="Model for keywords, query planning, ranking and page summaries (cheap, many calls). provider:model picks a local server's usual URL: ollama:, vllm:, llamacpp:, lmstudio:, openai:.",
        ),
    ] = "gpt-4o-mini"
    report_model: Annotated[
        str,
        Field(
            title="Model for writing the report",
            json_schema_extra={**_MODEL_PICKER, **MODELS},
            min_length=1,
            description="Model that writes the report and plans it, reflects after each round, weighs the evidence (one call, only when sources may disagree) and takes the third look at a disputed citation; provider:model as for summary_model.",
        ),
    ] = "gpt-4o"
    report_mode: Annotated[
        Literal["sections", "single"],
        Field(
            title="How the report is written",
            json_schema_extra=MODELS,
            description="sections: an outline first, then every section written at the same time (faster; falls back to single if the outline is unusable). single: the whole report in one call.",
        ),
    ] = "sections"
    check_citations: Annotated[
        bool,
        Field(
            title="Check every citation",
            json_schema_extra=MODELS,
            description="Check every cited sentence against the source it cites: words and figures by code, the rest by the judge model (batches judged at the same time); sentences pinned on the wrong source are re-cited, unsupported ones rewritten once or removed. A judge's verdict the sources' facts contradict is asked again, differently (in the rewrite call, then once by the report model); a sentence still in doubt stays, marked unchecked. Verdicts in the result's citations. false: citations are left unchecked.",
        ),
    ] = True
    judge_model: Annotated[
        str,
        Field(
            max_length=200,
            title="Model for checking citations",
            description="Model that judges the citations code cannot decide (in batches of judge_batch sentences, judged at the same time) and rewrites failing sentences (one call). Empty: summary_model. provider:model as for summary_model.",
            json_schema_extra={**_MODEL_PICKER, **MODELS},
        ),
    ] = ""
    judge_batch: Annotated[
        int,
        Field(
            title="Cited sentences per judge call",
            json_schema_extra=MODELS,
            ge=1,
            le=50,
            description="Cited sentences the judge is asked about in one call, at most: n sentences code left undecided take ceil(n/judge_batch) calls, made at the same time (within max_model_calls), split into even batches that repeat each source's evidence as little as they can. Smaller: the check ends sooner; larger: fewer calls and input tokens (every call repeats the evidence of the sources it shows). 50: one call.",
        ),
    ] = 3
    base_url: Annotated[
        str,
        Field(
            title="Model server URL",
            json_schema_extra=MODELS,
            description="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 for Ollama. Empty: OPENAI_BASE_URL (or OPENAI_API_BASE), else api.openai.com."
            + DEPLOYMENT,
        ),
    ] = ""
    structured_output: Annotated[
        Literal["auto", "json_schema", "function_calling", "json_mode", "text"],
        Field(
            title="How structured answers are asked for",
            json_schema_extra=MODELS,
            description="How structured answers are requested. auto: json_schema, then function_calling, json_mode and JSON found in plain text, remembering what the server rejects; any other value uses that method only.",
        ),
    ] = "auto"
    model_timeout_s: Annotated[
        float,
        Field(
            title="Model call timeout (seconds)",
            json_schema_extra=MODELS,
            ge=0,
            le=1800,
            description="Seconds one model call may take, a wait in the server's queue included. 0: 120 for a hosted API, 600 for a local server (Ollama, llama.cpp, LM Studio), where on a CPU alone one page summary takes minutes and the call queued behind it as long again.",
        ),
    ] = 0.0
    max_model_calls: Annotated[
        int,
        Field(
            title="Model calls at once",
            json_schema_extra=MODELS,
            ge=0,
            le=256,
            description="Model calls in flight at once per endpoint, across all branches of a run. 0: 16 for a hosted API, 2 for a local server (Ollama, llama.cpp, LM Studio), which answers one or a few at once and queues the rest, whose model_timeout_s runs while they wait: set the number it serves at once (OLLAMA_NUM_PARALLEL).",
        ),
    ] = 0
    model_requests_per_s: Annotated[
        float,
        Field(
            title="Model requests per second",
            json_schema_extra=MODELS,
            ge=0,
            le=1000,
            description="Model requests started per second per endpoint, across all branches (0: no pacing). Set it to your provider's rate limit.",
        ),
    ] = 0.0
    model_attempts: Annotated[
        int,
        Field(
            title="Attempts per model call",
            json_schema_extra=MODELS,
            ge=1,
            le=10,
            description="Attempts per model call on HTTP 429/5xx or timeouts (Retry-After honoured, else exponential backoff with jitter).",
        ),
    ] = 4
    retry_backoff_s: Annotated[
        float,
        Field(
            title="First retry delay (seconds)",
            json_schema_extra=MODELS,
            ge=0,
            le=60,
            description="Delay before the first retry; doubles per attempt.",
        ),
    ] = 1.0
    max_retries_per_run: Annotated[
        int,
        Field(
            title="Retries per run",
            json_schema_extra=MODELS,
            ge=0,
            le=1000,
            description="Retries one run may spend on its gathering calls (ranking, page summaries) together; then those fall back at once. Keywords, planning and the report keep model_attempts each.",
        ),
    ] = 40
    weigh_evidence: Annotated[
        bool,
        Field(
            title="Weigh the evidence",
            json_schema_extra=MODELS,
            description="Find where independent sources disagree and which figures changed over time: code pairs the facts of different origins that give different values for much the same thing, and one call of the report model (only when there is such a pair) says which pairs are about the same thing. Disagreements close the report with both sides cited; the newest of changed figures is presented as current. Copies of one text are always grouped and count once. false: no disagreements or changes are looked for.",
        ),
    ] = True
    token_budget: Annotated[
        int,
        Field(
            title="Token budget per run",
            json_schema_extra=MODELS,
            ge=0,
            le=100_000_000,
            description="Tokens (in + out) the run may spend gathering; once reached it stops ranking and summarising and writes the report from what it has, saying so. Calls already in flight then (at most max_model_calls) still finish and count. 0: no budget.",
        ),
    ] = 0

    @field_validator("language")
    @classmethod
    def _language_name(cls, value: str) -> str:
        """A language name or tag only: it is written into the writing prompts' instructions."""
        return clean_language(value)


@dataclass(kw_only=True, frozen=True)
class PlanFields:
    """How much is searched: keywords, queries, pages per query, rounds, the plan review."""

    max_keywords: Annotated[
        int,
        Field(
            title="Search keywords",
            json_schema_extra=PLAN,
            ge=1,
            le=10,
            description="Search keywords proposed for the topic (MetaGPT: 2).",
        ),
    ] = 2
    max_output_retries: Annotated[
        int,
        Field(
            title="Retries for malformed keywords",
            json_schema_extra=PLAN,
            ge=0,
            le=5,
            description="Extra attempts when the model's keywords are malformed, before falling back to the topic.",
        ),
    ] = 1
    decomposition_nums: Annotated[
        int,
        Field(
            title="Research queries",
            json_schema_extra=PLAN,
            ge=1,
            le=20,
            description="Research queries planned from the keywords (MetaGPT: 4).",
        ),
    ] = 4
    url_per_query: Annotated[
        int,
        Field(
            title="Pages per query",
            json_schema_extra=PLAN,
            ge=1,
            le=20,
            description="Pages kept per research query after ranking (MetaGPT: 4).",
        ),
    ] = 4
    max_rounds: Annotated[
        int,
        Field(
            title="Research rounds",
            json_schema_extra=PLAN,
            ge=1,
            le=5,
            description="Rounds of research: after each, one call (reflect) reads the facts so far against the question and searches what is still missing, following the names the pages mention (the company, the study, the law). 1: a single pass, no reflection. More rounds stop early when nothing is missing or the token budget cannot pay for one.",
        ),
    ] = 2
    followups_per_round: Annotated[
        int,
        Field(
            title="Follow-up queries per round",
            json_schema_extra=PLAN,
            ge=1,
            le=10,
            description="New queries a reflection may send into the next round (each tied to a gap and, when it follows a lead, to the fact that names it).",
        ),
    ] = 3
    review_plan: Annotated[
        bool,
        Field(
            title="Review the plan before reading",
            json_schema_extra=PLAN,
            description="Pause after ranking, in every round, to show the queries and pages for review (interrupt); resume to accept, trim or drop them.",
        ),
    ] = False
