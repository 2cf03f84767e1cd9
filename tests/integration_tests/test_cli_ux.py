"""The command line as people meet it: help, errors, files kept, runs listed, Ctrl-C, live panel."""

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import deskresearch
from tests.integration_tests.test_cli import cli, validate
from tests.support.loopback import FakeWeb, Latency, serve
from tests.support.runs import loopback_env
from tests.support.terminal import in_terminal

ROOT = Path(__file__).parents[2]
TOPIC = "EV battery recycling"
COLOUR = re.compile(r"\x1b\[[\d;]*(3[0-7]|9[0-7]|38;[25];[\d;]+)m")  # a foreground colour


def test_version_and_help_answer_without_a_run() -> None:
    version = cli(None, "--version")
    assert (
        version.returncode == 0
        and version.stdout.strip() == f"deskresearch {deskresearch.__version__}"
    )
    text = cli(None, "--help").stdout
    assert "examples:" in text and "deskresearch runs" in text
    assert "pages settings:" in text and "--cache, --no-cache" in text
    assert ".pdf" in text.split("--corpus-dir")[1].split("--")[0]


def test_nothing_is_created_on_disk_when_the_settings_check_fails(tmp_path: Path) -> None:
    where = ["--checkpoints", str(tmp_path / "store" / "runs.sqlite"), "-o", str(tmp_path / "out"),
             "--cache-path", str(tmp_path / "cache" / "cache.sqlite"), "--cache"]  # fmt: skip
    no_endpoint = cli(None, TOPIC, *where)
    assert no_endpoint.returncode == 3 and "OPENAI_API_KEY" in no_endpoint.stderr
    assert len(no_endpoint.stderr.strip().splitlines()) == 1
    bad_flag = cli(None, TOPIC, *where, "--max-fetches", "0", env={"OPENAI_API_KEY": "sk-x"})
    assert bad_flag.returncode == 3 and "from the flag --max-fetches" in bad_flag.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_bad_variable_is_named_with_its_fix() -> None:
    proc = cli(None, TOPIC, env={"OPENAI_API_KEY": "sk-x", "DESKRESEARCH_PAGE_TIMEOUT_S": "soon"})
    assert proc.returncode == 3
    assert "from DESKRESEARCH_PAGE_TIMEOUT_S in the environment" in proc.stderr
    assert "change or unset DESKRESEARCH_PAGE_TIMEOUT_S" in proc.stderr


def test_a_second_run_keeps_the_first_report_and_runs_lists_both(
    web: FakeWeb, tmp_path: Path
) -> None:
    store = {"DESKRESEARCH_CHECKPOINTS": str(tmp_path / "runs.sqlite")}
    out = tmp_path / "reports"
    first = cli(web, TOPIC, "-o", str(out), "-q", env=store)
    second = cli(web, TOPIC, "-o", str(out), "-q", "--language", "German", env=store)
    assert first.returncode == second.returncode == 0, second.stderr
    # --quiet: the outcome only, one line on stderr and the report's path on stdout
    assert first.stderr.strip() == "ok: " + " ".join(
        str(out / f"ev-battery-recycling.{x}") for x in ("md", "json")
    )
    assert second.stdout.strip() == str(out / "ev-battery-recycling-2.md")
    docs = [
        validate(out / "ev-battery-recycling.json"),
        validate(out / "ev-battery-recycling-2.json"),
    ]
    assert [d["language"] for d in docs] == ["en-us", "German"]  # the first was not overwritten
    # No -o: `runs` finds each run's files where its own -o put them (saved with the run).
    listed = cli(None, "runs", "--json", env=store)
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [r["thread_id"] for r in rows] == [docs[1]["thread_id"], docs[0]["thread_id"]]
    assert {r["status"] for r in rows} == {"ok"} and {r["topic"] for r in rows} == {TOPIC}
    assert rows[0]["files"] == [
        str(out / "ev-battery-recycling-2.md"),
        str(out / "ev-battery-recycling-2.json"),
    ]


def test_ctrl_c_says_what_was_saved_and_the_command_that_resumes_it(tmp_path: Path) -> None:
    web = FakeWeb(latency=Latency(call_s=0.3, fetch_s=0.1))
    store = str(tmp_path / "runs.sqlite")
    with serve(web):
        env = loopback_env(web)
        args = [TOPIC, "-q", "-o", str(tmp_path / "out"), "--checkpoints", store]
        proc = subprocess.Popen(
            [sys.executable, "-m", "deskresearch", *args], env=env, cwd=ROOT, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 90
        while sum(c.key == "ChunkSummary" for c in web.log) < 2:  # a state: pages summarised
            assert proc.poll() is None and time.monotonic() < deadline, "run ended too early"
            time.sleep(0.02)
        web.hold()  # the run cannot finish now, however slow the machine: Ctrl-C lands mid-run
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the whole foreground process group
        out, err = proc.communicate(timeout=60)
        web.release()
        assert proc.returncode == 130, err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in err, err  # --quiet: that one line only
        assert re.search(r"finished work \(\d+ searches, .*\d+ pages read", lines[0]), lines[0]
        command = shlex.split(lines[0].split("resume with: ")[1])
        assert command[:2] == ["deskresearch", "--resume"] and store in command
        listed = cli(None, "runs", "--checkpoints", store, "--json")
        assert json.loads(listed.stdout)["status"] == "unfinished"

        resumed = subprocess.run(
            [sys.executable, "-m", "deskresearch", *command[1:]], env=env, cwd=ROOT,
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    doc = validate(tmp_path / "out" / "ev-battery-recycling.json")
    assert doc["run"]["resumed"] is True and doc["thread_id"] == command[2]
    assert json.loads(cli(None, "runs", "--checkpoints", store, "--json").stdout)["status"] == "ok"


def test_a_terminal_gets_a_live_panel_in_colour_unless_no_color(
    web: FakeWeb, tmp_path: Path
) -> None:
    env = loopback_env(web, DESKRESEARCH_CHECKPOINTS="memory")
    code, screen = in_terminal([TOPIC, "-o", str(tmp_path / "a")], env)
    assert code == 0, screen[-2000:]
    plain = re.sub(r"\x1b\[[\d;?]*[A-Za-z]", "", screen)
    final = plain[plain.rindex("deskresearch · EV battery recycling") :]
    for line in ("keywords", "searches", "pages read", "chunks summarised", "report sections"):
        assert line in final
    assert re.search(r"✓ pages read +(\d+)/\1 ", final) and "elapsed" in final and "tokens" in final
    assert "[read_page]" not in plain  # the panel, not the plain lines
    assert COLOUR.search(screen)
    code, screen = in_terminal([TOPIC, "-o", str(tmp_path / "b")], {**env, "NO_COLOR": "1"})
    assert code == 0 and "chunks summarised" in screen and not COLOUR.search(screen)
