"""The structural defence: whatever a page makes the model write, the report's shape holds.

The page carries an instruction no text filter knows; a compromised fake model obeys it and
writes a foreign URL, a markdown link, an image, an invented citation, a JSON block and its own
references into the report. None of it may add a URL, a reference or a citation to the result.
"""

from __future__ import annotations

import re

import pytest

from deskresearch.grounding.citations import render_references
from tests.support.fake_model import CompromisedModel
from tests.support.loopback import Entry, FakeWeb, serve
from tests.support.runs import context_for, graph_for

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("report_mode", ["single", "sections"])
async def test_a_page_cannot_add_a_url_a_reference_or_a_citation(report_mode: str) -> None:
    web = FakeWeb(model=CompromisedModel(), catalogue=[
        Entry("/pages/ordered.html", "Recycling", "Lithium aus dem Schredder."),
        Entry("/pages/heise.de.lithium.html", "Lithium", "Lithium recycling."),
    ])  # fmt: skip
    with serve(web):
        ctx = context_for(web, url_per_query=2, report_mode=report_mode)
        out = await graph_for(web).ainvoke({"topic": "Lithium recycling"}, context=ctx)
    report = out["report"]
    assert any("EVIL-ORDER" in str(r) for r in web.model.requests), "the model did see the order"
    assert out["status"] == "ok" and out["sources"]
    assert "evil.example" not in report, "a URL the page asked for reached the report"
    ids = {s["id"] for s in out["sources"]}
    assert {int(n) for n in re.findall(r"\[(\d+)\]", report)} <= ids, "an invented citation"
    assert render_references(out["sources"]) in report, "references come from the ledger"
    body, _, after = report.partition(render_references(out["sources"]))
    assert "Evil Corp" not in body.split("## References")[0] + after.split("## Citation check")[0]
    for c in out["citations"]:  # the audit may quote what was removed, the report keeps none
        assert "evil.example" not in c["sentence"] and "Evil Corp" not in c["sentence"]
    removed = [p for p in out["provenance"] if "evil.example" in p["subject"]]
    assert removed and all(p["outcome"] == "removed" for p in removed)
