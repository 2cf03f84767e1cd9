"""`deskresearch batch --server URL`: the batch on a `langgraph dev` server, through langgraph-sdk."""

from pathlib import Path

import pytest

from tests.integration_tests.served.conftest import SERVED
from tests.support.batches import batch, calls_per_topic, summary, write_topics
from tests.support.loopback import FakeWeb
from tests.support.runs import loopback_env

pytestmark = pytest.mark.xdist_group(SERVED)


TOPICS = ["EV battery recycling", "Night trains in Europe", "Heat pumps in old houses"]


def test_a_batch_on_a_server_writes_every_report_and_a_rerun_asks_nothing(
    server: str,
    web: FakeWeb,
    tmp_path: Path,
) -> None:
    file = write_topics(tmp_path / "topics.txt", TOPICS)
    out = tmp_path / "out"
    # The server has its own keys; this process sends only the settings it was given.
    env = {k: v for k, v in loopback_env(web).items() if not k.endswith("_API_KEY")}
    args = [str(file), "-o", str(out), "--server", server, "--concurrency", "2",
            "--url-per-query", "2"]  # fmt: skip
    seen = len(web.log)
    first = batch(env, *args)
    assert first.returncode == 0, first.stderr
    rows = summary(out)["topics"]
    assert [r["status"] for r in rows] == ["ok"] * 3 and {r["node"] for r in rows} == {server}
    for row in rows:
        saved = Path(row["files"][-1]).read_text(encoding="utf-8")
        assert '"url_per_query": 2' in saved and Path(row["files"][0]).read_text("utf-8").count(
            "[1]"
        )
    assert set(calls_per_topic(web.log[seen:])) - {""} == set(TOPICS)

    seen = len(web.log)
    second = batch(env, *args)
    assert second.returncode == 0, second.stderr
    assert web.log[seen:] == []  # the server's threads are found finished: nothing is asked
    assert {r["run"] for r in summary(out)["topics"]} == {"earlier"}


def test_no_server_at_the_url_is_one_clear_error(tmp_path: Path) -> None:
    file = write_topics(tmp_path / "topics.txt", TOPICS[:1])
    proc = batch({}, str(file), "-o", str(tmp_path / "out"), "--server", "http://127.0.0.1:9")
    assert proc.returncode == 4  # a server does not answer
    assert "no LangGraph server answers at http://127.0.0.1:9 (nothing accepts" in proc.stderr
    assert "Traceback" not in proc.stderr
