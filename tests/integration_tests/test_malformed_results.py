"""A malformed search result costs that result, with its reason, never the run or a citation.

Each shape is served by the fake search engine beside one good page; the run must finish, the
bad URL must be dropped at the search step with the reason in provenance, never be requested
and never become a source.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from tests.integration_tests.test_cli import cli, validate
from tests.support.loopback import Entry, FakeWeb, serve
from tests.support.runs import run

pytestmark = pytest.mark.anyio
GOOD = "/pages/heise.de.lithium.html"
LONG_LABEL = "a" * 64
LONG_HOST = ".".join(["b" * 61] * 4) + ".example"  # 247 + 8 = 255 characters, each label valid

# (id, URL with {port} for the loopback web's, what the drop's reason names)
SHAPES = [
    ("empty-label", "http://lithium..example:{port}/x", "empty host label"),
    ("leading-dot", "http://.example:{port}/x", "empty host label"),
    ("label-64", f"http://{LONG_LABEL}.example:{{port}}/x", "host label of 64 characters"),
    ("host-255", f"http://{LONG_HOST}:{{port}}/x", "host name of 255 characters"),
    ("cr-lf", "http://127.0.0.1:{port}/page\r\nX-Injected: yes", "control character U+000D"),
    ("lf-only", "http://127.0.0.1:{port}/page\nX-Injected: yes", "control character U+000A"),
    ("tab", "http://127.0.0.1:{port}/pa\tge", "control character U+0009"),
    ("nul", "http://127.0.0.1:{port}/page\x00.html", "control character U+0000"),
    ("c1-nel", "http://127.0.0.1:{port}/page\x85", "control character U+0085"),
    ("bidi-path", "http://127.0.0.1:{port}/\u202elmth.exe", "bidi character U+202E"),
    ("bidi-host", "http://exa\u202dmple.org:{port}/x", "bidi character U+202D"),
    ("zero-width-host", "http://ex\u200bample.org:{port}/x", "U+200B"),
    ("ipv6-zone-id", "http://[fe80::1%25eth0]:{port}/x", "IPv6 zone id"),
    ("ipv6-zone-raw", "http://[fe80::1%eth0]:{port}/x", "IPv6 zone id"),
    ("port-65536", "http://127.0.0.1:65536/x", "Port out of range"),
    ("port-99999", "http://127.0.0.1:99999/x", "Port out of range"),
    ("port-0", "http://127.0.0.1:0/x", "port 0 out of range"),
    ("port-negative", "http://127.0.0.1:-1/x", "Port"),
    ("port-not-a-number", "http://127.0.0.1:http/x", "Port could not be cast"),
    ("no-host", "http:///pages/heise.de.lithium.html", "no valid host"),
    ("space-in-host", "http://exa mple.org:{port}/x", "' ' not allowed"),
    ("credentials", "http://reader:secret@127.0.0.1:{port}" + GOOD, "credentials"),
    ("backslash-host", "http://evil.example\\@127.0.0.1:{port}" + GOOD, "'\\\\' not allowed"),
    ("decimal-ipv4", "http://2130706433:{port}" + GOOD, "non-standard notation"),
    ("hex-ipv4", "http://0x7f.1:{port}" + GOOD, "non-standard notation"),
    ("short-ipv4", "http://127.1:{port}" + GOOD, "non-standard notation"),
    ("percent-host", "http://%31%32%37.0.0.1:{port}" + GOOD, "not letters, digits"),
    ("angle-brackets", "http://127.0.0.1:{port}/a><script>x", "'>' not allowed"),
    ("not-idna", "http://" + "ü" * 70 + ".example:{port}/x", "not a valid international name"),
    ("overlong-url", "http://127.0.0.1:{port}/" + "a" * 5000, "5023 characters"),
    ("javascript", "javascript:alert(document.domain)", "scheme javascript"),
    ("file", "file:///etc/passwd", "scheme file"),
]


@pytest.mark.parametrize(("url", "why"), [s[1:] for s in SHAPES], ids=[s[0] for s in SHAPES])
async def test_a_malformed_result_url_is_dropped_with_its_reason(url: str, why: str) -> None:
    with serve(FakeWeb()) as web:
        bad = url.format(port=web.port)
        web.catalogue = [
            Entry("/bad", "Lithium recycling figures", "Lithium recovery rates in Europe.", bad),
            Entry(GOOD, "Lithium", "Lithium recycling in Germany, with figures."),
        ]
        out = await run(web, max_rounds=1, max_keywords=1, decomposition_nums=1)
    assert out["status"] == "ok", out["reason"]
    assert [s["url"] for s in out["sources"]] == [web.url(GOOD)]
    dropped = [p for p in out["provenance"] if p["reason"].startswith("search result dropped:")]
    assert dropped and {p["outcome"] for p in dropped} == {"blocked"}, out["provenance"]
    assert why in dropped[0]["reason"], dropped[0]["reason"]
    assert set(web.fetches) == {GOOD}, "only the good page was requested"
    # Provenance shows the URL with its invisible characters spelled out (no raw CR/LF or bidi
    # control reaches a log line or the terminal).
    assert not any(visible(p["subject"]) != p["subject"] for p in out["provenance"])


def visible(text: str) -> str:
    return "".join(c for c in text if unicodedata.category(c) not in ("Cc", "Cf", "Zl", "Zp"))


def test_cli_drops_malformed_results_and_finishes(web: FakeWeb, tmp_path: Path) -> None:
    """The probe's two cases as a user meets them: no UnicodeError exit, no mangled source."""
    long_label = f"http://{LONG_LABEL}.example:{web.port}/x"
    injected = web.url("/page\r\nX-Injected: yes")
    web.catalogue = [
        Entry("/a", "Lithium figures", "Lithium recovery rates in Europe.", long_label),
        Entry("/b", "Lithium report", "Lithium recovery in German plants.", injected),
        Entry(GOOD, "Lithium", "Lithium recycling in Germany, with figures."),
    ]
    proc = cli(web, "Lithium recycling", "-o", str(tmp_path), "-q", "--max-rounds", "1")
    assert proc.returncode == 0, proc.stderr
    assert "UnicodeError" not in proc.stderr
    data = validate(tmp_path / "lithium-recycling.json")
    assert [s["url"] for s in data["sources"]] == [web.url(GOOD)]
    reasons = [p["reason"] for p in data["provenance"] if p["outcome"] == "blocked"]
    assert any("host label of 64 characters" in r for r in reasons), reasons
    assert any("control character U+000D" in r for r in reasons), reasons
    assert not any(path.startswith("/page") and path != GOOD for path in web.fetches)
