import re
from typing import Any, cast

import pytest
from langgraph.errors import NodeError
from langgraph.types import Send

from deskresearch.config.context import Context
from deskresearch.errors import ModelCallError, SearchError
from deskresearch.graph import route_after_check, route_after_settle
from deskresearch.grounding.ledger import ledger_evidence
from deskresearch.grounding.lexical import Evidence
from deskresearch.nodes.check_citations import (
    JUDGE_RESERVE,
    Judgement,
    Judgements,
    check_citations,
    judge_citations,
    judge_failed,
    judge_tasks,
    named_quote,
    verified,
)
from deskresearch.nodes.finish_report import finish_report
from deskresearch.nodes.repair_report import Fix, Fixes, confirmed, repair_failed, repair_report
from deskresearch.nodes.settle_citations import settle_citations
from deskresearch.prompts import judge_citations as judge_prompt
from deskresearch.prompts import repair_report as repair_prompt
from deskresearch.records import Source
from deskresearch.services.model.tokens import TiktokenCounter, count_tokens
from deskresearch.services.model.usage import prompt_text
from deskresearch.state import SentenceCheck
from tests.support.fakes import ScriptedChat, runtime

pytestmark = pytest.mark.anyio

TEXTS = {
    1: "Lead-acid batteries are the most recycled consumer product. About 99 percent of their "
    "lead is recovered and used again in new batteries.",
    2: "Only about 5 percent of lithium-ion batteries are recycled today, the agency says. "
    "Hydrometallurgy recovers cobalt and nickel from the black mass.",
    3: "Rund 5 Prozent der Lithium-Ionen-Akkus werden heute recycelt, sagt das Amt.",
}
QUOTES = {
    1: "About 99 percent of their lead is recovered and used again in new batteries",
    2: "Hydrometallurgy recovers cobalt and nickel from the black mass",
    3: "Rund 5 Prozent der Lithium-Ionen-Akkus werden heute recycelt",
}
CLAIMS = {
    1: "About 99 percent of the lead in lead-acid batteries is recovered.",
    2: "Hydrometallurgy recovers cobalt and nickel from black mass.",
    3: "About 5 percent of lithium-ion batteries are recycled today.",
}
LANGS = {1: "en", 2: "en", 3: "de"}


def source(i: int) -> Source:
    return Source(id=i, url=f"https://e.org/{i}", title=f"T{i}", site="", published="",
                  date_read="2026-01-01", queries=["q"], text_hash=f"h{i}", origin="page",
                  summary=f"- {CLAIMS[i]}", facts=[{"claim": CLAIMS[i], "quote": QUOTES[i]}], round=1)  # fmt: skip


def page(i: int) -> Any:
    return {"text_hash": f"h{i}", "text": TEXTS[i], "language": LANGS[i]}


DRAFT = """# Batteries

## Lead

About 99 percent of the lead in lead-acid batteries is recovered [1]. Lead-acid batteries are \
the most recycled consumer product [1].

## Lithium

- Hydrometallurgy recovers cobalt and nickel from the black mass [1].
- About 5 percent of lithium-ion batteries are recycled today [3].
- About 42 percent of lithium is recovered by smelting [2].

| metric | value |
|---|---|
| lead recovered | 77 percent [1] |
"""


def state(**kw: Any) -> Any:
    return {
        "topic": "t",
        "language": "en-us",
        "draft": DRAFT,
        "sources": [source(1), source(2), source(3)],
        "pages": [page(1), page(2), page(3)],
        "checks": [],
        "usage": [],
        "provenance": [],
        **kw,
    }


async def checked() -> Any:
    return {**state(), **(await check_citations(state(), runtime()))}


async def judged(s: Any, llm: ScriptedChat, size: int = 50) -> Any:
    """Run every judge branch the router would start, then the join, on state ``s``."""
    verdicts = []
    for task in judge_tasks(s, size):
        verdicts += (await judge_citations(task, runtime(), llm=llm, tokens=TiktokenCounter()))[
            "judged"
        ]
    return {**s, **settle_citations(cast(Any, {**s, "judged": verdicts}))}


def status_of(s: Any) -> list[tuple[str, str]]:
    return [(c["sentence"][:20], c["status"]) for c in s["checks"]]


