"""A loopback web for tests: the fake model, a Tavily-compatible /search, and real pages.

One ThreadingHTTPServer on 127.0.0.1 with a free port; the CLI subprocess reaches it like the
in-process tests do. Every request is counted, so tests can assert what was fetched how often.
"""

from __future__ import annotations

import json
import re
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from tests.support.chaos import draw, pick
from tests.support.engines import ddg_html, searxng_json
from tests.support.fake_model import FakeModel, stage_of
from tests.support.fake_reflect import words
from tests.support.hostile import PAGE_FAULTS, PAGES, page_bytes, respond, send

HOLD_MAX_S = 120.0  # a held request goes on after this long, whatever the test did


def _set(event: threading.Event) -> threading.Event:
    event.set()
    return event


@dataclass(frozen=True)
class Latency:
    """How long the fake services take: a model call costs a fixed time plus time per token."""

    call_s: float = 0.0
    per_in_token_s: float = 0.0
    per_out_token_s: float = 0.0
    search_s: float = 0.0
    fetch_s: float = 0.0

    def model(self, tokens_in: int, tokens_out: int) -> float:
        """Return the simulated duration of one model call."""
        return self.call_s + tokens_in * self.per_in_token_s + tokens_out * self.per_out_token_s


@dataclass(frozen=True)
class Call:
    """One request the loopback web served, with its simulated duration."""

    kind: str  # "model", "search" or "fetch"
    key: str  # the model step, the query, or the path
    seconds: float
    body: dict[str, Any]
    tokens_in: int = 0
    tokens_out: int = 0
    started: float = field(default_factory=time.time)  # wall clock when the request arrived


@dataclass(frozen=True)
class Entry:
    """One search result the fake search engine can return."""

    path: str  # e.g. /pages/heise.de.lithium.html, or /status/404
    title: str
    snippet: str
    url: str = ""  # the result's URL as given, verbatim (a hostile one); "": from path


class WrittenPage(Protocol):
    """A page written for a test or a benchmark case (read-only: cases are frozen)."""

    @property
    def path(self) -> str:
        """Where it is served."""
        ...

    @property
    def title(self) -> str:
        """Its title (the search result's too)."""
        ...

    @property
    def paragraphs(self) -> list[str]:
        """Its text; the first is the search result's snippet."""
        ...

    def html(self, language: str) -> bytes:
        """The page as served."""
        ...


class WrittenCase(Protocol):
    """A case with its written pages, in one language."""

    @property
    def language(self) -> str:
        """The pages' language."""
        ...

    @property
    def pages(self) -> Sequence[WrittenPage]:
        """Its pages."""
        ...


def written_web(cases: Sequence[WrittenCase], **kw: Any) -> FakeWeb:
    """A loopback web serving the cases' pages among the fixture pages, searched by content."""
    web = FakeWeb(content_search=True, **kw)
    web.catalogue = [e for e in default_catalogue() if e.path.startswith("/pages/")]
    for c in cases:
        for page in c.pages:
            web.written[page.path] = page.html(c.language)
            web.catalogue.append(Entry(page.path, page.title, page.paragraphs[0]))
    return web


def default_catalogue() -> list[Entry]:
    """Real fixture pages plus hostile ones, each with a plausible snippet."""
    real = sorted(
        p.name
        for p in PAGES.glob("*.html")
        if p.name not in {"captcha.html", "empty.html", "offtopic.html"}
    )
    entries = [
        Entry(
            f"/pages/{name}",
            name.removesuffix(".html"),
            f"A page about {name.split('.')[0]} with facts and figures.",
        )
        for name in real
    ]
    entries += [
        Entry("/pages/captcha.html", "Security check", "Verify you are human."),
        Entry("/pages/empty.html", "Home", "Welcome."),
        Entry(
            "/pages/offtopic.html",
            "Banana bread",
            "A recipe for banana bread with walnuts and chocolate.",
        ),
        Entry(
            "/status/404",
            "Gone",
            "This page was removed, but its snippet survives in the search index.",
        ),
        Entry("/binary", "Download", "A binary download."),
    ]
    return entries


