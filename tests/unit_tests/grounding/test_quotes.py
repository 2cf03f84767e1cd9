import pytest

from deskresearch.grounding.quotes import find_quote, normalise

PAGE = (
    "Das Umweltbundesamt (UBA) meldet: „Rund 95 Prozent der Blei-\nbatterien werden recycelt.“ "
    "Bei Lithium-Ionen-Akkus ist das nicht so: Lithium wird bisher kaum zurückgewonnen. "
    "Die Kosten lagen 2019 bei 3,5 Milliarden Euro."
)


@pytest.mark.parametrize(
    "quote",
    [
        "Rund 95 Prozent der Bleibatterien werden recycelt.",  # hyphen at a line break
        '"rund 95 prozent der bleibatterien werden recycelt"',  # case, straight quotes
        "Lithium wird  bisher kaum\nzurückgewonnen",  # whitespace
        "Die Kosten lagen 2019 bei 3,5 Milliarden Euro",
        "Bei Lithium–Ionen–Akkus ist das nicht so",  # en dashes for hyphens
        "Die Kosten lagen 2019 bei 3,5 Millarden Euro",  # one typo in a long quote
    ],
)
def test_a_faithful_copy_is_found(quote: str) -> None:
    assert find_quote(quote, PAGE)


@pytest.mark.parametrize(
    "quote",
    [
        "Rund 96 Prozent der Bleibatterien werden recycelt",  # a figure changed
        "Die Kosten lagen 2018 bei 3,5 Milliarden Euro",  # a year changed
        "Lithium wird bisher zurückgewonnen",  # "kaum" left out
        "Lithium wird bisher nicht kaum zurückgewonnen",  # a word added
        "Bei Lithium-Ionen-Akkus ist das so",  # the negation dropped
        "Rund 95 Prozent der Lithiumbatterien werden recycelt",  # a different noun
        "werden recycelt",  # too short to prove anything
        "Der Satz steht nirgends auf dieser Seite",
    ],
)
def test_a_near_miss_is_not_found(quote: str) -> None:
    assert not find_quote(quote, PAGE)


def test_normalise_folds_form_case_marks_and_breaks() -> None:
    assert (
        normalise("Ｆｕｌｌ\u00adwidth “Quote” — re-\n  cycling") == 'fullwidth "quote" - recycling'
    )
