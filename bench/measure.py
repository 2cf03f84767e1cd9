"""What a benchmark run is measured by: the critical-path bound, peak overlap, worker memory."""

from __future__ import annotations

import os
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from tests.support.loopback import Call

_QUERY = re.compile(r"^<queries>\n(.*)\n</queries>$", re.MULTILINE)  # a ranking prompt's query
_PAGE_URL = re.compile(r'<page url="([^"]+)"')
_LISTED_URL = re.compile(r"<(https?://[^>\s]+)>")  # a search result in a ranking prompt
_BEFORE_REPORT = {"Keywords", "QueryPlan", "Ranking", "ChunkSummary", "PageFacts"}
_SECTION = re.compile(r"^<section ", re.MULTILINE)  # one of the report's sections


def _user_text(body: dict[str, Any]) -> str:
    return "\n".join(
        str(m.get("content") or "") for m in body["messages"] if m.get("role") == "user"
    )


def plan_start(log: list[Call], queries: list[str]) -> float:
    """When the bound lets plan_queries (the second model call) leave: after the keywords and
    the slowest keyword search."""
    searches = (c.seconds for c in log if c.kind == "search" and c.key not in queries)
    return _seq(log, "Keywords") + max(searches, default=0.0)


def _seq(log: list[Call], stage: str) -> float:  # calls of one step run one after another
    return sum(c.seconds for c in log if c.kind == "model" and c.key == stage)


_CLOSE_ROUND = ("Reflection", "Outline", "Comparisons")  # made at the same time as a round ends


def _beside(calls: list[Call]) -> float:
    """Seconds the serial sum counts too many for the calls made beside each reflection.

    A round ends with the reflection, the outline and the weighing at the same time (they
    start together: the same step); each such group costs its slowest call, not their sum.
    """
    groups: list[list[Call]] = []
    for c in sorted((c for c in calls if c.key in _CLOSE_ROUND), key=lambda c: c.started):
        if groups and c.started - groups[-1][0].started < 0.15:
            groups[-1].append(c)
        else:
            groups.append([c])
    return sum(sum(c.seconds for c in g) - max(c.seconds for c in g) for g in groups)


