"""The research settings as command-line options: a table, so ``--help`` imports nothing heavy.

Every command that takes settings (``deskresearch``, ``batch``, ``mcp``) adds them from here
(``add_setting_options``). Deriving the options from ``Context`` at start-up would import
pydantic, LangGraph and the settings modules (over a second) just to print help. The table below
is generated from ``Context`` instead, and a unit test checks it is current; after changing a
setting, run::

    python -m deskresearch.session.options --write
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

ENV_PREFIX = "DESKRESEARCH_"  # context.ENV_PREFIX (not imported: that module is heavy)
DEFAULT_OUTPUT = "reports"  # where the command line and a batch write reports unless told
FORMATS = ("md", "html", "md+html")  # the report's formats (the JSON is always written)
PROGRESS = ("auto", "live", "plain")  # how progress is shown on stderr
MAX_CONCURRENCY = 32  # graph.MAX_CONCURRENCY (not imported: graph.py is heavy)


class Option(NamedTuple):
    """One Context field as a command-line option."""

    name: str  # the field; the flag is --name-with-dashes
    kind: str  # "int", "float", "str" or "bool" (--x/--no-x)
    group: str  # the help section
    choices: tuple[str, ...]  # allowed values ("": any)
    default: str  # as shown in help
    help: str  # the field's description, with its range

    @property
    def flag(self) -> str:
        """Return ``--name-with-dashes``."""
        return "--" + self.name.replace("_", "-")

    @property
    def env(self) -> str:
        """Return the environment variable that sets this field."""
        return ENV_PREFIX + self.name.upper()


# Section titles for the field groups of context_fields; a new group falls back to its docstring.
TITLES = {
    "ModelFields": "models and report",
    "PlanFields": "research plan",
    "SearchFields": "search",
    "PageFields": "pages",
    "CacheFields": "cache",
}

# BEGIN GENERATED (python -m deskresearch.session.options --write)
# fmt: off
OPTIONS: tuple[Option, ...] = (
    Option('language', 'str', 'models and report', (), "'en-us'", 'Report language: a code or a name of at most three words (en-us, zh-cn, German, Brazilian Portuguese). Passed to every writing prompt.'),
    Option('report_words', 'int', 'models and report', (), '2000', 'Target length of the report in words (MetaGPT: 2000). Range 100–20000.'),
    Option('summary_model', 'str', 'models and report', (), "'gpt-4o-mini'", "Model for keywords, query planning, ranking and page summaries (cheap, many calls). provider:model picks a local server's usual URL: ollama:, vllm:, llamacpp:, lmstudio:, openai:."),
    Option('report_model', 'str', 'models and report', (), "'gpt-4o'", 'Model that writes the report and plans it, reflects after each round, weighs the evidence (one call, only when sources may disagree) and takes the third look at a disputed citation; provider:model as for summary_model.'),
    Option('report_mode', 'str', 'models and report', ('sections', 'single'), "'sections'", 'sections: an outline first, then every section written at the same time (faster; falls back to single if the outline is unusable). single: the whole report in one call.'),
    Option('check_citations', 'bool', 'models and report', (), 'true', "Check every cited sentence against the source it cites: words and figures by code, the rest by the judge model (batches judged at the same time); sentences pinned on the wrong source are re-cited, unsupported ones rewritten once or removed. A judge's verdict the sources' facts contradict is asked again, differently (in the rewrite call, then once by the report model); a sentence still in doubt stays, marked unchecked. Verdicts in the result's citations. false: citations are left unchecked."),
    Option('judge_model', 'str', 'models and report', (), "''", 'Model that judges the citations code cannot decide (in batches of judge_batch sentences, judged at the same time) and rewrites failing sentences (one call). Empty: summary_model. provider:model as for summary_model.'),
    Option('judge_batch', 'int', 'models and report', (), '3', "Cited sentences the judge is asked about in one call, at most: n sentences code left undecided take ceil(n/judge_batch) calls, made at the same time (within max_model_calls), split into even batches that repeat each source's evidence as little as they can. Smaller: the check ends sooner; larger: fewer calls and input tokens (every call repeats the evidence of the sources it shows). 50: one call. Range 1–50."),
    Option('base_url', 'str', 'models and report', (), "''", 'OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 for Ollama. Empty: OPENAI_BASE_URL (or OPENAI_API_BASE), else api.openai.com. Deployment setting: a served run may not change it (docs/security.md).'),
    Option('structured_output', 'str', 'models and report', ('auto', 'json_schema', 'function_calling', 'json_mode', 'text'), "'auto'", 'How structured answers are requested. auto: json_schema, then function_calling, json_mode and JSON found in plain text, remembering what the server rejects; any other value uses that method only.'),
    Option('model_timeout_s', 'float', 'models and report', (), '0.0', "Seconds one model call may take, a wait in the server's queue included. 0: 120 for a hosted API, 600 for a local server (Ollama, llama.cpp, LM Studio), where on a CPU alone one page summary takes minutes and the call queued behind it as long again. Range 0–1800."),
    Option('max_model_calls', 'int', 'models and report', (), '0', 'Model calls in flight at once per endpoint, across all branches of a run. 0: 16 for a hosted API, 2 for a local server (Ollama, llama.cpp, LM Studio), which answers one or a few at once and queues the rest, whose model_timeout_s runs while they wait: set the number it serves at once (OLLAMA_NUM_PARALLEL). Range 0–256.'),
    Option('model_requests_per_s', 'float', 'models and report', (), '0.0', "Model requests started per second per endpoint, across all branches (0: no pacing). Set it to your provider's rate limit. Range 0–1000."),
    Option('model_attempts', 'int', 'models and report', (), '4', 'Attempts per model call on HTTP 429/5xx or timeouts (Retry-After honoured, else exponential backoff with jitter). Range 1–10.'),
    Option('retry_backoff_s', 'float', 'models and report', (), '1.0', 'Delay before the first retry; doubles per attempt. Range 0–60.'),
    Option('max_retries_per_run', 'int', 'models and report', (), '40', 'Retries one run may spend on its gathering calls (ranking, page summaries) together; then those fall back at once. Keywords, planning and the report keep model_attempts each. Range 0–1000.'),
    Option('weigh_evidence', 'bool', 'models and report', (), 'true', 'Find where independent sources disagree and which figures changed over time: code pairs the facts of different origins that give different values for much the same thing, and one call of the report model (only when there is such a pair) says which pairs are about the same thing. Disagreements close the report with both sides cited; the newest of changed figures is presented as current. Copies of one text are always grouped and count once. false: no disagreements or changes are looked for.'),
    Option('token_budget', 'int', 'models and report', (), '0', 'Tokens (in + out) the run may spend gathering; once reached it stops ranking and summarising and writes the report from what it has, saying so. Calls already in flight then (at most max_model_calls) still finish and count. 0: no budget. Range 0–100000000.'),
    Option('max_keywords', 'int', 'research plan', (), '2', 'Search keywords proposed for the topic (MetaGPT: 2). Range 1–10.'),
    Option('max_output_retries', 'int', 'research plan', (), '1', "Extra attempts when the model's keywords are malformed, before falling back to the topic. Range 0–5."),
    Option('decomposition_nums', 'int', 'research plan', (), '4', 'Research queries planned from the keywords (MetaGPT: 4). Range 1–20.'),
    Option('url_per_query', 'int', 'research plan', (), '4', 'Pages kept per research query after ranking (MetaGPT: 4). Range 1–20.'),
    Option('max_rounds', 'int', 'research plan', (), '2', 'Rounds of research: after each, one call (reflect) reads the facts so far against the question and searches what is still missing, following the names the pages mention (the company, the study, the law). 1: a single pass, no reflection. More rounds stop early when nothing is missing or the token budget cannot pay for one. Range 1–5.'),
    Option('followups_per_round', 'int', 'research plan', (), '3', 'New queries a reflection may send into the next round (each tied to a gap and, when it follows a lead, to the fact that names it). Range 1–10.'),
    Option('review_plan', 'bool', 'research plan', (), 'false', 'Pause after ranking, in every round, to show the queries and pages for review (interrupt); resume to accept, trim or drop them.'),
    Option('search', 'str', 'search', (), "'auto'", 'Search backends in the order tried, comma-separated: tavily (TAVILY_API_KEY), duckduckgo (no key), searxng (searxng_url), corpus (corpus_dir). The next is tried when one fails or finds nothing. auto: tavily,duckduckgo with a Tavily key, else duckduckgo.'),
    Option('include_domains', 'str', 'search', (), "''", "Comma-separated hosts or suffixes the research keeps to (who.int,.gov,europa.eu): a page is read only if its host, and every host it redirects through, is one of them or under one. Searches ask for them where the engine can (Tavily's include_domains, site: for DuckDuckGo and SearxNG); every result is checked after. The corpus ignores it. Empty: every site. A research choice, not the network policy (allow_hosts)."),
    Option('exclude_domains', 'str', 'search', (), "''", 'Comma-separated hosts or suffixes never read (pinterest.com,.example), as include_domains: a result or redirect under one is dropped, recorded in provenance. Empty: none excluded.'),
    Option('since', 'str', 'search', (), "''", 'Keep pages published on or after this date (YYYY-MM-DD): a page dated earlier (its metadata, a dateline, its URL) is dropped before its chunks are summarised; a page with no date is kept and recorded as undated. Tavily is asked for it too (start_date). Empty: no limit.'),
    Option('tavily_base_url', 'str', 'search', (), "'https://api.tavily.com'", 'Tavily API base URL (a self-hosted proxy or a test server). Deployment setting: a served run may not change it (docs/security.md).'),
    Option('corpus_dir', 'str', 'search', (), "''", 'Folder of .md/.txt/.html/.pdf files searched when search=corpus. Deployment setting: a served run may not change it (docs/security.md).'),
    Option('searxng_url', 'str', 'search', (), "''", 'Base URL of a SearxNG instance with its JSON API on (e.g. http://localhost:8888). Empty: SEARXNG_URL. Deployment setting: a served run may not change it (docs/security.md).'),
    Option('search_timeout_s', 'float', 'search', (), '30.0', 'Seconds one search request may take. Range > 0, ≤ 300.'),
    Option('max_fetches', 'int', 'pages', (), '16', 'Pages read at once, across all branches of a run. Range 1–256.'),
    Option('max_fetches_per_host', 'int', 'pages', (), '4', 'Pages read at once from one host (politeness). Range 1–64.'),
    Option('prefetch_pages', 'bool', 'pages', (), 'true', "Start fetching a query's results as soon as its search answers, while the ranking call decides which are read: the chosen pages are read sooner; the others are fetched and dropped unread (bytes, never tokens). The network policy, the domain scope and the fetch limits apply as to every read. Off with review_plan (nothing is fetched before the review). false: only the ranked pages are fetched."),
    Option('allow_hosts', 'str', 'pages', (), "''", 'Comma-separated hosts, IPs or CIDR ranges the fetcher may read although they are loopback or private (e.g. intranet.example,10.0.0.0/8). Empty: public addresses only. Deployment setting: a served run may not change it (docs/security.md).'),
    Option('page_timeout_s', 'float', 'pages', (), '20.0', 'Seconds to read one page, redirects included. Range > 0, ≤ 300.'),
    Option('max_page_bytes', 'int', 'pages', (), '5000000', 'Bytes read per page; longer pages are cut here. Range 10000–100000000.'),
    Option('max_redirects', 'int', 'pages', (), '5', 'Redirects followed per page. Range 0–20.'),
    Option('min_page_chars', 'int', 'pages', (), '200', 'Pages whose main text is shorter are rejected as empty. Range 0–10000.'),
    Option('max_chunk_tokens', 'int', 'pages', (), '6000', "Upper bound on tokens per summarised chunk; the summary model's window may lower it. Range 200–200000."),
    Option('max_page_chunks', 'int', 'pages', (), '4', 'Chunks of one page summarised at most (one model call each). A longer page keeps the chunks that share most words with the queries, chosen before any model call; the cut is recorded in provenance. Range 1–100.'),
    Option('skip_unrelated_chunks', 'bool', 'pages', (), 'true', "Skip a page's chunks that share no word with the queries while its other chunks do (no model call; recorded in provenance)."),
    Option('summary_context_window', 'int', 'pages', (), '0', "Context window of the summary model in tokens, which sizes the page pieces it reads. 0: its name's (else 8192); on a local server (Ollama, llama.cpp, LM Studio), the context the server says it loaded the model with (asked before a new run), else at most 4096, which such servers give unless started with more (OLLAMA_CONTEXT_LENGTH): then set it to what your server gives the model. On a local server it is taken for the report and judge models on the same server too, whose prompts keep the facts that fit it (each cut said in provenance). Range 0–10000000."),
    Option('cache', 'bool', 'cache', (), 'true', 'Keep model answers, searches (per day) and pages in a persistent SQLite cache, so re-running a research costs no tokens and no fetches. false (--no-cache): neither read nor write it.'),
    Option('cache_path', 'str', 'cache', (), "''", "The cache's SQLite file. Empty: cache.sqlite in your user cache folder. Deployment setting: a served run may not change it (docs/security.md)."),
    Option('cache_page_hours', 'float', 'cache', (), '24.0', 'Hours a cached page is used without asking its server; older copies are revalidated (ETag / Last-Modified) and re-read only when changed. Range 0–8760.'),
)
# fmt: on
# END GENERATED


def _bounds(info: Any) -> str:
    """Return a field's numeric range as text ("1–20", "> 0, ≤ 300"), or ""."""
    low = high = ""
    for item in getattr(info, "metadata", []):
        for attr, sign in (("ge", "≥"), ("gt", ">")):
            if getattr(item, attr, None) is not None:
                low = f"{sign} {getattr(item, attr)}"
        for attr, sign in (("le", "≤"), ("lt", "<")):
            if getattr(item, attr, None) is not None:
                high = f"{sign} {getattr(item, attr)}"
    if low.startswith("≥") and high.startswith("≤"):
        return f"{low[2:]}–{high[2:]}"
    return ", ".join(p for p in (low, high) if p)


