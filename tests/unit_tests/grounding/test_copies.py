"""Copies count once: pages grouped by the origin of their text."""

from __future__ import annotations

from deskresearch.grounding.copies import Page, group, overstated

RELEASE = (
    "The Velmor battery plant in Kessling employs 1,450 people after the opening of its second "
    "production hall this spring. The new hall adds capacity for 40,000 battery packs a year, and "
    "the company plans to train two hundred apprentices at the site over the next three years in "
    "cooperation with the regional technical college. Velmor chief executive Ilse Marquardt said "
    "the expansion secures jobs in the region for the coming decade."
)
OWN = (
    "Local shops near the plant report more customers at lunchtime, and the district is planning "
    "a new bus line to the industrial estate. Residents asked the council to add a cycle path "
    "along the access road before the next shift system starts."
)


def page(i: int, text: str, *, url: str = "", site: str = "", published: str = "") -> Page:
    return Page(i, url or f"https://site{i}.example/a", text, site, published)


def test_a_reprint_with_boilerplate_is_one_origin_with_its_release() -> None:
    pages = [
        page(1, "Distributed by our newsroom service on behalf of the company. " + RELEASE,
             published="2025-03-11"),
        page(2, RELEASE, published="2025-03-10"),
        page(3, OWN),
    ]  # fmt: skip
    grouped = group(pages)
    assert grouped[1].group == grouped[2].group != grouped[3].group
    # The first published is the original, whatever the ledger's order.
    assert grouped[2].copy_of is None and grouped[1].copy_of == 2
    assert "of the text of source [2]" in grouped[1].reason


MORE = (
    "The plant's canteen is run by a cooperative of local farmers, who deliver vegetables from "
    "the valley every morning, and the works council has negotiated a new shift model that "
    "gives parents of young children fixed early shifts; both agreements run until the end of "
    "the decade and will be reviewed by an independent committee every two years."
)


def test_a_long_shared_passage_inside_an_article_of_its_own_is_a_copy() -> None:
    release = RELEASE + " " + MORE  # the article quotes a third of it
    article = OWN + " " + RELEASE.split(". ", 1)[1] + " " + OWN.replace("shops", "cafes")
    grouped = group([page(1, release, published="2025-03-10"),
                     page(2, article, published="2025-04-02")])  # fmt: skip
    assert grouped[2].group == grouped[1].group and grouped[2].copy_of == 1
    assert "-word passage with source [1]" in grouped[2].reason


def test_a_page_naming_another_as_its_source_is_one_origin_with_it() -> None:
    summary = ("Lindqvist Foods is to shut its Harrowgate bakery in June with 230 jobs lost. "
               "Source: Lindqvist Foods, press release of 2 September.")  # fmt: skip
    pages = [page(1, OWN, url="https://lindqvist-foods.example/news", site="Lindqvist Foods"),
             page(2, summary, url="https://foodtrade.example/x")]  # fmt: skip
    grouped = group(pages)
    assert grouped[2].copy_of == 1 and "as its source" in grouped[2].reason


def test_independent_pages_sharing_a_phrase_or_a_short_quote_stay_apart() -> None:
    quote = "We are proud of our team and of the region, said the mayor on Monday."
    pages = [page(1, OWN + " " + quote), page(2, RELEASE + " " + quote), page(3, "short")]
    assert len({g.group for g in group(pages).values()}) == 3


def test_a_short_site_name_after_an_attribution_word_names_nothing() -> None:
    pages = [page(1, OWN, url="https://news.example/a", site="News"),
             page(2, "Sources: news agencies and our own reporters say the plant grows.")]  # fmt: skip
    assert group(pages)[2].copy_of is None


def test_overstated_finds_words_about_the_reports_own_sources_only() -> None:
    assert overstated("Several sources confirm the plant employs 1,450 people [1][3].")
    assert overstated("Mehrere Quellen berichten, dass das Werk wächst [2].")
    assert overstated("Plusieurs médias indiquent que l'usine grandit [2].")
    assert overstated("Both sources agree on the figure [1][2].")
    assert not overstated("Two studies found lower emissions [1].")
    assert not overstated("The company has different sites in Europe [1].")
    assert overstated("Several sources told Reuters the plant would close [2].")
    assert overstated("According to multiple reports, the plant closes in June [1].")
    assert not overstated("The WHO has published several reports on the disease [1].")
    assert not overstated("Fraudsters opened many accounts at the bank [3].")
    assert not overstated("The village relies on several water sources [2].")