async def test_code_decides_words_and_figures_and_leaves_the_rest_pending() -> None:
    s = await checked()
    assert status_of(s) == [
        ("About 99 percent of ", "supported"),
        ("Lead-acid batteries ", "supported"),
        ("Hydrometallurgy reco", "pending"),  # wrong source, no figure: the judge decides
        ("About 5 percent of l", "pending"),  # a German source: the judge decides
        ("About 42 percent of ", "unsupported"),  # 42 is in no source: fabricated
        ("| lead recovered | 7", "unsupported"),
    ]
    assert [c["decided_by"] for c in s["checks"]][:2] == ["lexical", "lexical"]
    [send] = cast(list[Send], route_after_check(s))  # two pending sentences, batches of 3: one
    assert send.node == "judge_citations"
    assert [c["sentence"][:5] for c in send.arg["checks"]] == ["Hydro", "About"]
    assert [src["id"] for src in send.arg["sources"]] == [1, 2, 3], "cited and candidates"


async def test_the_judge_is_believed_only_with_a_fact_the_source_it_names_has() -> None:
    s = await checked()
    verdicts = Judgements(
        judgements=[
            Judgement(sentence=1, verdict="other_source", source=2, fact=1),
            Judgement(sentence=2, verdict="supported", source=3, fact=2),  # source 3 has one
        ]
    )
    llm = ScriptedChat({"judge_citations": [verdicts]})
    after = await judged(s, llm)
    pending = [c for c in after["checks"] if c["sentence"].startswith(("Hydro", "About 5"))]
    assert [(c["status"], c["source"], c["decided_by"]) for c in pending] == [
        ("re-cited", 2, "model"),
        # Source 3 has no fact (2): not believed. But its fact (1) carries the sentence, so it
        # is not turned down either: it is asked again.
        ("disputed", 3, "model"),
    ]
    assert pending[0]["quote"] == QUOTES[2], "the quote of the fact the judge named"
    assert "the judge named fact (2), which source [3] does not have" in pending[1]["reason"]
    dispute = pending[1].get("dispute")
    assert dispute and dispute["judge_quote"] == ""
    assert pending[1]["quote"] == QUOTES[3], "the quote of the fact that carries it"
    prompt = str(llm.calls[0][1][1].content)
    assert "S1: Hydrometallurgy" in prompt and "[2] T2" in prompt, "candidates are shown"
    assert f"- (1) {CLAIMS[2]}" in prompt, "each fact listed with the number the judge names"
    assert route_after_settle(after) == "repair_report"


async def test_a_malformed_judge_answer_leaves_pending_sentences_unchecked() -> None:
    s = await checked()
    after = await judged(s, ScriptedChat({"judge_citations": ["junk"]}))
    assert [c["status"] for c in after["checks"]].count("unchecked") == 2
    out = await finish_report(after, runtime())
    unchecked = [c for c in out["citations"] if c["verdict"] == "unchecked"]
    assert len(unchecked) == 2 and all(c["decided_by"] == "none" for c in unchecked)
    assert "Hydrometallurgy recovers" in out["report"], "unchecked sentences stay"
    assert "not checked" in out["report"]


async def test_a_judge_that_fails_for_good_leaves_its_sentences_unchecked_and_goes_on() -> None:
    s = await checked()
    [task] = judge_tasks(s, 50)
    command = judge_failed(
        task, NodeError("judge_citations", ModelCallError("503", transient=True))
    )
    assert command.goto == "settle_citations", "the branch joins the others at the settle step"
    after: Any = {**s, **settle_citations(cast(Any, {**s, **cast(Any, command.update)}))}
    assert [c["status"] for c in after["checks"]] == [
        "supported", "supported", "unchecked", "unchecked", "unsupported", "unsupported"
    ]  # fmt: skip
    assert "the judge call failed (503)" in after["checks"][2]["reason"]
    assert route_after_settle(after) == "repair_report"
    with pytest.raises(ValueError):
        judge_failed(task, NodeError("judge_citations", ValueError("a bug")))


