"""A user's mistake costs seconds, never a run: every entry point as people get it wrong.

One table for the command line and ``deskresearch batch``: what a user types (arguments,
environment), the exit code, the first line of stderr; one for ``deskresearch mcp``: the
server's flags and environment and the call's arguments, the tool error's first line. Each row
runs the entry point as a process against the loopback web, and checks that no model call was
made (the head start included), nothing was saved in the checkpoint store and no output folder
created, and that the error is one line with no traceback and no Python class name.

The mistakes come in classes, each caught as a class (the comments name them): a number out of
range; a search engine named without what it needs; a value the code would silently
reinterpret; a file the run would read late; a rule that must hold wherever a value came from;
a check that must pass before anything is saved; output that must keep its own rule.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration_tests.test_cli import cli
from tests.support.loopback import FakeWeb
from tests.support.runs import loopback_env
from tests.support.server import free_port

ROOT = Path(__file__).parents[2]
TOPIC = "EV battery recycling"
CP = ["--checkpoints", "{tmp}/store/runs.sqlite"]
OUT = ["-o", "{tmp}/out"]
PG_CLOSED = "postgresql://user:secret@127.0.0.1:{port}/research"
E = "^deskresearch: error: "
EB = "^deskresearch batch: error: "
ER = "^deskresearch runs: error: "

# (id, arguments, environment, exit code, first line of stderr (a regex))
ROWS: list[tuple[str, list[str], dict[str, str], int, str]] = [
    # usage: the command line itself (2)
    ("no topic", [], {}, 2, E + "give a topic to start a run, or --resume"),
    ("topic and --resume", ["--resume", "abc", TOPIC], {}, 2, E + "--resume abc continues a run with its own topic"),
    ("typo in a flag", [TOPIC, "--reviw-plan"], {}, 2, E + r"unrecognized arguments: --reviw-plan \(--reviw-plan: did you mean --review-plan\?\)"),
    ("typo in another flag", [TOPIC, "--max-fetchs", "3"], {}, 2, E + "unrecognized arguments.*did you mean --max-fetches"),
    ("unknown format", [TOPIC, "--format", "pdf"], {}, 2, E + "argument --format: invalid choice: 'pdf'"),
    ("not a number", [TOPIC, "--max-concurrency", "many"], {}, 2, E + "argument --max-concurrency: 'many' is not a whole number"),
    ("runs typo", ["runs", "--jsn"], {}, 2, ER + r"unrecognized arguments: --jsn \(--jsn: did you mean --json\?\)"),
    # a setting, an input, a path (3)
    ("empty topic", ["   "], {}, 3, E + "topic is empty: pass a research question"),
    ("value out of range", [TOPIC, "--url-per-query", "99"], {}, 3, E + "invalid setting: url_per_query='99' from the flag --url-per-query"),
    ("bad variable", [TOPIC], {"DESKRESEARCH_PAGE_TIMEOUT_S": "soon"}, 3, E + "invalid setting: page_timeout_s='soon' from DESKRESEARCH_PAGE_TIMEOUT_S in the environment"),
    ("zero fetches", [TOPIC, "--max-fetches", "0"], {}, 3, E + "invalid setting: max_fetches='0' from the flag --max-fetches"),
    ("missing config file", [TOPIC, "--config", "{tmp}/nope.toml"], {}, 3, E + "--config .*nope.toml: cannot read it"),
    ("config typo", [TOPIC, "--config", "{tmp}/typo.toml"], {}, 3, E + "--config .*typo.toml: 'url_per_qurey' is not a setting \\(did you mean url_per_query\\?\\)"),
    ("output in /proc", [TOPIC, "-o", "/proc/nope", *CP], {}, 3, E + "the output folder /proc/nope cannot be written .* from the flag -o"),
    ("output in /sys", [TOPIC, "-o", "/sys/nope/deeper", *CP], {}, 3, E + "the output folder /sys/nope/deeper cannot be written"),
    ("output is a file", [TOPIC, "-o", "{tmp}/a-file/reports", *CP], {}, 3, E + "the output folder .*a-file/reports: .*a-file is not a folder"),
    ("output in memory mode", [TOPIC, "-o", "/proc/nope", "--checkpoints", "memory"], {}, 3, E + "the output folder /proc/nope cannot be written"),
    ("checkpoints in /proc", [TOPIC, *OUT, "--checkpoints", "/proc/x/runs.sqlite"], {}, 3, E + "the folder of the checkpoint store /proc/x cannot be written .* from the flag --checkpoints"),
    ("checkpoints not SQLite", [TOPIC, *OUT, "--checkpoints", "{tmp}/a-file"], {}, 3, E + "the checkpoint store .*a-file is not a SQLite database"),
    ("checkpoints a folder", [TOPIC, *OUT, "--checkpoints", "{tmp}"], {}, 3, E + "the checkpoint store .* is not a file"),
    ("checkpoints from the environment", [TOPIC, *OUT], {"DESKRESEARCH_CHECKPOINTS": "/proc/x/r.sqlite"}, 3, E + "the folder of the checkpoint store .* from DESKRESEARCH_CHECKPOINTS in the environment"),
    ("cache in /proc", [TOPIC, *OUT, *CP, "--cache", "--cache-path", "/proc/x/cache.sqlite"], {}, 3, E + "the folder of the cache file /proc/x cannot be written .* --no-cache"),
    ("cache not SQLite", [TOPIC, *OUT, *CP, "--cache", "--cache-path", "{tmp}/a-file"], {}, 3, E + "the cache file .*a-file is not a SQLite database"),
    ("endpoint without scheme", [TOPIC, *OUT, *CP], {"OPENAI_BASE_URL": "localhost:9"}, 3, E + "the model endpoint 'localhost:9' \\(from OPENAI_BASE_URL in the environment\\) is not an http\\(s\\) URL"),
    ("endpoint flag ftp", [TOPIC, *OUT, *CP, "--base-url", "ftp://models.example/v1"], {}, 3, E + "the model endpoint 'ftp://models.example/v1' \\(from the flag --base-url\\) is not an http"),
    ("no endpoint, no key", [TOPIC, *OUT, *CP], {"OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""}, 3, E + "no model endpoint configured: set OPENAI_API_KEY"),
    ("one model on a server, the other on OpenAI with no key", [TOPIC, *OUT, *CP, "--summary-model", "lmstudio:qwen"], {"OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""}, 3, E + "the report model gpt-4o goes to OpenAI's API \\(the default\\), which needs OPENAI_API_KEY, while the summary model is lmstudio:qwen: .* \\(--report-model lmstudio:qwen\\)"),
    ("key rejected", [TOPIC, *OUT, *CP], {"MODELS_STATUS": "401"}, 3, E + "the model endpoint http://127.0.0.1:\\d+/v1 rejected the API key \\(HTTP 401\\)"),
    ("since not a date", [TOPIC, *OUT, *CP, "--since", "2025-13-40"], {}, 3, E + r"invalid setting: since='2025-13-40' from the flag --since: not a real date \(month must be in 1\.\.12\): give e\.g\. 2024-01-31 \(change --since\)"),
    ("since in the future", [TOPIC, *OUT, *CP, "--since", "2999-01-01"], {}, 3, E + "invalid setting: since='2999-01-01' from the flag --since: a date in the future .*give a past date"),
    ("since from the environment", [TOPIC, *OUT, *CP], {"DESKRESEARCH_SINCE": "31.12.2024"}, 3, E + "invalid setting: since='31.12.2024' from DESKRESEARCH_SINCE in the environment: not a date as YYYY-MM-DD"),
    ("empty --exclude-domains", [TOPIC, *OUT, *CP, "--exclude-domains", ""], {}, 3, E + "--exclude-domains '': an empty value for a flag that takes domains .*leave the flag out to exclude none"),
    ("a URL as a domain", [TOPIC, *OUT, *CP, "--include-domains", "https://who.int/x"], {}, 3, E + "invalid setting: include_domains='https://who.int/x' from the flag --include-domains: 'https://who.int/x' is a URL, not a host: give the host alone \\(who.int\\)"),
    ("a domain in both lists", [TOPIC, *OUT, *CP, "--include-domains", "who.int,.gov", "--exclude-domains", "who.int"], {}, 3, E + "invalid setting: exclude_domains='who.int' from the flag --exclude-domains: who.int is in include_domains too"),
    ("unknown search engine", [TOPIC, *OUT, *CP, "--search", "bing"], {}, 3, E + "invalid setting: search='bing' from the flag --search: not a search chain: name tavily"),
    ("searxng without its URL", [TOPIC, *OUT, *CP, "--search", "searxng"], {}, 3, E + "search=searxng needs the instance's URL"),
    ("corpus without a folder", [TOPIC, *OUT, *CP, "--search", "corpus"], {}, 3, E + "search=corpus needs a folder"),
    ("corpus folder missing", [TOPIC, *OUT, *CP, "--search", "corpus", "--corpus-dir", "{tmp}/papers"], {}, 3, E + "corpus_dir=.*papers' is not a folder"),
    ("tavily base URL not a URL", [TOPIC, *OUT, *CP, "--tavily-base-url", "tavily"], {}, 3, E + "tavily_base_url='tavily' is not an http\\(s\\) URL"),
    ("resume from an empty store", ["--resume", "abc", "--checkpoints", "{tmp}/none.sqlite"], {}, 3, E + "no runs saved in .*none.sqlite yet"),
    ("batch file missing", ["batch", "{tmp}/nope.txt", *OUT], {}, 3, EB + "cannot read the batch file .*nope.txt"),
    ("batch output in /proc", ["batch", "{tmp}/topics.txt", "-o", "/proc/nope"], {}, 3, EB + "the output folder /proc/nope cannot be written"),
    # a server the run needs does not answer (4)
    ("endpoint closed port", [TOPIC, *OUT, *CP], {"OPENAI_BASE_URL": "{closed}/v1"}, 4, E + "the model endpoint http://127.0.0.1:\\d+/v1 does not answer \\(nothing accepts connections there\\).* OPENAI_BASE_URL in the environment"),
    ("endpoint flag closed port", [TOPIC, *OUT, *CP, "--base-url", "{closed}/v1"], {}, 4, E + "the model endpoint .* does not answer .* from the flag --base-url"),
    ("ollama not running", [TOPIC, *OUT, *CP, "--summary-model", "ollama:llama3.1"], {}, 4, E + "the model endpoint http://localhost:11434/v1 does not answer .* from the flag --summary-model"),
    ("the README's local run, no key, ollama not running", [TOPIC, *OUT, *CP, "--summary-model", "ollama:llama3.1", "--report-model", "ollama:llama3.1"], {"OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""}, 4, E + "the model endpoint http://localhost:11434/v1 does not answer"),
    ("searxng closed port", [TOPIC, *OUT, *CP, "--search", "searxng", "--searxng-url", "{closed}"], {}, 4, E + "the search engine searxng at http://127.0.0.1:\\d+ does not answer .* from the flag --searxng-url"),
    ("postgres closed port", [TOPIC, *OUT, "--checkpoints", PG_CLOSED], {}, 4, E + "the checkpoint database postgresql://user:\\*\\*\\*@127.0.0.1:\\d+/research does not answer"),
    ("batch postgres closed port", ["batch", "{tmp}/topics.txt", *OUT, "--checkpoints", PG_CLOSED], {}, 4, EB + "the checkpoint database postgresql://user:\\*\\*\\*@"),
    ("batch ray address closed", ["batch", "{tmp}/topics.txt", *OUT, "--ray", "127.0.0.1:{port}"], {}, 4, EB + "no Ray cluster answers at 127.0.0.1:\\d+ \\(nothing accepts connections there\\)"),
    # 1. a number out of the range the code can take: refused with its name, before any call
    ("negative concurrency", [TOPIC, "--max-concurrency", "-1"], {}, 2, E + "argument --max-concurrency: -1 is out of range: give 1 to 1024"),
    ("workers from the environment", [TOPIC, *OUT], {"DESKRESEARCH_WORKERS": "-2"}, 3, E + "DESKRESEARCH_WORKERS='-2' in the environment: give a whole number of worker processes from 0 to 64"),
    ("runs -n 0", ["runs", "-n", "0"], {}, 2, ER + "argument -n/--limit: 0 is out of range: give 1 to 100000"),
    ("runs -n -3", ["runs", "-n", "-3"], {}, 2, ER + "argument -n/--limit: -3 is out of range"),
    ("batch --concurrency 0", ["batch", "{tmp}/topics.txt", "--concurrency", "0"], {}, 2, EB + "argument --concurrency: 0 is out of range: give 1 to 10000"),
    ("batch --max-concurrency 0", ["batch", "{tmp}/topics.txt", "--max-concurrency", "0"], {}, 2, EB + "argument --max-concurrency: 0 is out of range: give 1 to 1024"),
    ("batch --ray-cpus -1", ["batch", "{tmp}/topics.txt", "--ray", "auto", "--ray-cpus", "-1"], {}, 2, EB + "argument --ray-cpus: -1 is out of range"),
    ("batch --ray-retries -5", ["batch", "{tmp}/topics.txt", "--ray", "auto", "--ray-retries", "-5"], {}, 2, EB + "argument --ray-retries: -5 is out of range: give 0 to 100"),
    ("batch variable out of range", ["batch", "{tmp}/topics.txt", *OUT], {"DESKRESEARCH_MAX_FETCHES": "-1"}, 3, EB + "invalid setting: max_fetches='-1' from DESKRESEARCH_MAX_FETCHES in the environment"),
    # 2. a search engine named without what it needs: one line before the first call
    ("tavily named, its URL closed", [TOPIC, *OUT, "--search", "tavily", "--tavily-base-url", "{closed}"], {}, 4, E + "the search engine tavily at http://127.0.0.1:\\d+ does not answer \\(nothing accepts connections there\\).* from the flag --tavily-base-url"),
    ("batch: tavily named, its URL closed", ["batch", "{tmp}/topics.txt", *OUT, "--search", "tavily", "--tavily-base-url", "{closed}"], {}, 4, EB + "the search engine tavily at http://127.0.0.1:\\d+ does not answer"),
    ("tavily rejects its key", [TOPIC, *OUT, *CP], {"TAVILY_API_KEY": "tvly-revoked", "DESKRESEARCH_TAVILY_BASE_URL": "http://api.tavily.com", "TAVILY_HTTP_PROXY": "{web}"}, 3, E + "the search engine tavily at http://api.tavily.com rejected the API key \\(HTTP 401\\): check TAVILY_API_KEY"),
    ("tavily's credits used up, no engine after it", [TOPIC, *OUT, *CP, "--search", "tavily"], {"TAVILY_API_KEY": "tvly-spent", "DESKRESEARCH_TAVILY_BASE_URL": "http://api.tavily.com", "TAVILY_HTTP_PROXY": "{web}"}, 3, E + "the search engine tavily at http://api.tavily.com would refuse every search: this key's limit is reached \\(1,000 of 1,000 credits used\\)\\. Raise the key's limit"),
    ("tavily rejects its key, an engine after it", [TOPIC, *OUT, *CP, "--search", "tavily,duckduckgo"], {"TAVILY_API_KEY": "tvly-revoked", "DESKRESEARCH_TAVILY_BASE_URL": "http://api.tavily.com", "TAVILY_HTTP_PROXY": "{web}"}, 3, E + "the search engine tavily at http://api.tavily.com rejected the API key"),
    ("batch: tavily rejects its key", ["batch", "{tmp}/topics.txt", *OUT], {"TAVILY_API_KEY": "tvly-revoked", "DESKRESEARCH_TAVILY_BASE_URL": "http://api.tavily.com", "TAVILY_HTTP_PROXY": "{web}"}, 3, EB + "the search engine tavily at http://api.tavily.com rejected the API key"),
    ("batch: searxng without its URL", ["batch", "{tmp}/topics.txt", *OUT, "--search", "searxng"], {}, 3, EB + "search=searxng needs the instance's URL"),
    # 3. a value the code would silently reinterpret: refused, naming what is supported
    ("checkpoint URL of another scheme", [TOPIC, *OUT, "--checkpoints", "mysql://db/runs"], {}, 3, E + "the checkpoint store 'mysql://db/runs' is not a store deskresearch knows: give a SQLite file .* \\(it comes from the flag --checkpoints\\)"),
    ("checkpoint scheme from the environment", [TOPIC, *OUT], {"DESKRESEARCH_CHECKPOINTS": "redis://cache/0"}, 3, E + "the checkpoint store 'redis://cache/0' is not a store .* from DESKRESEARCH_CHECKPOINTS in the environment"),
    ("a language that is none", [TOPIC, *OUT, "--language", "Elvish"], {}, 3, E + "language 'Elvish' \\(from the flag --language\\) names no language deskresearch knows: give a tag"),
    ("an empty output folder", [TOPIC, "-o", ""], {}, 3, E + "the output folder \\(from the flag -o\\) is empty"),
    ("batch: checkpoint URL of another scheme", ["batch", "{tmp}/topics.txt", *OUT, "--checkpoints", "mysql://db/runs"], {}, 3, EB + "the checkpoint store 'mysql://db/runs' is not a store deskresearch knows"),
    ("batch: a language that is none", ["batch", "{tmp}/topics.txt", *OUT], {"DESKRESEARCH_LANGUAGE": "Elvish"}, 3, EB + "language 'Elvish' \\(from DESKRESEARCH_LANGUAGE in the environment\\) names no language"),
    # 4. a file the run would read late: read and checked in the pre-flight
    ("review answer missing", [TOPIC, *OUT, "--review", "{tmp}/answers.json"], {}, 3, E + "the review answer .*answers.json \\(from the flag --review\\) cannot be read"),
    ("review answer not JSON", [TOPIC, *OUT, "--review", "{tmp}/a-file"], {}, 3, E + "the review answer .*a-file \\(from the flag --review\\) is not JSON"),
    ("review answer not an answer", [TOPIC, *OUT, "--review", "{tmp}/wrong.json"], {}, 3, E + "the review answer .*wrong.json \\(from the flag --review\\) is not an answer"),
    ("batch: corpus folder missing", ["batch", "{tmp}/topics.txt", *OUT, "--search", "corpus", "--corpus-dir", "{tmp}/papers"], {}, 3, EB + "corpus_dir=.*papers' is not a folder"),
    # 5. a rule about a setting holds wherever the value came from
    ("batch --review-plan", ["batch", "{tmp}/topics.txt", *OUT, "--review-plan"], {}, 3, EB + "review_plan=true from the flag --review-plan pauses each run for a person"),
    ("batch: review_plan from the environment", ["batch", "{tmp}/topics.txt", *OUT], {"DESKRESEARCH_REVIEW_PLAN": "1"}, 3, EB + "review_plan=true from DESKRESEARCH_REVIEW_PLAN in the environment pauses each run"),
    ("batch --ray: a SQLite store from the environment", ["batch", "{tmp}/topics.txt", *OUT, "--ray", "auto"], {"DESKRESEARCH_CHECKPOINTS": "{tmp}/store/runs.sqlite"}, 3, EB + "--ray needs checkpoints every node reaches, not .*runs.sqlite' \\(from DESKRESEARCH_CHECKPOINTS in the environment\\)"),
    # 6. every check passes before anything is saved: a server lacking the model included
    ("the server lacks the model", [TOPIC, *OUT, "--summary-model", "gpt-4o-nano"], {}, 3, E + "the model endpoint http://127.0.0.1:\\d+/v1 does not serve the model 'gpt-4o-nano' \\(from the flag --summary-model\\): it serves gpt-4o, gpt-4o-mini"),
    ("the server lacks the judge", [TOPIC, *OUT], {"DESKRESEARCH_JUDGE_MODEL": "judge-9"}, 3, E + "the model endpoint .* does not serve the model 'judge-9' \\(from DESKRESEARCH_JUDGE_MODEL in the environment\\)"),
    ("resume a store that is no database", ["--resume", "abc", "--checkpoints", "{tmp}/a-file"], {}, 3, E + "the checkpoint store .*a-file is not a SQLite database"),
    ("batch: the server lacks the model", ["batch", "{tmp}/topics.txt", *OUT, "--report-model", "gpt-4o-nano"], {}, 3, EB + "the model endpoint .* does not serve the model 'gpt-4o-nano' \\(from the flag --report-model\\)"),
    # 7. output that keeps its own rule: one line, no class name, a hint where one helps
    ("an unquoted topic", ["How", "are", "EV", "batteries", "recycled"], {}, 2, E + 'the topic is one argument: put it in quotes, e.g. deskresearch "How are EV batteries recycled"'),
    ("batch --server closed port", ["batch", "{tmp}/topics.txt", *OUT, "--server", "{closed}"], {}, 4, EB + "no LangGraph server answers at http://127.0.0.1:\\d+ \\(nothing accepts connections there\\)"),
    ("batch -q says one line", ["batch", "{tmp}/bad.txt", "-o", "{tmp}/summary", "-q"], {}, 3, "^deskresearch: 0 topics: none run; 1 line skipped"),
    ("runs on a file that is not a database", ["runs", "--checkpoints", "{tmp}/a-file"], {}, 3, ER + "the checkpoint store .*a-file is not a SQLite database"),
    ("runs on a URL of another scheme", ["runs", "--checkpoints", "mysql://db/runs"], {}, 3, ER + "the checkpoint store 'mysql://db/runs' is not a store deskresearch knows"),
]  # fmt: skip


def fill(text: str, tmp: Path, closed: str, port: int) -> str:
    return text.replace("{tmp}", str(tmp)).replace("{closed}", closed).replace("{port}", str(port))


def setup(tmp: Path) -> None:
    (tmp / "a-file").write_text("not a database\n", encoding="utf-8")
    (tmp / "typo.toml").write_text("url_per_qurey = 2\n", encoding="utf-8")
    (tmp / "topics.txt").write_text(f"{TOPIC}\n", encoding="utf-8")
    (tmp / "bad.txt").write_text('{"topic": "x", "url_per_query": 99}\n', encoding="utf-8")
    (tmp / "wrong.json").write_text('{"drop": ["https://a.example/"]}\n', encoding="utf-8")


@pytest.mark.parametrize(("case", "args", "env", "code", "first"), ROWS, ids=[r[0] for r in ROWS])
def test_a_mistake_is_one_line_before_any_call(
    web: FakeWeb, tmp_path: Path, case: str, args: list[str], env: dict[str, Any], code: int,
    first: str,
) -> None:  # fmt: skip
    setup(tmp_path)
    port = free_port()
    closed = f"http://127.0.0.1:{port}"
    store = {"DESKRESEARCH_CHECKPOINTS": str(tmp_path / "store" / "runs.sqlite")}
    env = {
        k: fill(v, tmp_path, closed, port).replace("{web}", web.base)
        for k, v in (store | env).items()
    }
    web.models_status = int(env.pop("MODELS_STATUS", "200"))
    web.rejected_keys, web.spent_keys = {"tvly-revoked"}, {"tvly-spent"}
    proc = cli(web, *[fill(a, tmp_path, closed, port) for a in args], env=env)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == code, (case, proc.stderr)
    assert lines and re.search(first, lines[0]), (case, lines[:3])
    assert len(lines) == 1 and "Traceback" not in proc.stderr, (case, proc.stderr)
    assert not re.search(r"\b[A-Z]\w+(Error|Exception)\b", lines[0]), "no Python class names"
    assert web.model.requests == [], "no model call, the head start included"
    assert not (tmp_path / "store").exists(), "no checkpoint written"
    assert not (tmp_path / "out").exists(), "no output folder created"


# deskresearch mcp: (id, the server's arguments, its environment, the call's arguments, the tool
# error's first line). The classes as an MCP client meets them: a tool error, never a run.
MCP_ROWS: list[tuple[str, list[str], dict[str, str], dict[str, Any], str]] = [
    # 1. a number out of range, wherever it came from
    ("a variable out of range", [], {"DESKRESEARCH_MAX_FETCHES": "-1"}, {}, "invalid setting: max_fetches='-1' from DESKRESEARCH_MAX_FETCHES in the environment: Input should be greater than or equal to 1"),
    ("a flag out of range", ["--url-per-query", "99"], {}, {}, "invalid setting: url_per_query='99' from the flag --url-per-query"),
    ("a call's number out of range", [], {}, {"max_rounds": 9}, "invalid setting: max_rounds=9 from the tool call's max_rounds: Input should be less than or equal to 5"),
    # 2. a search engine named without what it needs
    ("tavily named, its URL closed", ["--search", "tavily", "--tavily-base-url", "{closed}"], {}, {}, "the search engine tavily at http://127.0.0.1:\\d+ does not answer \\(nothing accepts connections there\\)"),
    ("searxng named without its URL", [], {"DESKRESEARCH_SEARCH": "searxng"}, {}, "search=searxng needs the instance's URL"),
    ("tavily rejects its key", [], {"TAVILY_API_KEY": "tvly-revoked", "DESKRESEARCH_TAVILY_BASE_URL": "http://api.tavily.com", "TAVILY_HTTP_PROXY": "{web}"}, {}, "the search engine tavily at http://api.tavily.com rejected the API key \\(HTTP 401\\)"),
    # 3. a value the code would silently reinterpret
    ("a language that is none", [], {}, {"language": "Elvish"}, "language 'Elvish' \\(from the tool call's language\\) names no language deskresearch knows"),
    ("a checkpoint URL of another scheme", [], {"DESKRESEARCH_CHECKPOINTS": "mysql://db/runs"}, {}, "the checkpoint store 'mysql://db/runs' is not a store deskresearch knows"),
    # 4. a file the run reads: read at the call, before it runs
    ("a config file missing", ["--config", "{tmp}/nope.toml"], {}, {}, "--config .*nope.toml: cannot read it"),
    # 5. a rule about a setting holds wherever the value came from
    ("review_plan from the environment", [], {"DESKRESEARCH_REVIEW_PLAN": "true"}, {}, "review_plan=true from DESKRESEARCH_REVIEW_PLAN in the environment pauses each run"),
    ("review_plan from a flag", ["--review-plan"], {}, {}, "review_plan=true from the flag --review-plan pauses each run"),
    # 6. every check passes before anything is saved
    ("the server lacks the model", [], {"DESKRESEARCH_SUMMARY_MODEL": "gpt-4o-nano"}, {}, "the model endpoint http://127.0.0.1:\\d+/v1 does not serve the model 'gpt-4o-nano' \\(from DESKRESEARCH_SUMMARY_MODEL in the environment\\)"),
    ("the endpoint's port closed", [], {"OPENAI_BASE_URL": "{closed}/v1"}, {}, "the model endpoint http://127.0.0.1:\\d+/v1 does not answer \\(nothing accepts connections there\\)"),
]  # fmt: skip


@pytest.mark.anyio
@pytest.mark.parametrize(("case", "args", "env", "call", "first"), MCP_ROWS,
                         ids=[r[0] for r in MCP_ROWS])  # fmt: skip
async def test_an_mcp_mistake_is_a_one_line_tool_error_before_any_call(
    web: FakeWeb, tmp_path: Path, case: str, args: list[str], env: dict[str, str],
    call: dict[str, Any], first: str,
) -> None:  # fmt: skip
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp_types import TextContent

    setup(tmp_path)
    web.rejected_keys = {"tvly-revoked"}
    port = free_port()
    closed = f"http://127.0.0.1:{port}"
    store = {"DESKRESEARCH_CHECKPOINTS": str(tmp_path / "store" / "runs.sqlite")}
    server = StdioServerParameters(
        command=str(Path(sys.executable).parent / "deskresearch"),
        args=["mcp", "-o", str(tmp_path / "out"), *(fill(a, tmp_path, closed, port) for a in args)],
        env=loopback_env(web, **{k: fill(v, tmp_path, closed, port).replace("{web}", web.base)
                                 for k, v in (store | env).items()}),
        cwd=str(tmp_path),
    )  # fmt: skip
    with (tmp_path / "server.log").open("w") as log:
        async with stdio_client(server, errlog=log) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("research", {"topic": TOPIC, **call})
    assert result.is_error, (case, result)
    [block] = result.content
    assert isinstance(block, TextContent)
    lines = block.text.strip().splitlines()
    assert len(lines) == 1 and re.search(first, lines[0]), (case, lines[:3])
    assert not re.search(r"\b[A-Z]\w+(Error|Exception)\b", lines[0]), "no Python class names"
    assert "Traceback" not in (tmp_path / "server.log").read_text()
    assert web.model.requests == [], "no model call"
    assert not (tmp_path / "store").exists(), "nothing saved in the checkpoint store"
    assert not (tmp_path / "out").exists(), "no output folder created"


def test_the_table_covers_enough_mistakes() -> None:
    assert len(ROWS) >= 75 and {r[3] for r in ROWS} == {2, 3, 4}
    assert len(MCP_ROWS) >= 10


def test_debug_shows_the_traceback_before_the_line(web: FakeWeb, tmp_path: Path) -> None:
    proc = cli(web, TOPIC, "-o", "/proc/nope", "--checkpoints", "memory", "--debug")
    assert proc.returncode == 3 and proc.stderr.startswith("Traceback")
    assert proc.stderr.strip().splitlines()[-1].startswith("deskresearch: error: the output")


@pytest.mark.parametrize("args", [["--help"], ["runs", "--checkpoints", "{store}"]])
def test_output_into_a_closed_pipe_ends_quietly(tmp_path: Path, args: list[str]) -> None:
    """`deskresearch runs | head -1`: the reader left; no traceback, the shell's SIGPIPE code."""
    store = tmp_path / "runs.sqlite"
    sqlite3.connect(store).close()  # a store with no runs: `runs` still prints its header
    argv = ["deskresearch", *(a.replace("{store}", str(store)) for a in args)]
    script = ("import os, sys\nread, write = os.pipe()\nos.close(read)\nos.dup2(write, 1)\n"
              f"sys.argv = {argv!r}\nfrom deskresearch.__main__ import run\nrun()\n")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("DESKRESEARCH_")}
    proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    # argparse drops a failed write of --help itself; `runs` ends as a shell expects
    expected = {141} if args[0] == "runs" else {0, 141}
    assert proc.returncode in expected, proc.stderr
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
