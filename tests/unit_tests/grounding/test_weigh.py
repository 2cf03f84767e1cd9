"""Weighing the judge's verdict against the facts: what code finds for and against a verdict."""

from typing import Any

from deskresearch.grounding.citations import claims_of
from deskresearch.grounding.lexical import Evidence
from deskresearch.grounding.weigh import closest_facts, doubt, plainly_carried, weighed
from tests.unit_tests.grounding.test_lexical import GERMAN, LEAD
from tests.unit_tests.nodes.test_check_citations import pending

HYDRO = Evidence(
    id=2,
    text="Hydrometallurgy recovers cobalt and nickel from the black mass. It needs acids.",
    quotes=("Hydrometallurgy recovers cobalt and nickel from the black mass",),
    claims=("Hydrometallurgy recovers cobalt and nickel from black mass.",),
    language="en",
)
RATE = GERMAN  # "Rund 5 Prozent ...", claimed in English
LEDGER = {1: LEAD, 2: HYDRO, 3: RATE}

TRANSLATED = "Only about 5 percent of lithium-ion batteries are recycled today [3]."
WRONG_FIGURE = "Only about 7 percent of lithium-ion batteries are recycled today [3]."
WRONG_SOURCE = "Hydrometallurgy recovers cobalt and nickel from the black mass [1]."
COMBINED = (
    "About 99 percent of the lead is recovered [1], while hydrometallurgy recovers cobalt "
    "and nickel from black mass [2]."
)


def test_a_sentence_is_split_into_the_claims_its_markers_close() -> None:
    assert claims_of(COMBINED) == [
        ("About 99 percent of the lead is recovered", [1]),
        ("while hydrometallurgy recovers cobalt and nickel from black mass.", [2]),
    ]
    assert claims_of("Both say so [1][3].") == [("Both say so.", [1, 3])]
    assert claims_of("It rose [1, 2] and fell later.") == [("It rose and fell later.", [1, 2])]
    assert claims_of("Nothing cited.") == [("Nothing cited.", [])]


def test_the_cited_facts_plainly_carry_a_translation_but_not_a_changed_figure() -> None:
    carried = plainly_carried(TRANSLATED, [3], LEDGER)
    assert carried is not None and carried.source == 3 and carried.quotes[0] == RATE.quotes[0]
    assert plainly_carried(WRONG_FIGURE, [3], LEDGER) is None, "7 is not in the quote"
    assert plainly_carried(WRONG_SOURCE, [1], LEDGER) is None, "source 1 says nothing of it"
    assert plainly_carried(COMBINED, [1, 2], LEDGER) is not None, "each claim by its source"
    swapped = COMBINED.replace("[1]", "[x]").replace("[2]", "[1]").replace("[x]", "[2]")
    assert plainly_carried(swapped, [2, 1], LEDGER) is None, "each claim by the source it cites"


def test_a_source_whose_facts_hold_too_little_of_a_claim_is_doubted() -> None:
    assert "no fact of [1] holds" in doubt(WRONG_SOURCE, [1], 1, LEDGER)
    assert doubt(WRONG_SOURCE, [1], 2, LEDGER) == "", "moved to source 2, which carries it"
    assert doubt(TRANSLATED, [3], 3, LEDGER) == ""
    assert doubt(COMBINED, [1, 2], 1, LEDGER) == "", "each claim held by the source it cites"
    assert doubt("It rose a lot [1].", [1], 1, LEDGER) == "", "too few words to tell"
    claims = closest_facts(COMBINED, [1, 2], None, LEDGER)
    assert [c.facts[0][0] for c in claims] == [1, 2]
    assert claims[1].facts[0][2] == HYDRO.claims[0], "each passage with what it says"


def _weigh(sentence: str, cites: list[int], verdict: Any, source: int | None, quote: str) -> Any:
    return weighed(pending(sentence, cites), verdict, source, quote, LEDGER)


def test_a_false_supported_on_a_sentence_with_a_wrong_figure_is_overruled_by_code() -> None:
    out = _weigh(WRONG_FIGURE, [3], "supported", 3, RATE.quotes[0])
    assert out["status"] == "unsupported"
    d = out["dispute"]
    assert d["judge"] == "supported" and d["judge_quote"] == RATE.quotes[0]
    assert d["settled_by"] == "code" and d["overruled"] and "figure(s) 7" in d["found"]


