"""Weighing the evidence through the whole graph: copies count once, disagreements are shown.

The graph runs against the loopback web serving the evidence cases' fictional pages
(bench/evidence_cases.json) among the fixture pages. The fake model's weighing answer follows
a generic rule (two facts are about one thing when their words, figures aside, mostly agree);
rounding, units, dates and what a disagreement needs are the product's code.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from deskresearch.mcp.result import compact
from deskresearch.report.html import render_html
from tests.support.evidence import Case, evidence_web, load_cases, score
from tests.support.fake_model import REPORT, FakeModel, stage_of
from tests.support.loopback import FakeWeb, serve
from tests.support.runs import context_for, graph_for

pytestmark = pytest.mark.anyio
CASES = {c.id: c for c in load_cases()}


async def research(
    c: Case, model: FakeModel | None = None, **ctx: Any
) -> tuple[dict[str, Any], FakeWeb]:
    web = evidence_web([c], **({"model": model} if model else {}))
    ctx.setdefault("url_per_query", 6)  # every written page is read: this tests weighing
    with serve(web):
        out = await graph_for(web).ainvoke({"topic": c.question, "language": c.language},
                                           context=context_for(web, **ctx))  # fmt: skip
    return out, web


def weighing_calls(web: FakeWeb) -> list[dict[str, Any]]:
    return [r for r in web.model.requests if stage_of(r) == "Comparisons"]


def by_path(out: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {re.sub(r"^https?://[^/]+", "", s["url"]): s for s in out["sources"]}


async def test_copies_of_one_release_count_once_and_nothing_to_weigh_costs_no_call() -> None:
    c = CASES["en-copies"]
    out, web = await research(c)
    assert score(c, out).copies == [True]
    src = by_path(out)
    press, reprint, digest = (src[p] for p in c.expect["copies"][0])
    assert press["copy_of"] is None and reprint["copy_of"] == digest["copy_of"] == press["id"]
    assert "of the text of source" in reprint["copy_reason"]
    assert "of its text is in source" in digest["copy_reason"]
    # Each cited sentence counts origins, not pages; the copies are noted in provenance.
    group = {s["id"] for s in (press, reprint, digest)}
    cited = [ct for ct in out["citations"] if set(ct["sources"]) & group]
    assert cited and all(ct["origins"] == 1 for ct in cited)
    assert all(ct["published"] == [src_["published"] for src_ in out["sources"]
                                   if src_["id"] in ct["sources"]] for ct in cited)  # fmt: skip
    weighed = [p for p in out["provenance"] if p["outcome"] == "weighed"]
    assert len(weighed) == 2 and all("counts once" in p["reason"] for p in weighed)
    # The courier agrees ("about 1,450"): no pair worth asking about, so no weighing call.
    assert out["disagreements"] == [] and out["changes"] == [] and weighing_calls(web) == []


async def test_a_disagreement_is_shown_with_both_sides_cited_and_weighed_by_origin() -> None:
    c = CASES["en-attribution"]
    out, web = await research(c)
    assert out["status"] == "ok" and score(c, out).surfaced == [True]
    [d] = out["disagreements"]
    src = by_path(out)
    press, trade, union = (src[f"/ev/lindqvist/{n}.html"] for n in ("press", "foodtrade", "union"))
    assert trade["copy_of"] == press["id"] and "as its source" in trade["copy_reason"]
    sides = {s["value"]: s for s in d["sides"]}
    assert set(sides) == {"230", "260"} and d["checked"] and d["kind"] == "figure"
    assert set(sides["230"]["sources"]) == {press["id"], trade["id"]}
    assert sides["230"]["origins"] == 1 and sides["260"]["sources"] == [union["id"]]
    assert sides["230"]["published"] == [press["published"], trade["published"]]
    # The report's closing section states each side, cited, and the check supported both.
    section = out["report"].split("## Where the sources disagree", 1)[1].split("## References")[0]
    for s in d["sides"]:
        line = next(ln for ln in section.splitlines() if s["value"] in ln)
        assert all(f"[{i}]" in line for i in s["cites"])
        assert any(ct["sentence"] in line and ct["verdict"] == "supported"
                   for ct in out["citations"])  # fmt: skip
    # One weighing call, on the paired facts only: never whole pages.
    [call] = weighing_calls(web)
    prompt = "\n".join(str(m["content"]) for m in call["messages"])
    assert "230 workers" in prompt and "260 workers" in prompt and "rye bread" not in prompt
    # Shown where users look: the HTML panel and the MCP result.
    html = render_html(out, topic=c.question)
    panel = html.split('<section id="weighing">', 1)[1].split("</section>", 1)[0]
    assert panel.count('class="side"') == 2 and "1 independent origin" in panel
    assert f'href="#ref-{trade["id"]}"' in panel
    mcp = compact(out, thread_id="t", full_result="x")
    assert [sorted(s.value for s in m.sides) for m in mcp.disagreements] == [["230", "260"]]
    refs = {r.id: r for r in mcp.sources}
    assert refs[trade["id"]].copy_of == press["id"] and refs[trade["id"]].published
    assert refs[trade["id"]].origin_group == refs[press["id"]].origin_group


async def test_the_newest_figure_is_presented_as_current_and_the_older_dated() -> None:
    c = CASES["en-change"]
    out, _ = await research(c)
    assert score(c, out).current == [True] and out["disagreements"] == []
    [ch] = out["changes"]
    assert (ch["current"]["value"], ch["current"]["as_of"]) == ("210", "2025")
    assert [(s["value"], s["as_of"]) for s in ch["earlier"]] == [("140", "2018")]
    dated = [ct for ct in out["citations"] if "In 2018" in ct["sentence"]]
    assert dated and dated[0]["verdict"] == "supported"  # its page's date backs "in 2018"


async def test_rounding_units_and_another_scope_are_no_disagreement() -> None:
    c = CASES["en-controls"]
    out, web = await research(c)
    assert out["status"] == "ok" and out["disagreements"] == [] and out["changes"] == []
    # Rounding and units never reach the model as a pair; the plant's staff and the company's
    # were asked about, and are not the same thing.
    [call] = weighing_calls(web)
    prompt = "\n".join(str(m["content"]) for m in call["messages"])
    claims = dict(re.findall(r"^F(\d+) \(source \[\d+\], published [^)]*\): (.*)$", prompt, re.M))
    asked = [
        (claims[a], claims[b]) for a, b in re.findall(r"^P\d+: F(\d+) and F(\d+)$", prompt, re.M)
    ]
    assert any("5,400" in a + b and "85" in a + b for a, b in asked)
    for word in ("hectares", "megawatt"):  # the rounded and the converted figures agree
        assert not any(word in a and word in b for a, b in asked), asked


class MisreadingModel(FakeModel):
    """Summarises the union's page with a figure its quote does not carry (275 for 260)."""

    def _answer(self, stage: str, user: str, fault: str) -> Any:
        answer = super()._answer(stage, user, fault)
        if stage == "ChunkSummary" and "260 workers" in user and isinstance(answer, dict):
            for f in answer["facts"]:
                f["claim"] = f["claim"].replace("260", "275")
        return answer