def critical_path(log: list[Call], queries: list[str]) -> float:
    """Longest chain of dependent calls: keywords → keyword searches → plan → per query
    (search + rank) → per page (fetch → slowest chunk → reduce) → the calls after the pages.

    A page depends only on the quickest query whose ranking listed it (no barrier between
    ranking and reading is a dependency); the calls after the pages wait for every query.
    When the run fetched pages while they were ranked (``prefetch_pages``: a fetch started
    before the ranking that listed it ended), a page waits for the longer of its fetch and
    that ranking, both after the search.

    Every model call of any other step (the outline, the report, judging and repairing its
    citations) comes after all pages and is counted as one serial chain, except steps that make
    their calls at the same time and so count as their slowest one: the report's sections, the
    judge's batches (``Judgements``, one call per batch of pending sentences), and the
    reflection, the outline and the weighing that close a round (``_beside``). A step
    that makes other calls in parallel must be given its own term here, or the bound comes
    out too high.
    """
    model = [c for c in log if c.kind == "model"]
    after = [c for c in model if c.key not in _BEFORE_REPORT]
    sections = [c.seconds for c in after if _SECTION.search(_user_text(c.body))]
    judged = [c.seconds for c in after if c.key == "Judgements"]
    tail = sum(c.seconds for c in after) - sum(sections) - sum(judged)
    tail += max(sections, default=0.0) + max(judged, default=0.0) - _beside(after)

    searches = [c for c in log if c.kind == "search"]
    searched: dict[str, float] = defaultdict(float)
    for c in searches:
        if c.key in queries:
            searched[c.key] += c.seconds
    ranking: dict[str, float] = defaultdict(float)
    ranked_at: dict[str, float] = {}  # page path → when the first ranking listing it ended
    listed: dict[str, set[str]] = defaultdict(set)  # page path → queries whose ranking saw it
    for c in model:
        if c.key == "Ranking" and (m := _QUERY.search(text := _user_text(c.body))):
            ranking[m.group(1)] += c.seconds
            for url in _LISTED_URL.findall(text):
                path = urlsplit(url).path
                listed[path].add(m.group(1))
                ranked_at[path] = min(ranked_at.get(path, c.started + c.seconds),
                                      c.started + c.seconds)  # fmt: skip
    per_query = {q: searched[q] + ranking[q] for q in set(searched) | set(ranking)}
    all_queries = max(per_query.values(), default=0.0)
    fetch: dict[str, float] = defaultdict(float)
    fetched_at: dict[str, float] = {}
    for c in log:
        if c.kind == "fetch":
            fetch[c.key] += c.seconds
            fetched_at[c.key] = min(fetched_at.get(c.key, c.started), c.started)
    ahead = any(p in ranked_at and t < ranked_at[p] for p, t in fetched_at.items())
    chunk: dict[str, float] = defaultdict(float)
    reduce: dict[str, float] = defaultdict(float)
    for c in model:
        m = _PAGE_URL.search(_user_text(c.body))
        path = urlsplit(m.group(1)).path if m else ""
        if m and c.key == "ChunkSummary":
            chunk[path] = max(chunk[path], c.seconds)
        elif m and c.key == "PageFacts":
            reduce[path] += c.seconds

    def fetched(path: str) -> float:  # its fetch's end; a page no ranking listed waits for all
        ends = [searched[q] + (max(ranking[q], fetch[path]) if ahead else
                               ranking[q] + fetch[path])
                for q in listed[path] if q in per_query]  # fmt: skip
        return min(ends, default=all_queries + fetch[path])

    pages = set(fetch) | set(chunk)
    page_path = max((fetched(p) + chunk[p] + reduce[p] for p in pages), default=0.0)
    return (
        plan_start(log, queries) + _seq(log, "QueryPlan") + max(all_queries, page_path) + tail
    )  # fmt: skip


def read_gaps(log: list[Call]) -> list[float]:
    """Per page read: seconds from its fetch's end to its first summary call (extraction in a
    worker, and any wait for the workers to start or for a free one)."""
    first: dict[str, float] = {}
    for c in log:
        if c.kind == "model" and c.key == "ChunkSummary":
            if m := _PAGE_URL.search(_user_text(c.body)):
                path = urlsplit(m.group(1)).path
                first[path] = min(first.get(path, c.started), c.started)
    ends = {c.key: c.started + c.seconds for c in log if c.kind == "fetch"}
    return [first[p] - end for p, end in ends.items() if p in first]


def peak_overlap(log: list[Call], kind: str) -> int:
    """Most calls of ``kind`` in flight at one moment, from the server's own log."""
    edges = sorted(
        [(c.started, 1) for c in log if c.kind == kind]
        + [(c.started + c.seconds, -1) for c in log if c.kind == kind]
    )
    peak = now = 0
    for _, step in edges:  # at equal times, -1 sorts first: back-to-back is not overlap
        now += step
        peak = max(peak, now)
    return peak


def children_peak_rss_mb(exclude: set[int]) -> float:
    """Sum of the peak RSS of this process's live children (the extraction workers), Linux only."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in exclude:
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields.get("PPid", "").strip() == str(os.getpid()) and "VmHWM" in fields:
            total += int(fields["VmHWM"].split()[0]) / 1024
    return total


def extraction_ms_per_page(pages: list[Path]) -> float:
    """Mean trafilatura cost of the pages a run fetched, measured here, one after another."""
    from deskresearch.services.web.extract import extract_sync

    bodies = [p.read_bytes() for p in pages if p.is_file()]
    start = time.perf_counter()
    for body in bodies:
        extract_sync(body, url="http://bench.invalid/", content_type="text/html")
    return (time.perf_counter() - start) * 1000 / max(len(bodies), 1)
