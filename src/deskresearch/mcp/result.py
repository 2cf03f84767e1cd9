"""The research tool's result: compact, structured, and bounded in size.

An agent needs the report, the sources it cites and how far to trust it, not the run's audit
trail: the whole output (every source's summary, usage, provenance, the rounds) is several
times the report's size. The result's JSON is at most MAX_RESULT_CHARS characters. A longer
report is shortened in two steps: its References section goes first (``sources`` lists the
cited ones), then the body is cut at a paragraph boundary and ends with a line saying so;
``report_truncated`` is true and ``report_uri`` names the MCP resource that returns the whole
report (the thread id finds the full result too: the served thread's state, or the local run's
files and checkpoint).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from deskresearch.grounding.citations import body_of
from deskresearch.grounding.ledger import VERDICT_ORDER, summary_line
from deskresearch.report.contract import totals
from deskresearch.report.outcome import cited_sources

MAX_RESULT_CHARS = 8_000  # a few thousand characters: about 2,000 tokens of the caller's context
MAX_TITLE_CHARS = 150
MIN_REPORT_ROOM = 2_000  # what the report keeps however many sources it cites
REPORT_URI = "deskresearch://report/{thread_id}"


class SourceRef(BaseModel):
    """One numbered source the report cites as [id]."""

    id: int = Field(description="The number the report cites it by, as [id].")
    title: str = Field(description="The page's title (the URL when it has none).")
    url: str = Field(description="Where the page is.")
    published: str = Field(default="", description='Its publication date ("": undated).')
    origin_group: int = Field(
        default=0,
        description="Its independent origin: sources with the same number carry one text "
        "(a release and its reprints) and count once as evidence.",
    )
    copy_of: int | None = Field(
        default=None, description="The source whose text it carries; null for an original."
    )


class CitationCheck(BaseModel):
    """What the citation check found for the report's cited sentences."""

    checked: int = Field(description="Cited sentences checked against their sources.")
    supported: int = Field(description="Sentences their cited source states.")
    re_cited: int = Field(description="Sentences moved to the source that states them.")
    rewritten: int = Field(description="Sentences rewritten to say only what a source states.")
    removed: int = Field(description="Sentences removed: no source read states them.")
    unchecked: int = Field(description="Sentences left unchecked (treat them with caution).")
    summary: str = Field(description="The same counts as one line.")


class Side(BaseModel):
    """One value of a disagreement and the sources that give it."""

    value: str = Field(description="The value as its first source writes it.")
    sources: list[int] = Field(description="The sources (numbers) that give it, copies included.")
    origins: int = Field(description="Independent origins among them (copies count once).")


class DisagreementRef(BaseModel):
    """Where independent sources give different values for one thing."""

    about: str = Field(description="What the values are of.")
    sides: list[Side] = Field(description="Each value with its sources.")


class RunCost(BaseModel):
    """What the run spent."""

    model_calls: int
    input_tokens: int
    output_tokens: int
    estimated_cost_usd: float | None = Field(
        description="From OpenAI list prices; null when a model has no listed price."
    )


class ResearchResult(BaseModel):
    """The research tool's answer."""

    status: Literal["ok", "insufficient_evidence"] = Field(
        description="ok: a report citing pages the run read; insufficient_evidence: no report, "
        "see reason (the report then says what was tried)."
    )
    reason: str = Field(description="Why there is no report, in one line; empty when ok.")
    topic: str = Field(description="The question as researched.")
    report: str = Field(description="The report as markdown; claims cite sources as [id].")
    report_truncated: bool = Field(
        description=f"True when the report was shortened to keep this result within "
        f"{MAX_RESULT_CHARS} characters; read report_uri for the whole report."
    )
    report_chars: int = Field(description="Length of the whole report in characters.")
    report_uri: str = Field(description="MCP resource with the whole report (markdown).")
    sources: list[SourceRef] = Field(
        description="The sources the report cites, by number (all of them unless the result "
        "had to be shortened: the whole report's References list them all)."
    )
    sources_read: int = Field(description="Sources in the run's ledger (cited or not).")
    citations: CitationCheck
    disagreements: list[DisagreementRef] = Field(
        default_factory=list,
        description="Where independent sources disagree (both sides cited in the report's "
        "closing section); empty when they agree or nothing was weighed.",
    )
    cost: RunCost
    thread_id: str = Field(description="The run's thread: its full result, and resumable.")
    full_result: str = Field(description="Where the full result is, and how to read it.")
    files: list[str] = Field(description="Report files written (local runs; empty when served).")