async def test_a_disagreement_the_check_cannot_support_on_both_sides_is_dropped() -> None:
    c = CASES["en-attribution"]
    out, web = await research(c, model=MisreadingModel())
    assert out["status"] == "ok" and out["disagreements"] == []
    assert "Where the sources disagree" not in out["report"]
    left_out = [p for p in out["provenance"] if "disagreement left out" in p["reason"]]
    assert len(left_out) == 1 and "not supported" in left_out[0]["reason"]
    assert len(weighing_calls(web)) == 1  # it was found, then failed the check


class OverstatingWriter(FakeModel):
    """A writer that counts a release and its reprint as two confirmations."""

    def _answer(self, stage: str, user: str, fault: str) -> Any:
        answer = super()._answer(stage, user, fault)
        copy = re.search(r"^\[(\d+)\] .*\n  \(a copy of source \[(\d+)\]", user, re.MULTILINE)
        if stage == REPORT and copy and isinstance(answer, str):
            ids = f"[{copy.group(2)}][{copy.group(1)}]"
            answer += f"\n\nSeveral sources confirm that the bakery closes in June {ids}."
        return answer


async def test_one_origin_presented_as_several_does_not_stand() -> None:
    out, _ = await research(CASES["en-attribution"], model=OverstatingWriter())
    [ct] = [ct for ct in out["citations"] if "Several sources" in ct["original"]]
    assert ct["verdict"] in ("rewritten", "removed") and "one origin as several" in ct["reason"]
    body = out["report"].split("## Citation check")[0]  # the check's account quotes it, as removed
    assert "Several sources confirm" not in body


async def test_with_weighing_off_copies_are_still_grouped_and_nothing_is_asked() -> None:
    c = CASES["en-attribution"]
    out, web = await research(c, weigh_evidence=False)
    assert score(c, out).copies == [True]
    assert out["disagreements"] == [] and weighing_calls(web) == []
    assert "Where the sources disagree" not in out["report"]


async def test_a_weighing_call_that_fails_for_good_costs_the_weighing_not_the_report() -> None:
    model = FakeModel()
    model.fail("Comparisons", *["http_500"] * 12)
    out, _ = await research(CASES["en-figure"], model=model, model_attempts=1)
    assert out["status"] == "ok" and out["disagreements"] == []
    failed = [p for p in out["provenance"] if p["stage"] == "weigh_evidence"]
    assert (
        failed and failed[-1]["outcome"] == "failed" and "nothing weighed" in failed[-1]["reason"]
    )