def from_context() -> tuple[Option, ...]:
    """Derive the option table from ``Context`` (slow: imports the settings)."""
    import typing

    from deskresearch.config.context import Context

    hints = typing.get_type_hints(Context, include_extras=True)
    infos: dict[str, Any] = getattr(Context, "__pydantic_fields__", {})
    owners: dict[str, str] = {}
    for cls in reversed(Context.__mro__):  # the group that declares each field
        for name in getattr(cls, "__annotations__", {}):
            title = TITLES.get(cls.__name__) or (cls.__doc__ or cls.__name__).split(".")[0]
            owners[name] = title
    defaults = Context.__dataclass_fields__
    options = []
    for name in defaults:
        hint = hints[name]
        base = typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated else hint
        choices: tuple[str, ...] = ()
        if typing.get_origin(base) is typing.Literal:
            choices, kind = tuple(str(a) for a in typing.get_args(base)), "str"
        else:
            kind = base.__name__ if base in (int, float, bool) else "str"
        info = infos.get(name)
        text = str(getattr(info, "description", "") or "").strip()
        if bounds := _bounds(info):
            text = f"{text} Range {bounds}."
        default = defaults[name].default
        shown = str(default).lower() if isinstance(default, bool) else repr(default)
        options.append(Option(name, kind, owners[name], choices, shown, text))
    return tuple(options)


