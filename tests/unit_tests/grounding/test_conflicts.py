"""Disagreements and changes: figures compared by value, pairs of different origins, dates."""

from __future__ import annotations

from deskresearch.grounding.conflicts import FactRef, candidate_pairs, clusters, when
from deskresearch.grounding.quantities import agree, differing, quantities, years


def q(text: str) -> list:  # type: ignore[type-arg]
    return quantities(text)


def test_rounding_units_and_hedges_agree_different_figures_do_not() -> None:
    assert agree(q("about 1,200 hectares")[0], q("1,214 hectares")[0])
    assert agree(q("1.2 million MWh")[0], q("1,200,000 MWh")[0])
    assert agree(q("3,5 Mrd. Euro")[0], q("3.5 billion euros")[0])
    assert agree(q("rund 38.000 Besucher")[0], q("38 000 Besucher")[0])
    assert agree(q("1,200 hectares")[0], q("1,249 hectares")[0])  # 1,249 to the hundred
    assert not agree(q("1,450 hectares")[0], q("1,200 hectares")[0])
    assert not agree(q("1,000 people")[0], q("1,400 people")[0])  # a round count: within 5%
    assert not agree(q("45,000 cubic metres")[0], q("62,000 cubic metres")[0])
    assert not agree(q("35% of sales")[0], q("35 plants")[0])  # a share is not a count
    assert agree(q("a €1.2m grant")[0], q("a grant of 1,200,000 euros")[0])
    assert [x.written for x in q("45,000 m3 and a 45 m tower")] == ["45,000", "45"]


def test_years_and_dates_say_when_not_how_much() -> None:
    assert q("In 2019 the ferry carried 310,000 passengers.")[0].written == "310,000"
    assert len(q("In 2019 the ferry carried 310,000 passengers.")) == 1
    assert years("In 2019 the ferry carried 310,000 passengers, as on 2020-02-14.") == {2019, 2020}
    assert q("founded on 12.03.1962") == []


def test_differing_needs_a_figure_of_the_same_kind_no_figure_of_the_other_backs() -> None:
    assert differing(q("employs 1,450 people"), q("employs about 1,450 people")) is None
    assert differing(q("35% growth"), q("employs 1,450 people")) is None
    found = differing(q("produces 45,000 m3"), q("produces 62,000 m3"))
    assert found is not None and (str(found[0]), str(found[1])) == ("45,000", "62,000")


def fact(n: int, source: int, group: int, claim: str, published: str = "") -> FactRef:
    return FactRef(n, source, group, claim, claim, published)


def test_candidates_are_alike_facts_of_different_origins_with_different_values() -> None:
    facts = [
        fact(1, 1, 1, "The Orlan plant near Port Eskel produces 45,000 cubic metres a day."),
        fact(
            2, 2, 1, "The Orlan plant near Port Eskel produces 62,000 cubic metres a day."
        ),  # a copy
        fact(3, 3, 2, "The Orlan plant near Port Eskel produces 62,000 cubic metres a day."),
        fact(4, 4, 3, "The Orlan plant near Port Eskel produces about 45,000 cubic metres a day."),
        fact(5, 5, 4, "Fishermen asked about the brine outlet in the bay."),
    ]
    pairs = candidate_pairs(facts)
    assert {(p.a.number, p.b.number) for p in pairs} == {(1, 3), (2, 4), (3, 4)}
    assert {p.kind for p in pairs} == {"figure"}


def test_dates_names_and_negations_are_values_too() -> None:
    kinds = {
        p.kind
        for p in candidate_pairs(
            [
                fact(
                    1, 1, 1, "The Tarrow Valley Railway Society was founded in 1962 by engineers."
                ),
                fact(
                    2, 2, 2, "The Tarrow Valley Railway Society was founded in 1964 by engineers."
                ),
                fact(3, 3, 3, "The Halden footbridge over the river is open to cyclists now."),
                fact(4, 4, 4, "The Halden footbridge over the river is not open to cyclists now."),
            ]
        )  # fmt: skip
    }
    assert kinds == {"date", "yes/no"}