def citation_check(citations: list[Mapping[str, Any]]) -> CitationCheck:
    """Count the check's verdicts."""
    counts = {v: sum(1 for c in citations if c.get("verdict") == v) for v in VERDICT_ORDER}
    return CitationCheck(
        checked=len(citations) - counts["unchecked"],
        supported=counts["supported"],
        re_cited=counts["re-cited"],
        rewritten=counts["rewritten"],
        removed=counts["removed"],
        unchecked=counts["unchecked"],
        summary=summary_line(citations) if citations else "no cited sentences",  # type: ignore[arg-type]
    )


def run_cost(usage: list[Mapping[str, Any]]) -> RunCost:
    """Model calls, tokens and the estimated cost of a run's usage rows."""
    spent = totals(usage)  # type: ignore[arg-type]
    return RunCost(
        model_calls=spent["calls"],
        input_tokens=spent["input_tokens"],
        output_tokens=spent["output_tokens"],
        estimated_cost_usd=spent["estimated_cost_usd"],
    )


def shortened(report: str, room: int, where: str) -> str:
    """``report`` in at most ``room`` characters: without References, then cut at a paragraph."""
    if len(report) <= room:
        return report
    body = body_of(report).rstrip() + "\n"
    if len(body) <= room:
        return body
    note = f"\n\n[… shortened: {len(report)} characters in all; the whole report: {where}]\n"
    keep = max(room - len(note), 0)
    cut = body.rfind("\n\n", 0, keep)
    return body[: cut if cut > keep // 2 else keep].rstrip() + note


def compact(
    values: Mapping[str, Any], *, thread_id: str, full_result: str, files: list[str] | None = None
) -> ResearchResult:
    """The result for a finished run's ``values``, its JSON within MAX_RESULT_CHARS."""
    ledger = list(values.get("sources") or [])
    report = str(values.get("report") or "")
    cited = set(cited_sources(report, ledger))
    result = ResearchResult(
        status=values["status"],
        reason=str(values.get("reason") or ""),
        topic=str(values.get("topic") or ""),
        report="",
        report_truncated=False,
        report_chars=len(report),
        report_uri=REPORT_URI.format(thread_id=thread_id),
        sources=[
            SourceRef(
                id=s["id"],
                title=(s["title"] or s["url"])[:MAX_TITLE_CHARS],
                url=s["url"],
                published=s["published"],
                origin_group=s.get("origin_group", s["id"]),
                copy_of=s.get("copy_of"),
            )  # fmt: skip
            for s in ledger
            if s["id"] in cited
        ],
        sources_read=len(ledger),
        citations=citation_check(list(values.get("citations") or [])),
        disagreements=[
            DisagreementRef(
                about=str(d["about"])[:MAX_TITLE_CHARS],
                sides=[
                    Side(
                        value=str(s["value"])[:MAX_TITLE_CHARS],
                        sources=list(s["sources"]),
                        origins=int(s["origins"]),
                    )
                    for s in d["sides"]
                ],
            )  # fmt: skip
            for d in values.get("disagreements") or []
        ],
        cost=run_cost(list(values.get("usage") or [])),
        thread_id=thread_id,
        full_result=full_result,
        files=list(files or []),
    )
    # A ledger of long URLs could crowd the report out: the last cited sources go first.
    while result.sources and len(result.model_dump_json()) > MAX_RESULT_CHARS - MIN_REPORT_ROOM:
        result.sources.pop()
    # JSON escapes (quotes, newlines) make the report's share longer than its length: measure
    # the encoded text and shrink until the whole result fits.
    room = MAX_RESULT_CHARS - len(result.model_dump_json())
    text = report
    while True:
        text = shortened(report, room, result.report_uri)
        size = len(result.model_copy(update={"report": text}).model_dump_json())
        if size <= MAX_RESULT_CHARS or room <= 0:
            break
        room -= size - MAX_RESULT_CHARS
    return result.model_copy(update={"report": text, "report_truncated": text != report})
