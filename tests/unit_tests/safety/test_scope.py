import re
from collections.abc import Callable
from datetime import date

import pytest

from deskresearch.records import DomainScope
from deskresearch.safety.scope import (
    MAX_SITE_QUERY_CHARS,
    before,
    check_since,
    covers,
    describe,
    engine_domains,
    outside,
    parse_domains,
    site_query,
)

TODAY = date(2025, 6, 30)


def test_parse_domains_keeps_hosts_and_suffixes_lower_cased_once() -> None:
    assert parse_domains(" WHO.int, .GOV ,europa.eu,who.int") == ("who.int", ".gov", "europa.eu")
    assert parse_domains("") == () and parse_domains("   ") == ()
    assert parse_domains("münchen.de") == ("xn--mnchen-3ya.de",), "as URLs carry the name"
    assert parse_domains("127.0.0.2") == ("127.0.0.2",), "an address is a host too"


def since(text: str) -> str:
    return check_since(text, TODAY)


@pytest.mark.parametrize(("check", "text", "words"), [
    (parse_domains, "https://who.int/x", "is a URL, not a host: give the host alone (who.int)"),
    (parse_domains, "who.int/news", "is a URL, not a host: give the host alone (who.int)"),
    (parse_domains, "who.int,,.gov", "an empty entry between commas"),
    (parse_domains, "who.int,", "an empty entry between commas"),
    (parse_domains, "who int", "has a space inside"),
    (parse_domains, "*.gov", "leave out the wildcard, .gov already covers"),
    (parse_domains, "who.int:443", "'who.int:443' is not a host: give the host alone, no port or user (who.int)"),
    (parse_domains, "bot:secret@who.int", "'…@who.int' is not a host: give the host alone, no port or user"),
    (parse_domains, "https://bot:secret@who.int/x", "'https://bot:***@who.int/x' is a URL"),
    (parse_domains, "a..b", "not a host or domain suffix (empty host label)"),
    (parse_domains, "exa$mple.com", "not a host or domain suffix"),
    (parse_domains, ".", "not a host or domain suffix (no name)"),
    (since, "2025-13-40", "not a real date (month must be in 1..12)"),
    (since, "2025-02-30", "not a real date (day is out of range for month)"),
    (since, "2024/01/31", "not a date as YYYY-MM-DD"),
    (since, "yesterday", "not a date as YYYY-MM-DD"),
    (since, "2025-07-01", "a date in the future (today is 2025-06-30)"),
])  # fmt: skip
def test_a_scope_that_cannot_be_meant_is_refused_saying_how_to_write_it(
    check: Callable[[str], object], text: str, words: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        check(text)


@pytest.mark.parametrize(("entry", "host", "inside"), [
    ("who.int", "who.int", True),
    ("who.int", "apps.who.int", True),
    (".who.int", "who.int", True),  # the dot is notation: the apex is covered too
    (".gov", "data.cdc.gov", True),
    ("gov", "data.cdc.gov", True),
    ("who.int", "notwho.int", False),  # a suffix ends at a dot
    ("who.int", "who.int.evil.example", False),
    (".gov", "gov.uk", False),
])  # fmt: skip
def test_covers_matches_the_host_or_a_host_under_it(entry: str, host: str, inside: bool) -> None:
    assert covers(entry, host) is inside


def test_outside_names_the_host_and_the_setting() -> None:
    scope = DomainScope(include=("who.int", ".gov"), exclude=("stats.who.int",))
    assert outside("https://www.who.int/news/1", scope) is None
    assert outside("https://CDC.GOV./x", scope) is None, "case and a trailing dot do not matter"
    assert outside("https://example.org/x", scope) == (
        "example.org is outside include_domains (who.int, .gov)"
    )
    assert outside("https://stats.who.int/t", scope) == (
        "stats.who.int is excluded (exclude_domains: stats.who.int)"
    )
    assert outside("https://anything.example/", DomainScope()) is None


def test_site_query_narrows_a_query_for_engines_that_read_operators() -> None:
    one = DomainScope(include=(".gov",), exclude=("pinterest.com",))
    assert site_query("lithium", one) == "lithium site:gov -site:pinterest.com"
    two = DomainScope(include=("who.int", "europa.eu"))
    assert site_query("lithium", two) == "lithium (site:who.int OR site:europa.eu)"
    assert site_query("lithium", DomainScope()) == "lithium"
    many = DomainScope(include=tuple(f"site{i}.example" for i in range(40)))
    assert site_query("lithium", many) == "lithium", "too long: the filter after does it alone"
    assert len(site_query("x" * (MAX_SITE_QUERY_CHARS - 20), one)) <= MAX_SITE_QUERY_CHARS


def test_engine_domains_and_describe() -> None:
    assert engine_domains((".gov", "who.int")) == ["gov", "who.int"]
    assert engine_domains(()) is None, "None: the parameter is not sent at all"
    scope = DomainScope(include=("who.int",), exclude=(".example",))
    assert describe(scope, "2024-01-01") == (
        "include_domains=who.int; exclude_domains=.example; since=2024-01-01"
    )
    assert describe(DomainScope()) == ""


def test_check_since_accepts_a_past_date_today_or_nothing() -> None:
    assert check_since(" 2024-02-29 ", TODAY) == "2024-02-29"
    assert check_since("2025-06-30", TODAY) == "2025-06-30"
    assert check_since("", TODAY) == ""


def test_before_is_false_for_undated_pages_and_without_since() -> None:
    assert before("2023-12-31", "2024-01-01") and not before("2024-01-01", "2024-01-01")
    assert not before("", "2024-01-01"), "undated pages are kept"
    assert not before("1999-01-01", "")
