from deskresearch.grounding.draft import (
    cited_sentences,
    edit,
    language_code,
    parse,
    split_sentences,
)

DRAFT = """# Report

Intro sentence [1]. Dr. Smith said 3.5 kWh is enough [2]. An uncited aside.

## Findings

- Item one is true [2].
- Item two [3]. Also this [1].

## Numbers

| a | b |
|---|---|
| x | 5 [2] |

## Later

Only this [4].
"""


def keys() -> dict[str, tuple[int, int]]:
    return {s.text: s.key for s in cited_sentences(parse(DRAFT, "en-us"))}


def test_cited_sentences_keep_abbreviations_and_decimals_whole() -> None:
    found = cited_sentences(parse(DRAFT, "en"))
    assert [(s.text, s.cites, s.section) for s in found] == [
        ("Intro sentence [1].", (1,), "Report"),
        ("Dr. Smith said 3.5 kWh is enough [2].", (2,), "Report"),
        ("Item one is true [2].", (2,), "Findings"),
        ("Item two [3].", (3,), "Findings"),
        ("Also this [1].", (1,), "Findings"),
        ("| x | 5 [2] |", (2,), "Numbers"),
        ("Only this [4].", (4,), "Later"),
    ]


def test_a_citation_after_the_full_stop_stays_with_its_sentence() -> None:
    [first, second] = cited_sentences(parse("Foo bar baz. [1] Next one here [2].", "en"))
    assert first.text == "Foo bar baz. [1]" and second.text == "Next one here [2]."


def test_edits_keep_untouched_text_verbatim_and_drop_what_is_left_empty() -> None:
    k = keys()
    out = edit(
        DRAFT,
        "en",
        {
            k["| x | 5 [2] |"]: None,  # the table's only data row: the table goes
            k["Only this [4]."]: None,  # the section's only sentence: the heading goes
            k["Item two [3]."]: None,
            k["Item one is true [2]."]: "Item one, restated [3].",
        },
    )
    assert out == (
        "# Report\n\nIntro sentence [1]. Dr. Smith said 3.5 kWh is enough [2]. An uncited aside."
        "\n\n## Findings\n\n- Item one, restated [3].\n- Also this [1]."
    )


def test_no_edit_leaves_the_draft_as_it_was() -> None:
    assert edit(DRAFT, "en", {}) == DRAFT


def test_language_codes_from_settings() -> None:
    assert [language_code(x) for x in ("en-us", "German", "fr", "zh-cn", "Klingon")] == [
        "en",
        "de",
        "fr",
        "zh",
        "en",
    ]


def test_german_ordinals_do_not_end_a_sentence_but_numbers_still_may() -> None:
    text = (
        "Das Viertel entstand im 15. Jahrhundert vor der Mauer [1]. Er gewann zum 3. Mal [2]. "
        "Die Quote lag bei 25. Danach stieg sie [3]. Der Turm ist von 1564. Er steht [4]."
    )
    assert split_sentences(text, "German") == [
        "Das Viertel entstand im 15. Jahrhundert vor der Mauer [1].",
        "Er gewann zum 3. Mal [2].",
        "Die Quote lag bei 25.",
        "Danach stieg sie [3].",
        "Der Turm ist von 1564.",
        "Er steht [4].",
    ]
    # English has no ordinal dots: the same shape is two sentences there.
    assert len(split_sentences("It came in the 15. Century was next.", "en")) == 2