async def test_one_rewrite_call_for_the_unsupported_and_only_confirmed_rewrites_stay() -> None:
    s = await checked()
    s["checks"] = [
        c if c["status"] != "pending" else {**c, "status": "supported"} for c in s["checks"]
    ]
    fixes = Fixes(
        fixes=[
            Fix(
                sentence=1,
                replacement="Hydrometallurgy recovers cobalt and nickel from the black mass [2].",
                source=2,
                quote=QUOTES[2],
            )
        ]  # fmt: skip
    )
    llm = ScriptedChat({"repair_report": [fixes]})
    after: Any = {**s, **(await repair_report(s, runtime(), llm=llm, tokens=TiktokenCounter()))}
    assert len(llm.calls) == 1, "one rewrite call"
    prompt = str(llm.calls[0][1][1].content)
    assert "About 42 percent" in prompt and "| lead recovered" not in prompt, (
        "rows are not rewritten"
    )
    assert "[3] T3" not in prompt, "only the evidence the flagged paragraphs cite"
    final = {c["sentence"][:16]: c["status"] for c in after["checks"]}
    assert final["About 42 percent"] == "rewritten"
    assert final["| lead recovered"] == "removed"
    out = await finish_report(after, runtime())
    body, appendix = out["report"].split("## References")
    assert "About 42 percent" not in body and "77 percent" not in body
    assert "| metric |" not in body, "a table left without rows goes"
    assert "from the black mass [2]." in body and body.count("## Lithium") == 1
    assert "## Citation check" in appendix and "77 percent" in appendix, "removed, and why"
    assert [p["outcome"] for p in out["provenance"]].count("removed") == 1


async def test_a_rewrite_with_a_figure_its_source_lacks_is_removed() -> None:
    s = await checked()
    fixes = Fixes(
        fixes=[
            Fix(
                sentence=1,
                replacement="About 43 percent is recovered [2].",
                source=2,
                quote=QUOTES[2],
            )
        ]
    )
    after: Any = {
        **s,
        **(
            await repair_report(
                s, runtime(), llm=ScriptedChat({"repair_report": [fixes]}), tokens=TiktokenCounter()
            )
        ),
    }
    [fixed] = [c for c in after["checks"] if c["sentence"].startswith("About 42")]
    assert fixed["status"] == "removed" and "43" in fixed["reason"]


def test_a_rewrite_call_that_fails_for_good_removes_the_unsupported() -> None:
    s = cast(
        Any,
        {
            "checks": [
                {"status": "unsupported", "reason": "r"},
                {"status": "supported", "reason": ""},
            ]
        },
    )
    command = repair_failed(s, NodeError("repair_report", SearchError("x", "q", "down")))
    assert [c["status"] for c in command.update["checks"]] == ["removed", "supported"]  # type: ignore[index]
    assert command.goto == "finish_report"


VAT = Evidence(
    id=5,
    text="Die Bahn plant bis 2030 neue Strecken. Geplant ist eine Absenkung der Mehrwertsteuer "
    "auf Tickets von 19 auf sieben Prozent.",
    quotes=("Geplant ist eine Absenkung der Mehrwertsteuer auf Tickets von 19 auf sieben Prozent",),
    claims=("VAT on rail tickets is to fall from 19 to seven percent.",),
    language="de",
)


def pending(sentence: str, cites: list[int]) -> SentenceCheck:
    return SentenceCheck(unit=0, index=0, sentence=sentence, cites=cites, section="",
                         status="pending", source=None, quote="", decided_by="none",
                         reason="another language than its source", candidates=[],
                         replacement="")  # fmt: skip


def test_the_judge_is_believed_on_figures_only_as_far_as_its_quotes_give_them() -> None:
    ledger = {**ledger_evidence([source(2)], [page(2)]), 5: VAT}
    said = Judgement(sentence=1, verdict="supported", source=2, fact=1)
    # 5 is on source 2's page, but in another sentence than the quote that states this one.
    check = pending("Hydrometallurgy recovers 5 percent of the cobalt in the black mass [2].", [2])
    assert verified(check, said, ledger)["status"] == "unsupported"
    # A translation may give in digits what the quote writes out ("sieben Prozent").
    vat = Judgement(sentence=1, verdict="supported", source=5, fact=1)
    check = pending("Rail tickets are to be taxed at 7 percent instead of 19 percent [5].", [5])
    assert verified(check, vat, ledger)["status"] == "supported"
    check = pending("Rail tickets are to be taxed at 2030 rates of 7 percent [5].", [5])
    assert verified(check, vat, ledger)["status"] == "unsupported", "2030 is not in the quote"


