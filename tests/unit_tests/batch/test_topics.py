from pathlib import Path

import pytest

from deskresearch.batch.runner import build_job
from deskresearch.batch.topics import read_batch, thread_id_for
from deskresearch.errors import ConfigError
from deskresearch.session.plan import Entry
from deskresearch.session.settings import Sources


def test_thread_ids_are_stable_and_depend_on_batch_topic_and_settings() -> None:
    a = thread_id_for("b", "EV batteries", {"language": "de", "url_per_query": 2})
    assert a == thread_id_for("b", "EV batteries", {"url_per_query": 2, "language": "de"})
    assert a != thread_id_for("other batch", "EV batteries", {"language": "de", "url_per_query": 2})
    assert a != thread_id_for("b", "EV batteries", {"language": "fr", "url_per_query": 2})
    assert a != thread_id_for("b", "EV batteries!", {"language": "de", "url_per_query": 2})


def test_plain_and_json_lines_give_topics_with_settings_and_unique_file_names(
    tmp_path: Path,
) -> None:
    file = tmp_path / "t.txt"
    file.write_text(
        "\ufeffEV battery recycling\n"  # a BOM from a Windows editor
        "  # comment\n\n"
        '{"topic": "EV battery recycling", "language": "de"}\n'
        '{"topic": "Local files", "search": "corpus", "corpus_dir": "notes"}\n',
        encoding="utf-8",
    )
    topics, bad = read_batch(file, "id")
    assert bad == []
    assert [(t.line, t.topic) for t in topics] == [
        (1, "EV battery recycling"), (4, "EV battery recycling"), (5, "Local files")
    ]  # fmt: skip
    assert topics[1].settings == {"language": "de"}
    assert topics[2].settings["corpus_dir"] == str(tmp_path / "notes")  # next to the file
    names = [t.name for t in topics]
    assert len(set(names)) == 3 and names[2] == "local-files"
    assert names[0].startswith("ev-battery-recycling-") and names[1].startswith("ev-battery-")


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ('{"topic": ""}', "topic is empty"),
        ('{"language": "de"}', "topic is missing"),
        ('{"topic": "x"', "malformed JSON"),
        ('{"topic": "x", "max_keyword": 3}', "did you mean 'max_keywords'?"),
        ('{"topic": 42}', "topic is missing"),
    ],
)
def test_bad_lines_name_the_problem(tmp_path: Path, line: str, error: str) -> None:
    file = tmp_path / "t.txt"
    file.write_text(f"fine topic\n{line}\n", encoding="utf-8")
    topics, bad = read_batch(file, "id")
    assert [t.topic for t in topics] == ["fine topic"]
    assert len(bad) == 1 and bad[0].line == 2 and error in bad[0].error


def test_an_unreadable_or_empty_file_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the batch file"):
        read_batch(tmp_path / "missing.txt", "id")
    latin = tmp_path / "latin.txt"
    latin.write_bytes("Zürich".encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8"):
        read_batch(latin, "id")
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing yet\n\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="no topics"):
        read_batch(empty, "id")


def test_a_line_wins_over_the_flags_and_a_bad_value_names_the_line(tmp_path: Path) -> None:
    file = tmp_path / "t.txt"
    file.write_text('{"topic": "x", "language": "de"}\n{"topic": "y", "max_keywords": 99}\n')
    (good, worse), _ = read_batch(file, "id")
    flags = {"language": "fr", "url_per_query": 3, "report_words": None}
    sources, entry = Sources(flags=flags, environ={}), Entry("batch", providers=False)
    job = build_job(good, sources, entry)
    ctx = job.context()
    assert (ctx.language, ctx.url_per_query, ctx.report_words) == ("de", 3, 2000)
    assert job.settings["language"].origin == "line 1's language"
    assert job.settings["url_per_query"].origin == "the flag --url-per-query"
    with pytest.raises(ConfigError, match=r"max_keywords=99 from line 2's max_keywords"):
        build_job(worse, sources, entry)


def test_a_line_that_asks_for_a_review_is_refused_as_the_flag_and_variable_are(
    tmp_path: Path,
) -> None:
    file = tmp_path / "t.txt"
    file.write_text('{"topic": "x", "review_plan": true}\n')
    [topic], _ = read_batch(file, "id")
    with pytest.raises(ConfigError, match=r"review_plan=true from line 1's review_plan pauses"):
        build_job(topic, Sources(environ={}), Entry("batch", providers=False))


def test_a_bad_flag_or_variable_is_named_once_before_any_line_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from deskresearch.batch.cli import main

    file = tmp_path / "t.txt"
    file.write_text("first topic\nsecond topic\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main([str(file), "-o", str(out), "--max-keywords", "abc"]) == 3
    err = capsys.readouterr().err
    assert "from the flag --max-keywords" in err and "line 1" not in err
    monkeypatch.setenv("DESKRESEARCH_URL_PER_QUERY", "many")
    assert main([str(file), "-o", str(out)]) == 3
    assert "DESKRESEARCH_URL_PER_QUERY in the environment" in capsys.readouterr().err
    assert not out.exists()  # nothing written before the settings are right