def test_a_false_unsupported_on_a_sentence_its_quote_carries_is_disputed_not_removed() -> None:
    out = _weigh(TRANSLATED, [3], "unsupported", None, "")
    assert out["status"] == "disputed" and out["quote"] == RATE.quotes[0]
    d = out["dispute"]
    assert d["judge"] == "unsupported" and d["settled_by"] == "unsettled" and not d["overruled"]
    assert d["found"].startswith("the facts of [3] carry it") and d["asked_again"] == []


def test_a_supported_whose_source_does_not_carry_the_sentence_is_disputed() -> None:
    out = _weigh(WRONG_SOURCE, [1], "supported", 1, LEAD.quotes[0])
    assert out["status"] == "disputed" and "no fact of [1] holds" in out["dispute"]["found"]


def test_a_verdict_the_facts_bear_out_is_taken_as_it_stands() -> None:
    out = _weigh(TRANSLATED, [3], "supported", 3, RATE.quotes[0])
    assert (out["status"], out.get("dispute")) == ("supported", None)
    out = _weigh(WRONG_SOURCE, [1], "other_source", 2, HYDRO.quotes[0])
    assert (out["status"], out["source"], out.get("dispute")) == ("re-cited", 2, None)
    out = _weigh(WRONG_SOURCE, [1], "unsupported", None, "")
    assert (out["status"], out.get("dispute")) == ("unsupported", None), "nothing carries it"


SLEEPERS = Evidence(
    id=4,
    text="Night trains stopped in 2023 on the Paris route. Sleeper cars are scarce across "
    "Europe since operators scrapped them.",
    quotes=("Night trains stopped in 2023 on the Paris route",
            "Sleeper cars are scarce across Europe since operators scrapped them"),
    claims=("Night trains on the Paris route stopped in 2023.",
            "Sleeper cars are scarce in Europe because operators scrapped them."),
    language="en",
)  # fmt: skip
SCARCE = "Sleeper cars are scarce across Europe because operators scrapped them [4]."


def test_a_supported_verdict_pointing_at_the_wrong_fact_shows_the_fact_that_says_it() -> None:
    ledger = {**LEDGER, 4: SLEEPERS}
    wrong = weighed(pending(SCARCE, [4]), "supported", 4, SLEEPERS.quotes[0], ledger)
    assert (wrong["status"], wrong["quote"]) == ("supported", SLEEPERS.quotes[1])
    assert wrong["reason"] == (
        "stated by source [4]; the judge named fact (1), which holds 0 of its 7 content words; "
        "fact (2), which holds 7, is shown"
    )
    right = weighed(pending(SCARCE, [4]), "supported", 4, SLEEPERS.quotes[1], ledger)
    assert (right["quote"], right["reason"]) == (SLEEPERS.quotes[1], "stated by source [4]")
    both = "Night trains on the Paris route stopped, and sleeper cars are scarce [4]."
    kept = weighed(pending(both, [4]), "supported", 4, SLEEPERS.quotes[0], ledger)
    assert (kept["status"], kept["quote"]) == ("supported", SLEEPERS.quotes[0]), "it says part"


def test_the_fact_shown_instead_must_hold_every_figure_and_a_moved_citation_gets_it_too() -> None:
    ledger = {**LEDGER, 4: SLEEPERS}
    dated = "Sleeper cars are scarce across Europe since 2023 because operators scrapped them [4]."
    kept = weighed(pending(dated, [4]), "supported", 4, SLEEPERS.quotes[0], ledger)
    assert (kept["status"], kept["quote"]) == ("supported", SLEEPERS.quotes[0]), "2023 is fact 1's"
    moved = weighed(pending(SCARCE.replace("[4]", "[1]"), [1]), "other_source", 4,
                    SLEEPERS.quotes[0], ledger)  # fmt: skip
    assert (moved["status"], moved["quote"]) == ("re-cited", SLEEPERS.quotes[1])
    assert moved["reason"].startswith("stated by source [4], not the one cited; the judge named")
