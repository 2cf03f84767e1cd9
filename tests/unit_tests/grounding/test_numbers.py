from deskresearch.grounding.numbers import figures, missing_figures, spelled_values


def test_one_value_across_number_formats() -> None:
    assert not missing_figures("3.5% of 40,000 tonnes", "3,5 Prozent von 40.000 Tonnen")
    assert not missing_figures("40 000 t", "40000 Tonnen")
    assert not missing_figures("3.50 kWh", "3,5 kWh")


def test_a_date_is_its_parts_in_any_order() -> None:
    assert not missing_figures("on 2019-06-20", "am 20.06.2019")
    assert not missing_figures("June 20, 2019", "am 20.06.2019")
    assert missing_figures("June 21, 2019", "am 20.06.2019") == ["21"]


def test_a_changed_figure_is_missing_exactly() -> None:
    assert missing_figures("In 2018, 3.6% of 40,000 t", "2019: 3,5 % von 40.000 t") == [
        "2018",
        "3.6",
    ]


def test_ambiguous_thousands_stand_for_both_readings() -> None:
    assert not missing_figures("1,000 cars", "1.000 Autos")
    assert not missing_figures("1.000 Autos", "one: 1")


def test_digits_glued_to_a_word_are_names_not_figures() -> None:
    assert figures("CO2, GPT-4 and COVID-19") == []
    assert missing_figures("95% of CO2", "95 Prozent") == []


def test_a_number_written_out_counts_only_in_the_deciding_quote() -> None:
    quote = "Geplant ist eine Absenkung der Mehrwertsteuer von 19 auf sieben Prozent"
    assert not missing_figures("taxed at 7 percent instead of 19", quote, spelled=quote)
    assert missing_figures("taxed at 7 percent instead of 19", quote) == ["7"]
    # Small numbers are written out all over a page: there they prove nothing.
    page = "Die Labels erhalten gut drei Euro. Der Trend hält seit vier Jahren an."
    assert missing_figures("3 of the 4 labels", page, spelled="Nach diesem Modell") == ["3", "4"]


def test_only_unambiguous_number_words_count() -> None:
    words = "one of two, ein Auto, un an, 80 Cent, dreißig, quatre-vingts, soixante-dix, trois"
    assert spelled_values(words) == {"2", "30", "80", "70", "3"}