def test_a_cluster_is_a_change_when_each_value_holds_at_another_time() -> None:
    facts = [
        fact(1, 1, 1, "The Kessling bus fleet counts 140 buses.", "2018-04-03"),
        fact(2, 2, 2, "The Kessling bus fleet counts 210 buses.", "2025-06-12"),
    ]
    pairs = candidate_pairs(facts)
    [found] = clusters(pairs, {pairs[0].number: "the bus fleet"})
    assert found.change and [s[0].source for s in found.sides] == [2, 1]  # newest first


def test_two_precisions_of_one_figure_agree_in_points_for_percentages() -> None:
    assert agree(q("3.2% of households")[0], q("3.24% of households")[0])
    assert agree(q("12 percent")[0], q("12.3 percent")[0])
    assert agree(q("about 5% of sales")[0], q("5.4% of sales")[0])
    assert agree(q("1.2 million tonnes")[0], q("1,249,000 tonnes")[0])
    assert not agree(q("3.5% of sales")[0], q("4.1% of sales")[0])
    assert not agree(q("12 plants")[0], q("13 plants")[0])
    # A whole number under 1,000 is exact: "10%" is no rounding of "14%", nor "20" of "21".
    assert not agree(q("10% unemployment")[0], q("14% unemployment")[0])
    assert not agree(q("100% of homes")[0], q("149% of homes")[0])
    assert not agree(q("20 plants")[0], q("21 plants")[0])
    assert not agree(q("about 0.2% of sales")[0], q("1.1% of sales")[0])


def test_a_bound_agrees_with_a_figure_that_meets_it() -> None:
    assert agree(q("more than 1,000 people")[0], q("1,500 people")[0])
    assert agree(q("at least 40% of sales")[0], q("45% of sales")[0])
    assert not agree(q("up to 20% of sales")[0], q("25% of sales")[0])
    assert not agree(q("more than 5000 jobs")[0], q("under 1000 jobs")[0])
    assert agree(q("more than 1000 jobs")[0], q("up to 2500 jobs")[0])
    assert not agree(q("no more than 100 people")[0], q("500 people")[0])  # a ceiling
    assert agree(q("no more than 100 people")[0], q("80 people")[0])
    assert not agree(q("not less than 10 people")[0], q("5 people")[0])  # a floor


def test_same_time_different_values_are_a_disagreement_and_agreeing_origins_one_side() -> None:
    facts = [
        fact(
            1, 1, 1, "Lindqvist will close its bakery in June, affecting 230 workers.", "2025-09-02"
        ),
        fact(
            2, 3, 2, "Lindqvist will close its bakery in June, affecting 260 workers.", "2025-09-05"
        ),
        fact(
            3, 4, 3, "Lindqvist will close its bakery in June, affecting 230 workers.", "2025-09-06"
        ),
    ]
    pairs = candidate_pairs(facts)
    [found] = clusters(pairs, {p.number: "jobs lost" for p in pairs})
    assert not found.change and found.kind == "figure"
    assert sorted(sorted(f.source for f in side) for side in found.sides) == [[1, 4], [3]]


def test_pairs_the_model_did_not_call_the_same_thing_make_nothing() -> None:
    facts = [
        fact(1, 1, 1, "The Brenmoor operator employs 5,400 people across its wind farms."),
        fact(2, 2, 2, "The Brenmoor wind farm employs 85 people on site."),
    ]
    pairs = candidate_pairs(facts)
    assert pairs and clusters(pairs, {}) == []


def test_a_figure_is_dated_by_its_own_clause_else_by_its_page() -> None:
    assert when([fact(1, 1, 1, "In 2018, the plant recycled 45,000 tonnes")]) == 2018
    assert (
        when([fact(1, 1, 1, "It recycled 45,000 tonnes in 2024, after it opened in 2015")]) == 2024
    )
    opened = "The plant, opened in 2015, recycled 45,000 tonnes"  # 2015 dates the opening
    assert when([fact(1, 1, 1, opened, "2023-05-02")]) == 2023
    assert when([fact(1, 1, 1, opened)]) is None
    assert (
        when([fact(1, 1, 1, "On March 3, 2018, the plant recycled 45,000 t", "2024-05-01")]) == 2018
    )
    assert when([fact(1, 1, 1, "Revenue was 5 billion dollars (2019)", "2024-05-01")]) == 2019
