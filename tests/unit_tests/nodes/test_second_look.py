"""Disputed verdicts: asked again in the rewrite call, then by the report model; the record."""

from typing import Any, cast

import pytest
from langgraph.errors import NodeError

from deskresearch.config.context import Context
from deskresearch.errors import ModelCallError
from deskresearch.graph import route_after_repair, route_after_settle
from deskresearch.nodes.check_citations import Judgement, Judgements
from deskresearch.nodes.finish_report import finish_report
from deskresearch.nodes.recheck_citations import (
    ClaimCheck,
    ClaimChecks,
    recheck_citations,
    recheck_failed,
)
from deskresearch.nodes.repair_report import Fix, Fixes, repair_failed, repair_report
from deskresearch.report.contract import schema
from deskresearch.services.model.tokens import TiktokenCounter
from tests.support.fakes import ScriptedChat, runtime
from tests.unit_tests.nodes.test_check_citations import QUOTES, checked, judged

pytestmark = pytest.mark.anyio

HYDRO, RATE = "Hydrometallurgy recovers", "About 5 percent of lith"
WRONG = Judgements(
    judgements=[  # both wrong: source 1 does not say the first; source 3 says the second
        Judgement(sentence=1, verdict="supported", source=1, fact=1),
        Judgement(sentence=2, verdict="unsupported"),
    ]
)


async def disputed() -> Any:
    """The test draft after a judge that got both its sentences wrong."""
    return await judged(await checked(), ScriptedChat({"judge_citations": [WRONG]}))


def by_start(checks: Any, start: str) -> Any:
    [found] = [c for c in checks if c["sentence"].startswith(start)]
    return found


async def repaired(s: Any, *fixes: Fix) -> tuple[Any, ScriptedChat]:
    llm = ScriptedChat({"repair_report": [Fixes(fixes=list(fixes))]})
    return {**s, **(await repair_report(s, runtime(), llm=llm, tokens=TiktokenCounter()))}, llm


async def test_both_wrong_verdicts_are_disputed_and_sent_to_the_one_rewrite_call() -> None:
    s = await disputed()
    assert [by_start(s["checks"], k)["status"] for k in (HYDRO, RATE)] == ["disputed"] * 2
    assert route_after_settle(s) == "repair_report"
    after, llm = await repaired(
        s,
        Fix(
            sentence=1,
            replacement="Hydrometallurgy recovers cobalt and nickel from the black mass [2].",
            source=2,
            quote=QUOTES[2],
        ),  # fmt: skip
        Fix(sentence=2, replacement="", source=3, quote=QUOTES[3], keep=True),
        Fix(sentence=3, replacement="", source=2, quote=QUOTES[2], keep=True),
    )
    [(_, messages)] = llm.calls
    prompt = str(messages[1].content)
    assert "S1 (check first): Hydrometallurgy" in prompt and "S2 (check first): About 5" in prompt
    assert "S3: About 42 percent" in prompt and "figure(s) 42" in prompt
    assert "no fact of" not in prompt and "carry it" not in prompt, "the first answer unsaid"
    hydro, rate = by_start(after["checks"], HYDRO), by_start(after["checks"], RATE)
    assert (hydro["status"], hydro["source"]) == ("rewritten", 2)
    assert hydro["dispute"]["asked_again"] == [
        {"stage": "repair_report", "model": "judge", "answer": "not stated"}
    ]
    assert hydro["dispute"]["settled_by"] == "asked_again" and hydro["dispute"]["overruled"]
    assert (rate["status"], rate["source"], rate["quote"]) == ("supported", 3, QUOTES[3])
    assert rate["dispute"]["overruled"] and rate["dispute"]["judge"] == "unsupported"
    fabricated = by_start(after["checks"], "About 42")
    assert fabricated["status"] == "removed", "an undisputed 'unsupported' is never kept"
    assert route_after_repair(after) == "finish_report", "two of three agree: settled"

    out = await finish_report(after, runtime())
    rate = next(c for c in out["citations"] if c["original"].startswith(RATE))
    assert rate["verdict"] == "supported" and rate["dispute"]["overruled"]
    lexical = out["citations"][0]
    assert lexical["decided_by"] == "lexical" and lexical.get("dispute") is None, "no dispute"
    assert "About 5 percent of lithium-ion batteries are recycled today [3]" in out["report"]
    appendix = out["report"].split("## Citation check", 1)[1]
    assert "Verdicts of the judge model that the evidence overruled" in appendix
    assert "About 5 percent" in appendix and "the judge said stated by no source" in appendix
    keys = schema()["$defs"]["citation"]["properties"]
    assert "dispute" in keys and set(rate["dispute"]) == set(
        schema()["$defs"]["dispute"]["properties"]
    )