def test_a_rewrite_may_give_in_digits_what_its_quote_writes_out() -> None:
    check = {
        **pending("Rail tickets will be taxed at 5 percent [5].", [5]),
        "status": "unsupported",
    }
    fix = Fix(sentence=1, replacement="Rail tickets are to be taxed at 7 percent instead of 19 [5].",
              source=5, quote=VAT.quotes[0])  # fmt: skip
    done = confirmed(cast(Any, check), fix, {5}, {5: VAT}, language="en")
    assert done["status"] == "rewritten", done["reason"]


def two_facts() -> dict[int, Evidence]:
    """Source 2 with two facts: the judge's numbers (1) and (2) name different quotes."""
    second = {"claim": "Only about 5 percent of lithium-ion batteries are recycled.",
              "quote": "Only about 5 percent of lithium-ion batteries are recycled today"}  # fmt: skip
    two = {**source(2), "facts": [*source(2)["facts"], second]}
    return ledger_evidence([source(1), cast(Source, two)], [page(1), page(2)])


@pytest.mark.parametrize("fact", [None, 0, -1, 3, 99])
def test_a_fact_number_the_source_does_not_have_backs_nothing(fact: int | None) -> None:
    ledger = two_facts()
    said = Judgement(sentence=1, verdict="supported", source=2, fact=fact)
    assert named_quote(said, ledger) == ""
    check = pending(
        "Hydrometallurgy recovers gold from old televisions and mobile phones [2].", [2]
    )
    out = verified(check, said, ledger)
    assert (out["status"], out["decided_by"]) == ("unsupported", "model")
    named = "no fact" if fact is None else f"fact ({fact}), which source [2] does not have"
    assert named in out["reason"] and "source [2]" in out["reason"]
    d = out.get("dispute")
    assert d and d["settled_by"] == "code" and d["judge_quote"] == "", "overruled by code"


def test_each_fact_number_names_its_own_quote_and_unsupported_names_none() -> None:
    ledger = two_facts()
    first, second = ledger[2].quotes
    assert (
        named_quote(Judgement(sentence=1, verdict="supported", source=2, fact=1), ledger) == first
    )
    assert (
        named_quote(Judgement(sentence=1, verdict="supported", source=2, fact=2), ledger) == second
    )
    assert named_quote(Judgement(sentence=1, verdict="supported", source=7, fact=1), ledger) == ""
    rate = pending("Only about 5 percent of lithium-ion batteries are recycled today [2].", [2])
    said = verified(rate, Judgement(sentence=1, verdict="supported", source=2, fact=2), ledger)
    assert (said["status"], said["quote"]) == ("supported", second)
    none = verified(rate, Judgement(sentence=1, verdict="unsupported", source=2, fact=2), ledger)
    d = none.get("dispute")  # the facts carry it: asked again; the number it gave counts nil
    assert none["status"] == "disputed" and d and d["judge_quote"] == ""


@pytest.mark.parametrize(
    ("given", "fact"),
    [
        ("(2)", 2),
        (" 2 ", 2),
        (2.0, 2),
        (2, 2),
        (True, None),
        ("two", None),
        (2.5, None),
        (None, None),
    ],
)
def test_a_fact_number_is_read_as_listed_and_anything_else_names_none(
    given: Any, fact: Any
) -> None:
    assert Judgement(sentence=1, verdict="supported", source=2, fact=given).fact == fact


def test_the_judge_prompt_numbers_each_sources_facts_and_the_rewrite_prompt_does_not() -> None:
    two = {**source(2), "facts": [*source(2)["facts"], {"claim": "A second claim.", "quote": "q"}]}
    judged_prompt = judge_prompt.format_evidence(
        {1: source(1), 2: cast(Source, two)}, numbered=True
    )
    assert judged_prompt.count("- (1) ") == 2 and judged_prompt.count("- (2) ") == 1
    assert "- (2) A second claim." in judged_prompt
    rewrite = repair_prompt.render(sentences=[(1, "X [2].", "why")], paragraphs=["X [2]."],
                                   sources={2: cast(Source, two)}, language="en")  # fmt: skip
    assert "- A second claim." in str(rewrite[1].content) and "- (1) " not in str(
        rewrite[1].content
    )


