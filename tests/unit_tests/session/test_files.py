"""Report files: unique names, an explicit overwrite, never through a symlink."""

import json
import os
from pathlib import Path
from typing import Any

import pytest

from deskresearch.session.files import slug_for, write_files


def doc(paths: dict[str, Path]) -> dict[str, Any]:
    return {"files": {suffix: path.name for suffix, path in paths.items()}}


def write_pair(out: Path, slug: str, report: str, *_: Any, overwrite: bool = False) -> list[Path]:
    return write_files(out, slug, {".md": report}, doc, overwrite=overwrite)


def test_an_existing_report_is_kept_and_the_new_one_gets_the_next_name(tmp_path: Path) -> None:
    first = write_pair(tmp_path, "topic", "first")
    second = write_pair(tmp_path, "topic", "second")
    assert [p.name for p in first] == ["topic.md", "topic.json"]
    assert [p.name for p in second] == ["topic-2.md", "topic-2.json"]
    assert first[0].read_text() == "first" and second[0].read_text() == "second"
    assert json.loads(second[1].read_text())["files"] == {
        ".md": "topic-2.md",
        ".json": "topic-2.json",
    }


def test_a_lone_json_of_the_same_name_also_moves_the_pair_on(tmp_path: Path) -> None:
    (tmp_path / "topic.json").write_text("{}")
    md, js = write_pair(tmp_path, "topic", "new")
    assert (md.name, js.name) == ("topic-2.md", "topic-2.json")
    assert (tmp_path / "topic.json").read_text() == "{}"


def test_overwrite_replaces_both_files(tmp_path: Path) -> None:
    write_pair(tmp_path, "topic", "old")
    md, js = write_pair(tmp_path, "topic", "new", overwrite=True)
    assert md.name == "topic.md" and md.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["topic.json", "topic.md"]


def test_every_format_shares_the_first_free_stem(tmp_path: Path) -> None:
    (tmp_path / "topic.html").write_text("an older page")
    files = write_files(tmp_path, "topic", {".md": "m", ".html": "h"}, doc)
    assert [p.name for p in files] == ["topic-2.md", "topic-2.html", "topic-2.json"]
    assert (tmp_path / "topic.html").read_text() == "an older page"


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_symlink_at_the_report_path_is_never_followed(tmp_path: Path, overwrite: bool) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("precious")
    out = tmp_path / "reports"
    out.mkdir()
    (out / "topic.md").symlink_to(target)
    (out / "topic.json").symlink_to(tmp_path / "dangling.json")  # a dangling link too
    md, js = write_pair(out, "topic", "report", overwrite=overwrite)
    assert target.read_text() == "precious" and not (tmp_path / "dangling.json").exists()
    assert md.read_text() == "report" and not md.is_symlink() and not js.is_symlink()
    if overwrite:
        assert md.name == "topic.md"  # the link itself was replaced by the report
    else:
        assert md.name == "topic-2.md" and (out / "topic.md").is_symlink()


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "topic.md").mkdir()  # a folder where the report should go
    with pytest.raises(OSError):
        write_pair(tmp_path, "topic", "report", overwrite=True)
    assert sorted(os.listdir(tmp_path)) == ["topic.md"]


@pytest.mark.parametrize(
    ("topic", "slug"),
    [
        ("EV battery recycling", "ev-battery-recycling"),
        ("../../etc/passwd", "etc-passwd"),
        ("电动汽车电池回收", "dian-dong-qi-che-dian-chi-hui-shou"),
        ("???", "research"),
    ],
)
def test_slug_is_safe_for_any_topic(topic: str, slug: str) -> None:
    assert slug_for(topic) == slug


def test_slug_is_capped() -> None:
    assert len(slug_for("word " * 100)) <= 80


def test_a_result_document_naming_files_elsewhere_deletes_nothing_there(tmp_path: Path) -> None:
    from deskresearch.session.reports import documents, remove

    out, elsewhere = tmp_path / "reports", tmp_path / "precious.txt"
    out.mkdir()
    elsewhere.write_text("keep me")
    (out / "mine.md").write_text("report")
    planted = {"report": "../precious.txt", "html": str(elsewhere)}
    (out / "planted.json").write_text(json.dumps({"thread_id": "t1", "files": planted}))
    (out / "mine.json").write_text(json.dumps({"thread_id": "t2", "files": {"report": "mine.md"}}))
    found = documents(out)
    assert found["t1"] == [str(out / "planted.json")]
    assert found["t2"] == [str(out / "mine.md"), str(out / "mine.json")]
    remove(found["t1"])
    assert elsewhere.read_text() == "keep me" and not (out / "planted.json").exists()
