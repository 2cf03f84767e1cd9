from deskresearch.text.relevance import chunks_to_skip, stems

BATTERY = "Lithium batteries are shredded; recycling recovers lithium, cobalt and nickel."
OFFTOPIC = "Our newsletter: subscribe for weekly recipes, banana bread and walnut cake."
GERMAN = "Altbatterien werden geschreddert; das Recycling gewinnt Lithium und Kobalt zurück."


def test_stems_fold_case_accents_and_endings_and_drop_function_words() -> None:
    assert stems("Recycled RECYCLING über Über what 2023") == {"recycl"}
    assert "batter" in stems("batteries") and "batter" in stems("Battery")


def test_unrelated_chunks_are_skipped_when_the_page_speaks_the_queries_language() -> None:
    questions = ["How are lithium batteries recycled?", "cobalt recovery from batteries"]
    assert chunks_to_skip([BATTERY, OFFTOPIC, BATTERY], questions) == [1]


def test_nothing_is_skipped_when_no_chunk_matches_well_eg_another_language() -> None:
    questions = ["How are EV packs reused?"]
    assert chunks_to_skip([GERMAN, OFFTOPIC], questions) == []


def test_a_single_chunk_page_is_never_filtered() -> None:
    assert chunks_to_skip([OFFTOPIC], ["lithium batteries recycling"]) == []
