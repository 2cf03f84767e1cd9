from deskresearch.grounding.lexical import Evidence, check_sentence

LEAD = Evidence(
    id=1,
    text=(
        "Lead-acid batteries are the most recycled consumer product in the United States. "
        "About 99 percent of their lead is recovered and used again in new batteries."
    ),
    quotes=("About 99 percent of their lead is recovered and used again in new batteries",),
    claims=("About 99 percent of the lead in lead-acid batteries is recovered.",),
    language="en",
)
LITHIUM = Evidence(
    id=2,
    text=(
        "Only about 5 percent of lithium-ion batteries are recycled today, according to the "
        "agency. Hydrometallurgy recovers cobalt and nickel from the black mass."
    ),
    quotes=("Only about 5 percent of lithium-ion batteries are recycled today",),
    claims=("Only about 5 percent of lithium-ion batteries are recycled.",),
    language="en",
)
GERMAN = Evidence(
    id=3,
    text="Rund 5 Prozent der Lithium-Ionen-Akkus werden heute recycelt, sagt das Amt.",
    quotes=("Rund 5 Prozent der Lithium-Ionen-Akkus werden heute recycelt",),
    claims=("About 5 percent of lithium-ion batteries are recycled today.",),
    language="de",
)
LEDGER = {1: LEAD, 2: LITHIUM, 3: GERMAN}


def test_words_and_figures_of_the_cited_source_support_a_sentence() -> None:
    found = check_sentence(
        "About 99 percent of the lead in lead-acid batteries is recovered [1].",
        [1],
        LEDGER,
        language="en",
    )
    assert found.outcome == "supported" and found.source == 1
    assert "99 percent" in found.quote


def test_a_figure_no_source_holds_is_a_fabrication() -> None:
    found = check_sentence(
        "About 97 percent of the lead in lead-acid batteries is recovered [1].",
        [1],
        LEDGER,
        language="en",
    )
    assert found.outcome == "fabricated" and "97" in found.reason


def test_a_figure_held_only_by_another_source_goes_to_the_judge_with_that_source() -> None:
    found = check_sentence(
        "Only about 5 percent of lithium-ion batteries are recycled today [1].",
        [1],
        LEDGER,
        language="en",
    )
    assert found.outcome == "undecided" and 2 in found.candidates


def test_a_wrong_pin_without_figures_is_not_passed() -> None:
    found = check_sentence(
        "Hydrometallurgy recovers cobalt and nickel from the black mass [1].",
        [1],
        LEDGER,
        language="en",
    )
    assert found.outcome == "undecided" and found.candidates[0] == 2


def test_a_sentence_in_another_language_than_its_source_is_left_to_the_model() -> None:
    found = check_sentence(
        "About 5 percent of lithium-ion batteries are recycled today [3].",
        [3],
        LEDGER,
        language="en",
    )
    assert found.outcome == "undecided" and found.reason == "another language than its source"


def test_a_sentence_combining_two_sources_is_supported_by_both() -> None:
    found = check_sentence(
        "About 99 percent of lead is recovered, but only about 5 percent of lithium-ion "
        "batteries are recycled [1][2].",
        [1, 2],
        LEDGER,
        language="en",
    )
    assert found.outcome == "supported"


DUESENFELD = Evidence(
    id=4,
    text=(
        "Duesenfeld recycles 96 percent of the material. We use 70 percent less energy than "
        "conventional processes and cut the battery's carbon footprint by 40 percent."
    ),
    quotes=("We use 70 percent less energy than conventional processes",),
    claims=("Duesenfeld's process uses 70 percent less energy.",),
    language="en",
)


def test_a_figure_swapped_within_its_passage_is_left_to_the_model() -> None:
    ledger = {**LEDGER, 4: DUESENFELD}
    swapped = check_sentence(
        "Duesenfeld's process uses 40 percent less energy than conventional processes [4].",
        [4],
        ledger,
        language="en",
    )
    # 40 and every word are in the source's second sentence: only which figure goes with
    # "less energy" is wrong, and code cannot bind a figure to its words.
    assert swapped.outcome == "undecided" and "other figures" in swapped.reason
    alone = check_sentence(
        "Duesenfeld recycles 96 percent of the material [4].", [4], ledger, language="en"
    )
    assert alone.outcome == "supported", "a passage holding only the sentence's figure decides"