def render(options: tuple[Option, ...]) -> str:
    """Return the generated block's Python source."""
    lines = ["# fmt: off", "OPTIONS: tuple[Option, ...] = ("]
    for o in options:
        lines.append(
            f"    Option({o.name!r}, {o.kind!r}, {o.group!r}, {o.choices!r}, {o.default!r}, "
            f"{o.help!r}),"
        )
    lines += [")", "# fmt: on"]
    return "\n".join(lines)


def write(path: Path = Path(__file__)) -> bool:
    """Regenerate the table in this file; return whether it changed."""
    text = path.read_text(encoding="utf-8")
    head, rest = text.split("# BEGIN GENERATED", 1)
    _, tail = rest.split("# END GENERATED", 1)
    block = f"# BEGIN GENERATED (python -m deskresearch.session.options --write)\n{render(from_context())}\n"
    new = f"{head}{block}# END GENERATED{tail}"
    path.write_text(new, encoding="utf-8")
    return new != text


def add_setting_options(parser: argparse.ArgumentParser) -> None:
    """Add one group per group of settings, one option each.

    Values stay text here: the session's settings check names the flag in its error, like a
    variable's or a file's, with the allowed range.
    """
    groups: dict[str, Any] = {}
    for opt in OPTIONS:
        if opt.group not in groups:
            groups[opt.group] = parser.add_argument_group(f"{opt.group} settings")
        where = f"[env {opt.env}; default {opt.default}]"
        if opt.kind == "bool":
            groups[opt.group].add_argument(
                opt.flag,
                dest=opt.name,
                action=argparse.BooleanOptionalAction,
                default=None,
                help=f"{opt.help} {where}",
            )
            continue
        metavar = "{" + ",".join(opt.choices) + "}" if opt.choices else opt.kind.upper()
        groups[opt.group].add_argument(
            opt.flag, dest=opt.name, metavar=metavar, default=None, help=f"{opt.help} {where}"
        )


def given_settings(values: dict[str, Any]) -> dict[str, Any]:
    """The settings a parsed command line gave: field name → value (flags left out: absent)."""
    return {o.name: values[o.name] for o in OPTIONS if values.get(o.name) is not None}


def bounded(
    kind: Callable[[str], int | float], low: float, high: float
) -> Callable[[str], int | float]:
    """An argparse type: a number from ``low`` to ``high``, or a usage error naming the range.

    The entry points' own numbers (``--max-concurrency``, ``--concurrency``, ``-n``, ...) are
    checked here, as the settings' are by ``Context``: a value out of range never reaches code.
    """
    word = "a whole number" if kind is int else "a number"

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {word}") from None
        if not low <= value <= high:  # NaN fails too
            raise argparse.ArgumentTypeError(f"{text} is out of range: give {low:g} to {high:g}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its own messages
    return parse


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m deskresearch.session.options --write")
    print("updated" if write() else "already current")  # noqa: T201