async def test_a_second_look_that_settles_nothing_leaves_the_sentence_unchecked() -> None:
    s = await disputed()
    after, _ = await repaired(s, Fix(sentence=2, replacement="", source=3, quote="not there",
                                     keep=True))  # fmt: skip
    hydro, rate = by_start(after["checks"], HYDRO), by_start(after["checks"], RATE)
    assert hydro["status"] == "unchecked" and "gave no answer" in hydro["reason"]
    assert rate["status"] == "unchecked" and "quote given is not in source [3]" in rate["reason"]
    assert {c["dispute"]["settled_by"] for c in (hydro, rate)} == {"unsettled"}
    out = await finish_report(after, runtime())
    left = [c["original"] for c in out["citations"] if c["verdict"] == "unchecked"]
    assert len(left) == 2 and all(text in out["report"] for text in left), "in, as written"


async def test_a_failed_rewrite_call_removes_the_unsupported_and_leaves_disputes_unchecked() -> (
    None
):
    s = await disputed()
    command = repair_failed(s, NodeError("repair_report", ModelCallError("503")))
    checks = cast(Any, command.update)["checks"]
    assert by_start(checks, "About 42")["status"] == "removed"
    assert [by_start(checks, k)["status"] for k in (HYDRO, RATE)] == ["unchecked"] * 2


async def outvoted() -> Any:
    """The wrong 'unsupported' upheld by the second look: only the judge model said so."""
    s = await disputed()
    after, _ = await repaired(
        s,
        Fix(
            sentence=2,
            replacement="Lithium-ion batteries are rarely recycled [3].",
            source=3,
            quote=QUOTES[3],
        ),  # fmt: skip
    )
    rate = by_start(after["checks"], RATE)
    assert rate["status"] == "rewritten" and not rate["dispute"]["overruled"]
    return after


async def test_what_only_the_judge_model_upholds_goes_to_the_report_model_claim_by_claim() -> None:
    after = await outvoted()
    assert route_after_repair(after) == "recheck_citations"
    llm = ScriptedChat({"recheck_citations": [ClaimChecks(checks=[
        ClaimCheck(sentence=1, claim=1, stated=True)])]})  # fmt: skip
    done: Any = {**after, **(await recheck_citations(after, runtime(), llm=llm))}
    [(stage, messages)] = llm.calls
    prompt = str(messages[1].content)
    assert stage == "recheck_citations"
    assert "S1: About 5 percent" in prompt and "C1: About 5 percent" in prompt
    assert f'[3] quote: "{QUOTES[3]}"' in prompt, "the passage code found, with what it says"
    rate = by_start(done["checks"], RATE)
    assert rate["status"] == "unchecked" and rate["replacement"] == ""
    assert [o["model"] for o in rate["dispute"]["asked_again"]] == ["judge", "report"]
    assert rate["dispute"]["settled_by"] == "unsettled"
    assert route_after_repair(done) == "finish_report", "asked once"
    out = await finish_report(done, runtime())
    assert "About 5 percent of lithium-ion batteries are recycled today [3]" in out["report"]
    assert "rarely recycled" not in out["report"], "two against two: left as written"


async def test_the_report_model_agreeing_with_the_judge_settles_it() -> None:
    after = await outvoted()
    no = ClaimChecks(checks=[ClaimCheck(sentence=1, claim=1, stated=False)])
    done = await recheck_citations(after, runtime(), llm=ScriptedChat({"recheck_citations": [no]}))
    rate = by_start(done["checks"], RATE)
    assert rate["status"] == "rewritten" and len(rate["dispute"]["asked_again"]) == 2
    silent = ClaimChecks(checks=[])
    done = await recheck_citations(
        after, runtime(), llm=ScriptedChat({"recheck_citations": [silent]})
    )
    rate = by_start(done["checks"], RATE)
    assert rate["status"] == "rewritten" and rate["reason"].endswith(
        "the third look gave no answer"
    )
    command = recheck_failed(after, NodeError("recheck_citations", ModelCallError("503")))
    rate = by_start(cast(Any, command.update)["checks"], RATE)
    assert rate["status"] == "rewritten" and "third look failed (503)" in rate["reason"]
    assert command.goto == "finish_report"


async def test_the_third_look_uses_the_report_model() -> None:
    after = await outvoted()
    seen: list[str] = []

    class Spy(ScriptedChat):
        async def structured(self, messages: Any, schema: Any, *, spec: Any, stage: Any) -> Any:
            seen.append(spec.model)
            return await super().structured(messages, schema, spec=spec, stage=stage)

    ctx = Context(judge_model="small-judge", report_model="big-writer")
    no = ClaimChecks(checks=[ClaimCheck(sentence=1, claim=1, stated=False)])
    await recheck_citations(after, runtime(ctx), llm=Spy({"recheck_citations": [no]}))
    assert seen == ["big-writer"]
