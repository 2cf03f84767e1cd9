"""The closing section on disagreements: written by code, kept whole or dropped whole."""

from __future__ import annotations

from deskresearch.grounding.draft import cited_sentences, parse
from deskresearch.records import Disagreement, ValueSide
from deskresearch.report.disagreements import section, settle, with_section


def side(claim: str, cites: list[int]) -> ValueSide:
    return ValueSide(value="x", claim=claim, quote=claim, sources=cites, cites=cites, origins=1,
                     published=[""], urls=[""], as_of="")  # fmt: skip


D = [
    Disagreement(about="Daily capacity", kind="figure", checked=False,
                 sides=[side("The plant produces 45,000 m3 a day.", [1]),
                        side("The plant produces 62,000 m3 a day.", [2])]),
    Disagreement(about="Founding year ## of the society", kind="date", checked=False,
                 sides=[side("It was founded in 1962 [9].", [3]), side("It was founded in 1964.", [4])]),
]  # fmt: skip
DRAFT = "# Report\n\n## Findings\n\nThe plant makes water [1]."


def test_the_section_cites_each_side_and_keeps_model_words_out_of_markup() -> None:
    text = section(D, "German")
    assert text.startswith("## Wo die Quellen sich widersprechen\n")
    assert "  - The plant produces 45,000 m3 a day [1]." in text
    assert "- Founding year of the society:" in text  # no heading mark, no stray citation
    assert "It was founded in 1962 [3]." in text and "[9]" not in text
    assert section([], "en") == ""


def test_settle_keeps_supported_disagreements_and_drops_the_others_whole() -> None:
    draft = with_section(DRAFT, D, "en")
    units = parse(draft, "en")
    verdicts = {s.key: "supported" for s in cited_sentences(units)}
    second = [s.key for s in cited_sentences(units) if "1964" in s.text]
    verdicts[second[0]] = "unsupported"
    kept, removals, dropped = settle(draft, "en", D, verdicts, checked=True)
    assert [d["about"] for d in kept] == ["Daily capacity"] and kept[0]["checked"]
    assert [d["about"] for d, _ in dropped] == ["Founding year ## of the society"]
    assert "unsupported" in dropped[0][1]
    removed_text = " ".join(units[u].sentences[i] for u, i in removals)
    assert "1962" in removed_text and "1964" in removed_text and "Founding" in removed_text
    assert "45,000" not in removed_text


def test_with_the_check_off_every_disagreement_stays_marked_unchecked() -> None:
    draft = with_section(DRAFT, D, "en")
    kept, removals, _ = settle(draft, "en", D, {}, checked=False)
    assert len(kept) == 2 and not any(d["checked"] for d in kept) and not removals
