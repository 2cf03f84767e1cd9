"""The page's form: only research settings, the deployment's locks, the pre-flight's words."""

import os
from pathlib import Path
from typing import Any

from deskresearch.session.settings import Sources
from deskresearch.ui.desk import Desk
from deskresearch.ui.form import form


def desk_on(tmp_path: Path, **environ: str) -> Desk:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DESKRESEARCH_")} | environ

    def sources(page: dict[str, Any]) -> Sources:
        return Sources(caller=page, caller_name="the page", environ=env,
                       defaults={"output_dir": str(tmp_path / "reports"),
                                 "checkpoints": str(tmp_path / "runs.sqlite")})  # fmt: skip

    return Desk(sources)


def test_the_page_cannot_choose_where_runs_and_files_go_or_set_unknown_things(
    tmp_path: Path,
) -> None:
    desk = desk_on(tmp_path)
    _, found = desk.check("q", {"output_dir": "/etc", "checkpoints": "/tmp/x", "colour": "red"})
    assert {p.field for p in found} == {"output_dir", "checkpoints", "colour"}
    assert all(p.message == "not a setting the page can change" for p in found)
    _, found = desk.check("q", {"max_rounds": {"nested": 1}})
    assert [p.field for p in found] == ["max_rounds"]


def test_a_locked_setting_is_refused_at_its_field_before_anything_runs(tmp_path: Path) -> None:
    desk = desk_on(tmp_path)
    _, found = desk.check("q", {"base_url": "http://attacker.example/v1"})
    assert [p.field for p in found] == ["base_url"]
    assert "does not let a run change base_url=" in found[0].message
    assert not (tmp_path / "runs.sqlite").exists() and not (tmp_path / "reports").exists()


def test_bounds_and_the_topic_are_named_per_field_with_context_s_words(tmp_path: Path) -> None:
    settings, found = desk_on(tmp_path).check("   ", {"max_rounds": "9", "report_words": "x"})
    by_field = {p.field: p.message for p in found}
    assert set(by_field) == {"topic", "max_rounds", "report_words"}
    assert "less than or equal to 5" in by_field["max_rounds"]
    assert settings["max_rounds"].origin == "the page's max_rounds"
    _, found = desk_on(tmp_path).check(None, {"max_rounds": "2"})  # no question asked yet
    assert found == []


def test_the_form_shows_the_deployment_s_values_and_where_they_come_from(tmp_path: Path) -> None:
    desk = desk_on(tmp_path, DESKRESEARCH_MAX_ROUNDS="3")
    fields = {f["name"]: f for f in form(desk.check(None, {})[0])["fields"]}
    assert fields["max_rounds"]["value"] == 3
    assert fields["max_rounds"]["origin"] == "DESKRESEARCH_MAX_ROUNDS in the environment"
    assert fields["language"]["value"] == "en-us" and fields["language"]["origin"] == "the default"
    bad = form(desk_on(tmp_path, DESKRESEARCH_MAX_ROUNDS="99").check(None, {})[0])
    assert "DESKRESEARCH_MAX_ROUNDS" in bad["warning"]