async def test_a_judge_prompt_on_a_local_window_keeps_the_deciding_facts_numbered_as_listed() -> (
    None
):
    """Listed facts are numbered 1, 2, ... as listed (a model that counts them and one that
    reads the numbers name the same); code maps the number back to the fact in the source."""
    s = await checked()
    filler = [{"claim": f"Filler {k}: the town council met on Tuesday about parks and roads.",
               "quote": f"Filler {k}: the town council met on Tuesday about parks."}
              for k in range(60)]  # fmt: skip
    big: Any = {**s, "sources": [{**x, "facts": [*filler, *x["facts"]]} for x in s["sources"]]}
    [task] = judge_tasks(big, 50)
    assert [c["sentence"][:7] for c in task["checks"]] == ["Hydrome", "About 5"]
    ctx = Context(judge_model="ollama:llama3.1")
    probe = ScriptedChat({"judge_citations": [Judgements(judgements=[])]})
    await judge_citations(task, runtime(ctx), llm=probe, tokens=TiktokenCounter())
    sent = prompt_text(probe.calls[0][1])
    assert count_tokens(sent) <= 4096 - JUDGE_RESERVE
    assert "other facts of this source left out to fit the window" in sent
    assert "Filler 59:" not in sent, "the facts sharing no word with the sentences go first"
    listed = re.search(rf"- \((\d+)\) {re.escape(CLAIMS[3])}", sent)
    assert listed, "the deciding fact (the source's 61st) is listed"
    shown = int(listed.group(1))
    assert 1 < shown < 61 and f"({shown + 1}) " not in sent.split("[3] ", 1)[1], "gaps closed"
    verdicts = Judgements(judgements=[
        Judgement(sentence=1, verdict="other_source", source=2, fact=60),  # past the listed
        Judgement(sentence=2, verdict="supported", source=3, fact=shown),
    ])  # fmt: skip
    llm = ScriptedChat({"judge_citations": [verdicts]})
    out = await judge_citations(task, runtime(ctx), llm=llm, tokens=TiktokenCounter())
    guessed, right = out["judged"]
    assert (right["status"], right["source"], right["quote"]) == ("supported", 3, QUOTES[3])
    assert "which its prompt did not list for source [2]" in guessed["reason"]
    assert guessed["status"] != "re-cited", "a number past the listed facts is not believed"
    [note] = out["provenance"]
    assert note["stage"] == "judge_citations" and "left out of the prompt" in note["reason"]
    assert "sharing most words with the sentences" in note["reason"]
    hosted = ScriptedChat({"judge_citations": [verdicts]})
    out = await judge_citations(task, runtime(), llm=hosted, tokens=TiktokenCounter())
    assert "left out" not in prompt_text(hosted.calls[0][1]) and out["provenance"] == []
    assert f"(61) {CLAIMS[3]}" in prompt_text(hosted.calls[0][1]), "whole: the source's numbers"


async def test_the_rewrite_on_a_local_window_keeps_the_facts_of_its_sentences() -> None:
    s = await checked()
    s["checks"] = [
        c if c["status"] != "pending" else {**c, "status": "supported"} for c in s["checks"]
    ]
    filler = [{"claim": f"Filler {k}: the town council met on Tuesday about parks and roads.",
               "quote": f"Filler {k}: the town council met on Tuesday about parks."}
              for k in range(90)]  # fmt: skip
    s["sources"] = [{**x, "facts": [*filler, *x["facts"]]} for x in s["sources"]]
    llm = ScriptedChat({"repair_report": [Fixes(fixes=[])]})
    ctx = Context(judge_model="ollama:llama3.1")
    out = await repair_report(s, runtime(ctx), llm=llm, tokens=TiktokenCounter())
    sent = prompt_text(llm.calls[0][1])
    assert count_tokens(sent) <= 4096 - 1024
    assert CLAIMS[2] in sent and "other facts of this source left out" in sent
    [note] = out["provenance"]
    assert note["stage"] == "repair_report" and "left out of the prompt" in note["reason"]
