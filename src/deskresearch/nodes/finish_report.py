"""finish_report: apply the citation check to the draft, add the references and the check's account.

Re-cited sentences point at their new source, rewritten ones take their replacement, removed ones
go (grounding.draft keeps paragraphs and headings consistent). The result's ``citations`` lists
every cited sentence with its verdict; the report ends with the references from the ledger and,
when the check changed or could not check something, an appendix saying what and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from deskresearch.config.context import Context, resolve
from deskresearch.errors import budget_reached
from deskresearch.grounding.citations import ids_in, recite, render_references
from deskresearch.grounding.draft import SentenceKey, cited_sentences, edit, language_code, parse
from deskresearch.grounding.ledger import ledger_evidence, summary_line
from deskresearch.grounding.lexical import Evidence, check_sentence
from deskresearch.nodes.chat import answered
from deskresearch.nodes.insufficient import insufficient_result
from deskresearch.progress import cached_calls_note, emit, note
from deskresearch.records import Citation, Dispute, Provenance, Source, Verdict
from deskresearch.report.disagreements import settle
from deskresearch.report.outcome import is_report
from deskresearch.services.storage.claims import PageClaims
from deskresearch.state import ResearchState, SentenceCheck
from deskresearch.text.clean import strip_links

BUDGET_NOTE = (
    "> **Note:** the run reached its token budget ({budget}) and stopped gathering: this report "
    "is written from the {sources} source(s) read until then. Pages left unread are listed in "
    "the provenance."
)

LINK_REMOVED = "a link the report's writer added: the report links only to its sources"

OPEN_GAPS = {
    "en": "What this report could not establish",
    "de": "Was dieser Bericht nicht klären konnte",
    "fr": "Ce que ce rapport n'a pas pu établir",
    "es": "Lo que este informe no pudo establecer",
    "it": "Ciò che questo rapporto non ha potuto stabilire",
    "pt": "O que este relatório não conseguiu estabelecer",
    "nl": "Wat dit rapport niet kon vaststellen",
}


def open_gaps_section(gaps: list[str], language: str) -> str:
    """The closing section listing what the research left open ("" when nothing is).

    A gap is the reflection model's line (written from page text): one line, no markup that
    could start a heading or a list inside it; links go with the body's (strip_links).
    """
    lines = [" ".join(g.replace("#", " ").split()) for g in gaps]
    lines = [g for g in lines if g]
    if not lines:
        return ""
    heading = OPEN_GAPS.get(language_code(language), OPEN_GAPS["en"])
    return f"## {heading}\n\n" + "\n".join(f"- {g}" for g in lines)


_VERDICT: dict[str, Verdict] = {
    "supported": "supported",
    "re-cited": "re-cited",
    "rewritten": "rewritten",
    "unsupported": "removed",
    "removed": "removed",
    "pending": "unchecked",
    "disputed": "unchecked",  # never settled (a second look always settles or leaves it so)
    "unchecked": "unchecked",
}


def _final_text(check: SentenceCheck, verdict: Verdict) -> str | None:
    """The sentence as the report will have it (None: removed; unchanged: itself)."""
    if verdict == "removed":
        return None
    if verdict == "rewritten":
        return check["replacement"]
    if verdict == "re-cited" and check["source"] is not None:
        return recite(check["sentence"], [check["source"]])
    return check["sentence"]


def citation_of(check: SentenceCheck) -> Citation:
    """The public record of one checked sentence."""
    verdict = _VERDICT[check["status"]]
    text = _final_text(check, verdict)
    return Citation(
        sentence=text or "",
        original=check["sentence"],
        sources=ids_in(text) if text else list(check["cites"]),
        verdict=verdict,
        quote=check["quote"],
        quote_source=check["source"] if check["quote"] else None,
        decided_by=check["decided_by"] if verdict != "unchecked" else "none",
        reason=check["reason"],
        section=check["section"],
        dispute=check.get("dispute"),
    )


def unchecked(state: ResearchState) -> list[SentenceCheck]:
    """Every cited sentence of the draft, marked unchecked (the check is turned off)."""
    return [
        SentenceCheck(
            unit=s.key[0],
            index=s.key[1],
            sentence=s.text,
            cites=list(s.cites),
            section=s.section,
            status="unchecked",
            source=None,
            quote="",
            decided_by="none",
            reason="the citation check is turned off",
            candidates=[],
            replacement="",
        )  # fmt: skip
        for s in cited_sentences(parse(state["draft"], state["language"]))
    ]


def weighed(
    citations: list[Citation], sources: list[Source], ledger: Mapping[int, Evidence], language: str
) -> list[Citation]:
    """Each citation with the independent origins that state it and its sources' dates.

    A source counts when it states the sentence: the one its quote is from, and any other it
    cites whose words and figures carry it alone (``check_sentence``). Citing three copies, or
    a page beside the one that says it, adds no origin. A removed sentence has none; an
    unchecked one counts what it cites (the report says it was not checked).
    """
    by_id = {s["id"]: s for s in sources}
    out = []
    for c in citations:
        cited = [by_id[i] for i in c["sources"] if i in by_id]
        if c["verdict"] == "removed":
            backers: list[Source] = []
        elif c["verdict"] == "unchecked":
            backers = cited
        else:
            said = c["sentence"] or c["original"]
            backers = [s for s in cited if s["id"] == c["quote_source"]
                       or check_sentence(said, [s["id"]], ledger,
                                         language=language).outcome == "supported"]  # fmt: skip
            if not backers and c["quote_source"] in by_id:
                backers = [by_id[c["quote_source"]]]
        origins = len({s.get("origin_group", s["id"]) for s in backers})
        out.append(
            Citation(**{**c, "origins": origins, "published": [s["published"] for s in cited]})
        )
    return out


JUDGE_SAID = {"supported": "stated by [{n}]", "other_source": "stated by [{n}], not the one cited",
              "unsupported": "stated by no source"}  # fmt: skip


def overruled_line(c: Citation, d: Dispute) -> str:
    """One line on a verdict of the judge (its dispute ``d``) the report did not go with."""
    said = JUDGE_SAID[d["judge"]].format(n=d["judge_source"])
    asked = "; asked again: " + ", ".join(f"{o['answer']} ({o['model']} model)"
                                          for o in d["asked_again"]) if d["asked_again"] else ""  # fmt: skip
    return f"- “{c['original']}”: the judge said {said}; code found {d['found']}{asked}"


def appendix(citations: list[Citation]) -> str:
    """The report's account of the check: what was removed, left unchecked or overruled, and why."""
    removed = [c for c in citations if c["verdict"] == "removed"]
    open_ = [c for c in citations if c["verdict"] == "unchecked"]
    overruled = [(c, d) for c in citations if (d := c.get("dispute")) and d["overruled"]]
    if not removed and not open_ and not overruled:
        return ""
    lines = ["## Citation check", "", f"Cited sentences: {summary_line(citations)}.", ""]
    if removed:
        lines += ["Removed, because no source read for this report states them:", ""]
        lines += [f"- “{c['original']}” ({c['reason']})" for c in removed]
        lines.append("")
    if open_:
        lines += ["Left in the report but not checked (treat them with caution):", ""]
        lines += [f"- “{c['original']}” ({c['reason']})" for c in open_]
        lines.append("")
    if overruled:
        lines += ["Verdicts of the judge model that the evidence overruled:", ""]
        lines += [overruled_line(c, d) for c, d in overruled]
    return "\n".join(lines).rstrip()


