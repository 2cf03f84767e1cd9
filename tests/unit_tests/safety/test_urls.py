import pytest

from deskresearch.safety.urls import canonical_url


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("HTTPS://Example.ORG/a/", "https://example.org/a"),
        ("https://example.org:443/a", "https://example.org/a"),
        ("http://example.org:80/a#section", "http://example.org/a"),
        ("https://example.org/a?utm_source=x&b=2&a=1&fbclid=z", "https://example.org/a?a=1&b=2"),
        ("https://example.org/a?gclid=1", "https://example.org/a"),
    ],
)
def test_canonical_url_removes_what_never_changes_the_page(a: str, b: str) -> None:
    assert canonical_url(a) == b


def test_canonical_url_keeps_meaningful_differences() -> None:
    assert canonical_url("https://example.org:8443/a") == "https://example.org:8443/a"
    assert canonical_url("https://example.org/A") != canonical_url("https://example.org/a")
    assert canonical_url("https://example.org/a?page=2") != canonical_url(
        "https://example.org/a?page=3"
    )


def test_canonical_url_returns_unparseable_input_stripped() -> None:
    assert canonical_url("  not a url ") == "not a url"
    assert canonical_url("http://[::1") == "http://[::1"