@dataclass
class FakeWeb:
    """The server's state: what it serves and what it saw."""

    model: FakeModel = field(default_factory=FakeModel)
    catalogue: list[Entry] = field(default_factory=default_catalogue)
    results_per_query: int | None = None  # None: as many as asked
    search_failures: dict[str, int] = field(default_factory=dict)  # query → HTTP status
    engines_down: dict[str, int] = field(default_factory=dict)  # "tavily"/"searxng"/... → status
    page_fault_rate: float = 0.0  # share of /pages/ answered by a PAGE_FAULTS kind (seeded)
    page_chaos_seed: int = 0  # a page's fault is a hash of this and its path (chaos.py)
    page_fault_kinds: tuple[str, ...] = ()  # the PAGE_FAULTS kinds a page may get (): all
    page_faults: dict[str, str] = field(default_factory=dict)  # path → fault kind ("" = none)
    fetches: Counter[str] = field(default_factory=Counter)
    searches: list[dict[str, Any]] = field(default_factory=list)
    search_headers: list[dict[str, str]] = field(default_factory=list)
    model_agents: list[str] = field(default_factory=list)  # User-Agent of each model request
    returned: list[str] = field(default_factory=list)  # every result URL handed out
    not_modified: Counter[str] = field(default_factory=Counter)  # pages answered 304
    page_edits: dict[str, bytes] = field(default_factory=dict)  # path → bytes appended (new ETag)
    latency: Latency = field(default_factory=Latency)
    slow_queries: dict[str, float] = field(default_factory=dict)  # query part → extra seconds
    log: list[Call] = field(default_factory=list)
    traces: list[tuple[str, bytes]] = field(default_factory=list)  # what a LangSmith client sent
    port: int = 0
    hosts: int = 1  # pages are spread over 127.0.0.1 … 127.0.0.<hosts> (all loopback)
    written: dict[str, bytes] = field(default_factory=dict)  # path → a page written for a test
    models_status: int = 200  # what GET /v1/models answers (401: a rejected key)
    rejected_keys: set[str] = field(default_factory=set)  # Tavily keys answered 401
    spent_keys: set[str] = field(default_factory=set)  # Tavily keys at their limit (432 a search)
    key_credits: dict[str, tuple[int, int]] = field(default_factory=dict)  # key: (used, limit)
    key_usage: dict[str, dict[str, Any]] = field(default_factory=dict)  # key: its /usage answer
    usage_keys: list[str] = field(default_factory=list)  # the key of each GET /usage
    # What GET /v1/models lists, as a real server does (the fake answers to any name).
    served_models: tuple[str, ...] = ("gpt-4o-mini", "gpt-4o")
    content_search: bool = False  # rank results by the words a query shares with each page
    # What a local server says of its context: Ollama's GET /api/ps (a model it holds → the
    # context it holds it with), LM Studio's GET /api/v1/models (a model → its loaded
    # instance's), llama.cpp's GET /props (a slot's). None: not that server (404).
    held_models: dict[str, int] | None = None
    loaded_models: dict[str, int] | None = None
    loaded_v0: dict[str, int] | None = None  # LM Studio 0.3's GET /api/v0/models
    router_contexts: dict[str, int] | None = None  # llama.cpp's router: /props?model=NAME
    # Ollama's POST /api/show (with held_models set): a model → the num_ctx its Modelfile sets
    # (0: none), and the context the model was trained on.
    modelfiles: dict[str, int] = field(default_factory=dict)
    trained_context: int = 131072
    slot_context: int | None = None
    local_keys: list[str] = field(default_factory=list)  # the Authorization each of those got
    host: str = "127.0.0.1"  # where the first host listens (another loopback address may stand in)
    _words: dict[str, set[str]] = field(default_factory=dict)  # path → its words (content_search)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _open: threading.Event = field(default_factory=lambda: _set(threading.Event()))

    @property
    def base(self) -> str:
        """Return http://<host>:<port> (127.0.0.1 unless another host was asked for)."""
        return f"http://{self.host}:{self.port}"

    def url(self, path: str) -> str:
        """Return the absolute URL of ``path`` on this server."""
        return self.base + path

    def page_url(self, path: str) -> str:
        """Return the URL a search result gives for ``path``: one of ``hosts`` loopback hosts."""
        host = 1 + zlib.crc32(path.encode()) % self.hosts
        return self.base + path if host == 1 else f"http://127.0.0.{host}:{self.port}{path}"

    def record(self, call: Call) -> None:
        """Wait while the web is held, sleep for the call's simulated duration, log it."""
        self._open.wait(timeout=HOLD_MAX_S)
        if call.seconds > 0:
            time.sleep(call.seconds)
        with self._lock:
            self.log.append(call)

    def hold(self) -> None:
        """Answer nothing from now on until ``release``: a run in flight stays in flight.

        What a test that interrupts a run waits for is a state (the run is mid-way and cannot
        finish), never a time: on a loaded machine the run would otherwise finish first.
        """
        self._open.clear()

    def release(self) -> None:
        """Answer again (requests held so far go on)."""
        self._open.set()

    def page_fault(self, path: str) -> str:
        """Whether a page is hostile, and how: fixed by its path (a retry meets the same fault)."""
        seed = self.page_chaos_seed
        hit = draw(seed, path) < self.page_fault_rate
        fault = pick(self.page_fault_kinds or sorted(PAGE_FAULTS), seed, path) if hit else ""
        with self._lock:
            self.page_faults[path] = fault
        return fault

    def search(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Answer a Tavily /search body: a deterministic window of the catalogue per query."""
        query = str(body.get("query", ""))
        engine = str(body.get("engine", "tavily"))
        with self._lock:
            self.searches.append(body)
        if query in self.search_failures or engine in self.engines_down:
            status = self.search_failures.get(query) or self.engines_down[engine]
            return status, {"detail": {"error": "injected failure"}}
        n = min(
            int(body.get("max_results") or 5), self.results_per_query or 100, len(self.catalogue)
        )
        if self.content_search:
            picked = self._matching(query)[:n]
        else:
            start = zlib.crc32(query.encode()) % len(self.catalogue)
            picked = [self.catalogue[(start + i) % len(self.catalogue)] for i in range(n)]
        results = []
        for i, e in enumerate(picked):
            url = e.url or self.page_url(e.path)
            if i % 3 == 1 and not e.url:  # the same page under a tracking-decorated URL
                url += "?utm_source=newsletter&utm_medium=email#top"
            results.append(
                {"title": e.title, "url": url, "content": e.snippet, "score": 1.0 - i / 100}
            )
        with self._lock:
            self.returned.extend(str(r["url"]) for r in results)
        return 200, {"query": query, "results": results, "response_time": 0.01}

    def page(self, path: str) -> bytes | None:
        """The bytes served at ``path``: a written page, else a fixture page."""
        if path in self.written:
            return self.written[path]
        return page_bytes(path.removeprefix("/pages/")) if path.startswith("/pages/") else None

    def _matching(self, query: str) -> list[Entry]:
        """Entries sharing the query's words, best first; at least half the best score."""
        wanted = words(query)
        scored = []
        for entry in self.catalogue:
            if entry.path not in self._words:
                html = (self.page(entry.path) or b"").decode("utf-8", "replace")
                text = f"{entry.title} {entry.snippet} {_TAG.sub(' ', html)}"
                self._words[entry.path] = words(text)
            score = len(wanted & self._words[entry.path])
            if score:
                scored.append((score, entry))
        if not scored:
            return []
        best = max(score for score, _ in scored)
        keep = sorted((e for e in scored if 2 * e[0] >= best), key=lambda e: (-e[0], e[1].path))
        return [entry for _, entry in keep]


_TAG = re.compile(r"<script.*?</script>|<style.*?</style>|<[^>]+>", re.DOTALL | re.IGNORECASE)


class _Handler(BaseHTTPRequestHandler):
    web: FakeWeb

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        return

    def _json(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        send(self, status, json.dumps(payload).encode(), "application/json", **(headers or {}))

    def _sse(self, completion: dict[str, Any], usage: bool) -> None:
        """Send a completion as OpenAI's stream: content in word-sized deltas, then (asked) usage."""
        message = completion["choices"][0]["message"]
        words = re.findall(r"\S+\s*|\s+", message.get("content") or "")
        base = {k: completion[k] for k in ("id", "created", "model")}
        chunks = [
            {"index": 0, "delta": {"role": "assistant", "content": w}, "finish_reason": None}
            for w in words
        ] + [{"index": 0, "delta": {}, "finish_reason": "stop"}]
        events = [{**base, "object": "chat.completion.chunk", "choices": [c]} for c in chunks]
        if usage:  # as OpenAI: only for stream_options.include_usage
            events.append({**base, "object": "chat.completion.chunk", "choices": [],
                           "usage": completion["usage"]})  # fmt: skip
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for event in events:
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        web = self.web
        if "/runs" in self.path:  # the LangSmith API: keep what arrives, accept it
            with web._lock:
                web.traces.append((self.path, raw))
            return self._json(202, {})
        if self.path.startswith("/ddg/html"):  # DuckDuckGo's HTML endpoint, as ddgs posts to it
            query = parse_qs(raw.decode()).get("q", [""])[0]
            return self._engine("duckduckgo", query, ddg_html, "text/html")
        body = json.loads(raw or b"{}")
        if self.path == "/api/show" and web.held_models is not None:  # Ollama's model card
            with web._lock:
                web.local_keys.append(self.headers.get("Authorization", ""))
            known = {m.removesuffix(":latest"): n for m, n in web.modelfiles.items()}
            ctx = known.get(str(body.get("model", "")).removesuffix(":latest"))
            if ctx is None:
                return self._json(404, {"error": f"model '{body.get('model')}' not found"})
            lines = [f"num_ctx                        {ctx}"] if ctx else []  # 0: none set
            parameters = "\n".join([*lines, 'stop                           "<|eot_id|>"'])
            info = {"general.architecture": "llama", "llama.context_length": web.trained_context}
            return self._json(200, {"modelfile": "# ...", "parameters": parameters,
                                    "model_info": info})  # fmt: skip
        if self.path.endswith("/chat/completions"):
            with web._lock:
                web.model_agents.append(self.headers.get("User-Agent", ""))
            status, payload, headers = web.model.handle(body)
            usage = payload.get("usage", {})
            t_in, t_out = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
            seconds = web.latency.model(t_in, t_out)
            web.record(Call("model", stage_of(body), seconds, body, t_in, t_out))
            if body.get("stream") and status == 200:
                asked = (body.get("stream_options") or {}).get("include_usage", False)
                return self._sse(payload, usage=bool(asked))
            self._json(status, payload, headers)
        elif urlsplit(self.path).path == "/search":  # absolute-form too (the web as a proxy)
            with web._lock:
                web.search_headers.append(dict(self.headers))
            query = str(body.get("query", ""))
            key = self.headers.get("Authorization", "").removeprefix("Bearer ")
            if key in web.rejected_keys:
                return self._json(
                    401, {"detail": {"error": "Unauthorized: missing or invalid API key."}}
                )
            if key in web.spent_keys:  # Tavily's answer past a key's limit
                return self._json(
                    432, {"detail": {"error": "This request exceeds your plan's set usage limit."}}
                )
            extra = next((s for q, s in web.slow_queries.items() if q in query), 0.0)
            web.record(Call("search", query, web.latency.search_s + extra, body))
            self._json(*web.search(body))
        else:
            self._json(404, {"error": "no such endpoint"})

    def _engine(
        self, engine: str, query: str, render: Callable[[list[Any]], bytes], ctype: str
    ) -> None:
        """Answer as another search engine, from the same catalogue as the Tavily fake."""
        web = self.web
        web.record(Call("search", query, web.latency.search_s, {"engine": engine}))
        status, payload = web.search({"query": query, "max_results": 10, "engine": engine})
        if status != 200:
            return self._json(status, payload)
        send(self, 200, render(payload["results"]), ctype)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        path = urlsplit(self.path).path  # absolute-form too: the web as a client's HTTP proxy
        if path == "/v1/models":  # the pre-flight's "does the endpoint answer": no page fetch
            status = self.web.models_status
            listed = [{"id": m, "object": "model"} for m in self.web.served_models]
            return self._json(status, {"object": "list", "data": listed} if status == 200
                              else {"error": {"message": f"HTTP {status}"}})  # fmt: skip
        if path in ("/api/ps", "/api/v1/models", "/api/v0/models", "/props"):
            with self.web._lock:
                self.web.local_keys.append(self.headers.get("Authorization", ""))
        if path == "/api/v1/models" and self.web.loaded_models is not None:
            loaded: list[dict[str, Any]] = [
                {"type": "llm", "key": m, "max_context_length": 131072,
                 "loaded_instances": [{"id": m, "config": {"context_length": n}}]}
                for m, n in self.web.loaded_models.items()
            ]  # fmt: skip
            return self._json(200, {"models": loaded})
        if path == "/api/v0/models" and self.web.loaded_v0 is not None:
            data = [{"id": m, "object": "model", "type": "llm", "state": "loaded",
                     "max_context_length": 131072, "loaded_context_length": n}
                    for m, n in self.web.loaded_v0.items()]  # fmt: skip
            return self._json(200, {"object": "list", "data": data})
        if path == "/api/ps" and self.web.held_models is not None:
            held = [{"name": m, "model": m, "size": 1, "context_length": n}
                    for m, n in self.web.held_models.items()]  # fmt: skip
            return self._json(200, {"models": held})
        if path == "/props" and self.web.router_contexts is not None:  # llama.cpp's router mode
            asked = parse_qs(urlsplit(self.path).query).get("model", [""])[0]
            if asked and asked not in self.web.router_contexts:
                return self._json(404, {"error": {"message": f"model {asked} not found"}})
            slot = {"id": 0, "n_ctx": self.web.router_contexts.get(asked, 0)}  # bare: 0
            return self._json(200, {"default_generation_settings": slot, "role": "router"})
        if path == "/props" and self.web.slot_context is not None:
            slot = {"id": 0, "n_ctx": self.web.slot_context}
            return self._json(200, {"default_generation_settings": slot, "total_slots": 1})
        if path == "/":  # a search engine's front page: the pre-flight's "does it answer"
            return self._json(200, {"service": "loopback web"})
        if path == "/usage":  # Tavily's key and credits (the pre-flight's "is the key taken")
            key = self.headers.get("Authorization", "").removeprefix("Bearer ")
            with self.web._lock:
                self.web.usage_keys.append(key)
            if key in self.web.rejected_keys:
                return self._json(
                    401, {"detail": {"error": "Unauthorized: missing or invalid API key."}}
                )
            if key in self.web.spent_keys:
                return self._json(200, {"key": {"usage": 1000, "limit": 1000}})
            if key in self.web.key_credits:
                used, limit = self.web.key_credits[key]
                return self._json(200, {"key": {"usage": used, "limit": limit}})
            if key in self.web.key_usage:
                return self._json(200, self.web.key_usage[key])
            return self._json(200, {"key": {"usage": len(self.web.searches), "limit": None}})
        if path == "/searxng/search":
            query = parse_qs(urlsplit(self.path).query).get("q", [""])[0]
            return self._engine("searxng", query, searxng_json, "application/json")
        with self.web._lock:
            self.web.fetches[path] += 1
        self.web.record(Call("fetch", path, self.web.latency.fetch_s, {}))
        fault = self.web.page_fault(path) if path.startswith("/pages/") else ""
        if fault:
            respond(self, PAGE_FAULTS[fault])
        elif path.startswith("/pages/") or path in self.web.written:
            self._page(path)
        elif respond(self, path):
            return
        else:
            self._json(404, {"error": "not found"})

    def _page(self, path: str) -> None:
        """Serve a fixture page with ETag and Last-Modified; answer 304 when the copy is current."""
        data = self.web.page(path)
        if data is None:
            return self._json(404, {"error": "no such page"})
        edit = self.web.page_edits.get(path, b"")
        data += edit
        etag = f'"{zlib.crc32(data):08x}"'
        modified = PAGE_EDITED if edit else PAGE_MODIFIED
        asked_etag, asked_since = (
            self.headers.get("If-None-Match"),
            self.headers.get("If-Modified-Since"),
        )
        if asked_etag == etag or (asked_etag is None and asked_since == modified):
            with self.web._lock:
                self.web.not_modified[path] += 1
            return send(self, 304, b"", "text/html", ETag=etag)
        send(self, 200, data, "text/html", ETag=etag, Last_Modified=modified)


PAGE_MODIFIED = "Mon, 02 Nov 2026 08:00:00 GMT"
PAGE_EDITED = "Sat, 21 Nov 2026 08:00:00 GMT"


@contextmanager
def serve(web: FakeWeb | None = None) -> Iterator[FakeWeb]:
    """Run a FakeWeb on a free loopback port for the duration of the block."""
    web = web or FakeWeb()
    handler = type("Handler", (_Handler,), {"web": web})
    servers = [ThreadingHTTPServer((web.host, web.port), handler)]  # 0: a free port
    web.port = servers[0].server_address[1]
    # The whole of 127/8 is loopback on Linux: extra hosts share the port, not the address.
    servers += [
        ThreadingHTTPServer((f"127.0.0.{k}", web.port), handler) for k in range(2, web.hosts + 1)
    ]
    for server in servers:
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield web
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