async def finish_report(
    state: ResearchState, runtime: Runtime[Context], *, claims: PageClaims | None = None
) -> dict[str, Any]:
    """Compose the final report and the ``citations`` list."""
    ctx = resolve(runtime)
    if claims is not None:  # the run's page claims are no longer needed
        claims.forget(state.get("run_id", ""))
    checks = state["checks"] if ctx.check_citations else unchecked(state)
    citations = [citation_of(c) for c in checks]
    allowed = {s["url"] for s in state["sources"]}  # links come from the ledger only
    citations = [
        Citation(**{**c, "sentence": strip_links(c["sentence"], allowed)[0]}) for c in citations
    ]
    changes: dict[SentenceKey, str | None] = {}
    for check, cite in zip(checks, citations, strict=True):
        if cite["sentence"] != check["sentence"]:
            changes[(check["unit"], check["index"])] = cite["sentence"] or None
    verdicts = {(c["unit"], c["index"]): c["status"] for c in checks}
    kept, removals, dropped = settle(state["draft"], state["language"],
                                     state.get("disagreements_found") or [], verdicts,
                                     checked=ctx.check_citations)  # fmt: skip
    changes.update(removals)  # a disagreement goes whole, whatever its sides' own verdicts
    ledger = ledger_evidence(state["sources"], state["pages"])
    citations = weighed([c for check, c in zip(checks, citations, strict=True)
                         if (check["unit"], check["index"]) not in removals
                         or c["verdict"] == "removed"], state["sources"], ledger,
                        language_code(state["language"]))  # fmt: skip
    body = edit(state["draft"], state["language"], changes)
    # "ok" promises a report citing a page read: judged on the checked text, before the closing
    # section of open gaps (the model's words) is added.
    reportable = is_report(body, state["sources"])
    if gaps := open_gaps_section(state.get("open_gaps") or [], state["language"]):
        body = f"{body.rstrip()}\n\n{gaps}"
    # Links come from the ledger only (References): one a page talked the writer into goes.
    body, links = strip_links(body, allowed)
    if budget_reached(state):
        body = f"{BUDGET_NOTE.format(budget=ctx.token_budget, sources=len(state['sources']))}\n\n{body}"
    what_changed = appendix(citations)
    parts = [body, render_references(state["sources"]), what_changed]
    provenance: list[Provenance] = [
        note("finish_report", c["original"][:200], "removed", c["reason"])
        for c in citations
        if c["verdict"] == "removed"
    ]
    provenance += [note("finish_report", url, "removed", LINK_REMOVED) for url in links]
    provenance += [note("finish_report", d["about"], "weighed", f"disagreement left out: {why}")
                   for d, why in dropped]  # fmt: skip
    provenance += cached_calls_note("finish_report", state.get("usage", []))
    line = summary_line(citations)
    emit(runtime, "finish_report", "finished", citations=line)
    if not reportable:
        reason = (
            "the citation check removed every cited sentence: no page read states them"
            if any(c["verdict"] == "removed" for c in citations)
            else "the report's writer cited none of the pages read"
        )
        result = insufficient_result(state, reason)
        if what_changed:
            result["report"] += f"\n{what_changed}\n"
        return answered({**result, "citations": citations, "provenance": provenance})
    return answered({
        "report": "\n\n".join(p for p in parts if p) + "\n",
        "citations": citations,
        "disagreements": kept,
        "status": "ok",
        "reason": "",
        "provenance": provenance,
    })  # fmt: skip
