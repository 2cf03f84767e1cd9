"""--since, --include-domains and --exclude-domains as a user runs them: the CLI as a process."""

from __future__ import annotations

from pathlib import Path

from tests.integration_tests.test_cli import cli, validate
from tests.integration_tests.test_scope_dates import SNIPPET, dated_web
from tests.support.dated import article
from tests.support.loopback import Entry, FakeWeb

TOPIC = "Lithium recycling"
ONE_ROUND = ["--max-rounds", "1", "--max-keywords", "1", "--decomposition-nums", "1"]


def test_since_keeps_the_window_drops_older_pages_and_marks_undated_ones(
    web: FakeWeb, tmp_path: Path
) -> None:
    made = dated_web()
    web.written.update(made.written)
    web.catalogue = made.catalogue
    proc = cli(web, TOPIC, "-o", str(tmp_path), "-q", "--since", "2024-06-01", "--format",
               "md+html", "--url-per-query", "6", *ONE_ROUND)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = validate(tmp_path / "lithium-recycling.json")
    assert data["settings"]["since"] == "2024-06-01"
    published = sorted(s["published"] for s in data["sources"])
    assert published == ["", "2025-02-03", "2025-03-01"], "two in the window, one undated"
    out = [p for p in data["provenance"] if p["outcome"] == "out_of_scope"]
    assert sorted(p["reason"].split(",")[0] for p in out) == [
        "published 2018-04-02", "published 2019-05-08"
    ]  # fmt: skip
    undated = [p for p in data["provenance"] if p["reason"].startswith("undated:")]
    assert [p["subject"] for p in undated] == [web.url("/dated/undated.html")]
    assert "Outside the scope you set" in (tmp_path / "lithium-recycling.html").read_text(
        encoding="utf-8"
    ), "the HTML report lists the pages dropped for the scope"


def test_include_domains_keeps_to_the_named_host_and_tavily_is_asked_for_it(
    web: FakeWeb, tmp_path: Path
) -> None:
    for i in range(4):
        web.written[f"/s/{i}.html"] = article("meta", f"2025-01-0{i + 1}", marker=f"Plant{i}")
    at = f":{web.port}"
    web.catalogue = [
        Entry(f"/s/{i}.html", f"Lithium {i}", SNIPPET,
              f"http://{'localhost' if i % 2 else '127.0.0.1'}{at}/s/{i}.html")
        for i in range(4)
    ]  # fmt: skip
    # localhost is named in the allow-list: the network policy admits it whatever it resolves to.
    env = {"DESKRESEARCH_ALLOW_HOSTS": "127.0.0.0/8,localhost"}
    proc = cli(web, TOPIC, "-o", str(tmp_path), "-q", "--include-domains", "localhost",
               "--url-per-query", "4", *ONE_ROUND, env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = validate(tmp_path / "lithium-recycling.json")
    assert {s["url"] for s in data["sources"]} == {f"http://localhost{at}/s/1.html",
                                                   f"http://localhost{at}/s/3.html"}  # fmt: skip
    assert {tuple(s["include_domains"]) for s in web.searches} == {("localhost",)}
    assert web.fetches["/s/0.html"] == web.fetches["/s/2.html"] == 0


def test_a_scope_that_excludes_every_result_exits_5_with_the_reason(
    web: FakeWeb, tmp_path: Path
) -> None:
    proc = cli(web, TOPIC, "-o", str(tmp_path), "-q", "--include-domains", "who.int,.gov",
               *ONE_ROUND)  # fmt: skip
    assert proc.returncode == 5, proc.stderr
    assert "reason: no usable source: every page found (" in proc.stderr
    assert "outside the scope you set (include_domains=who.int,.gov)" in proc.stderr
    data = validate(tmp_path / "lithium-recycling.json")
    assert data["status"] == "insufficient_evidence" and data["sources"] == []
    assert sum(web.fetches.values()) == 0, "no page outside the scope was requested"
