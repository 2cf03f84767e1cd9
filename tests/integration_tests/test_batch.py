"""`deskresearch batch FILE` in one process, as a user runs it, against the loopback web."""

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from bench.measure import peak_overlap
from tests.support.batches import ROOT, batch, calls_per_topic, summary, topic_of, write_topics
from tests.support.fake_model import FailingTopics, FakeModel
from tests.support.loopback import FakeWeb, Latency, serve
from tests.support.runs import loopback_env

TOPICS = [
    "EV battery recycling",
    "Night trains in Europe",
    "Heat pumps in old houses",
    "Urban beekeeping",
]


def env_for(web: FakeWeb, tmp_path: Path, **extra: str) -> dict[str, str]:
    """The loopback web, checkpoints in tmp_path, and smaller runs (2 queries × 2 pages)."""
    small = {"DESKRESEARCH_DECOMPOSITION_NUMS": "2", "DESKRESEARCH_URL_PER_QUERY": "2"}
    checkpoints = str(tmp_path / "runs.sqlite")
    return loopback_env(web, DESKRESEARCH_CHECKPOINTS=checkpoints, **(small | extra))


def test_a_batch_writes_every_report_and_its_summary_and_shares_the_call_limit(
    tmp_path: Path,
) -> None:
    file = write_topics(tmp_path / "topics.txt", TOPICS)
    out = tmp_path / "out"
    with serve(FakeWeb(latency=Latency(call_s=0.05))) as web:
        proc = batch(env_for(web, tmp_path), str(file), "-o", str(out), "--concurrency", "4",
                     "--max-model-calls", "2")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out / "batch.json")
    data = summary(out)
    rows = [data["by_line"][i] for i in range(1, 5)]
    assert [r["status"] for r in rows] == ["ok"] * 4 and {r["run"] for r in rows} == {"new"}
    assert len({r["thread_id"] for r in rows}) == 4
    for topic, row in zip(TOPICS, rows, strict=True):
        report = Path(row["files"][0]).read_text(encoding="utf-8")
        assert row["words"] > 10 and "[1]" in report and row["cited"] >= 1 and row["tokens_in"] > 0
        assert Path(row["files"][-1]).is_file() and topic in Path(row["files"][-1]).read_text(
            "utf-8"
        )
        # No attempt was lost: the batch's accounting is each result's own, cost included.
        totals = json.loads(Path(row["files"][-1]).read_text("utf-8"))["totals"]
        assert (row["model_calls"], row["tokens_in"]) == (totals["calls"], totals["input_tokens"])
        assert row["cost_usd"] == totals["estimated_cost_usd"] and row["cost_usd"] > 0
    with (out / "batch.csv").open(encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert [r["topic"] for r in table] == TOPICS and all(r["status"] == "ok" for r in table)
    assert all(float(r["cost_usd"]) > 0 for r in table)
    assert f"line 3: ok: {TOPICS[2]}" in proc.stderr  # plain lines: stderr is not a terminal
    # One limit for the whole batch: never more than 2 model calls in flight across 4 topics...
    model = [c for c in web.log if c.kind == "model"]
    assert peak_overlap(web.log, "model") <= 2
    # ...while the topics did run at the same time (each one's calls interleave with others').
    spans = {t: [c.started for c in model if topic_of(c) == t] for t in TOPICS}
    assert max(min(s) for s in spans.values()) < min(max(s) for s in spans.values())


def test_pages_are_read_once_across_topics_through_the_shared_cache(tmp_path: Path) -> None:
    file = write_topics(tmp_path / "topics.txt", TOPICS[:3])
    out = tmp_path / "out"
    with serve(FakeWeb()) as web:
        env = env_for(web, tmp_path, DESKRESEARCH_CACHE="true",
                      DESKRESEARCH_CACHE_PATH=str(tmp_path / "cache.sqlite"))  # fmt: skip
        proc = batch(env, str(file), "-o", str(out), "--concurrency", "1")
    assert proc.returncode == 0, proc.stderr
    cited = [
        {s["url"] for s in json.loads(Path(r["files"][-1]).read_text("utf-8"))["sources"]}
        for r in summary(out)["topics"]
    ]
    shared = cited[0] & cited[1] | cited[1] & cited[2] | cited[0] & cited[2]
    assert shared, "the topics should share some pages for this test to mean anything"
    pages = {k: n for k, n in web.fetches.items() if k.startswith("/pages/")}
    assert pages and max(pages.values()) == 1, pages


def test_bad_lines_are_named_and_skipped_and_the_other_topics_run(
    web: FakeWeb, tmp_path: Path
) -> None:
    lines = [
        TOPICS[0],  # 1
        "",  # 2: blank, ignored
        '{"topic": "   "}',  # 3
        '{"topic": "Night trains", "language": ',  # 4
        '{"topic": "Night trains", "langauge": "de"}',  # 5
        '{"topic": "Night trains", "url_per_query": 99}',  # 6
        TOPICS[0],  # 7: a repeat
        "# a comment",  # 8
        '{"topic": "Nachtzüge in Europa", "language": "de", "url_per_query": 2}',  # 9
    ]
    file = write_topics(tmp_path / "topics.txt", lines)
    out = tmp_path / "out"
    proc = batch(env_for(web, tmp_path), str(file), "-o", str(out), "--format", "md+html")
    assert proc.returncode == 3, proc.stderr  # lines were skipped: a setting or input to fix
    err = proc.stderr
    assert "line 3 skipped: topic is empty" in err
    assert "line 4 skipped: malformed JSON" in err
    assert "line 5 skipped: unknown setting 'langauge': did you mean 'language'?" in err
    assert "line 6 skipped: invalid setting" in err and "url_per_query=99" in err
    assert "line 7 skipped: repeats line 1" in err
    rows = summary(out)["by_line"]
    assert {n: r["status"] for n, r in rows.items()} == {
        1: "ok", 3: "bad_line", 4: "bad_line", 5: "bad_line", 6: "bad_line", 7: "bad_line", 9: "ok"
    }  # fmt: skip
    assert [Path(f).suffix for f in rows[1]["files"]] == [".md", ".html", ".json"]
    german = Path(rows[9]["files"][-1]).read_text(encoding="utf-8")
    assert '"language": "de"' in german and '"url_per_query": 2' in german
    assert "2 topics: 2 ok; 5 lines skipped" in err


def test_one_topic_and_one_bad_line_are_counted_in_the_singular(
    web: FakeWeb, tmp_path: Path
) -> None:
    file = write_topics(tmp_path / "topics.txt", [TOPICS[0], '{"topic": ""}'])
    proc = batch(env_for(web, tmp_path), str(file), "-o", str(tmp_path / "out"))
    assert proc.returncode == 3, proc.stderr  # a line was skipped: an input to fix
    assert ": 1 topic in this process;" in proc.stderr
    assert "1 topic: 1 ok; 1 line skipped" in proc.stderr
    assert not re.search(r"\b1 (topics|lines|words|sources|results)\b", proc.stderr)


def test_a_failing_topic_loses_no_one_else_and_reruns_redo_only_what_is_unfinished(
    tmp_path: Path,
) -> None:
    doomed = "Doomed topic about nothing"
    file = write_topics(tmp_path / "topics.txt", [TOPICS[0], doomed, TOPICS[1]])
    out = tmp_path / "out"
    web = FakeWeb(model=FailingTopics(topics=(doomed,)))
    with serve(web):
        env = env_for(web, tmp_path)
        first = batch(env, str(file), "-o", str(out))
        rows = summary(out)["by_line"]
        assert first.returncode == 4, first.stderr  # a topic failed
        assert [rows[i]["status"] for i in (1, 2, 3)] == ["ok", "failed", "ok"]
        assert "500" in rows[2]["error"] and f"line 2: failed: {doomed}" in first.stderr
        assert Path(rows[1]["files"][0]).is_file() and Path(rows[3]["files"][0]).is_file()
        assert "run the same command again" in first.stderr
        kept = {i: rows[i]["files"] for i in (1, 3)}

        web.model = FakeModel()  # the provider recovers
        seen = len(web.log)
        second = batch(env, str(file), "-o", str(out))
        assert second.returncode == 0, second.stderr
        rows = summary(out)["by_line"]
        assert [rows[i]["run"] for i in (1, 2, 3)] == ["earlier", "resumed", "earlier"]
        asked = calls_per_topic(web.log[seen:])  # "": the judge's, whose prompt names no topic
        assert asked[doomed] and not set(asked) - {doomed, ""}  # the others asked nothing
        assert rows[1]["wall_s"] > 0  # the earlier run's time is kept
        assert {i: rows[i]["files"] for i in (1, 3)} == kept  # the finished topics' own files
        assert len(list(out.glob("*.md"))) == 3  # one report a topic, no <slug>-2.md copies

        seen = len(web.log)
        third = batch(env, str(file), "-o", str(out))
        assert third.returncode == 0, third.stderr
        assert web.log[seen:] == []  # no model call, search or fetch at all
        assert {r["run"] for r in summary(out)["topics"]} == {"earlier"}
        assert len(list(out.glob("*.md"))) == 3 and len(list(out.glob("*.json"))) == 4


SETTLED_S = 1.0


def test_a_killed_batch_resumes_its_topics_without_redoing_finished_steps(tmp_path: Path) -> None:
    file = write_topics(tmp_path / "topics.txt", TOPICS[:3])
    out = tmp_path / "out"
    web = FakeWeb(latency=Latency(call_s=0.3, fetch_s=0.1))
    with serve(web):
        env = env_for(web, tmp_path)
        args = [sys.executable, "-m", "deskresearch", "batch", str(file), "-o", str(out)]
        first = subprocess.Popen(args, env=env, cwd=ROOT, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 90
        while (
            sum(c.key == "ChunkSummary" for c in web.log) < 4
            or time.time() - web.log[0].started < SETTLED_S + 1.0
        ):
            assert first.poll() is None and time.monotonic() < deadline, "batch ended too early"
            time.sleep(0.02)
        os.kill(first.pid, signal.SIGKILL)
        killed_at = time.time()
        first.wait()
        time.sleep(0.5)  # calls in flight at the kill finish server-side: they count as before
        before = list(web.log)
        second = batch(env, str(file), "-o", str(out))
        after = web.log[len(before) :]
    assert second.returncode == 0, second.stderr
    rows = summary(out)["topics"]
    assert [r["status"] for r in rows] == ["ok"] * 3 and "resumed" in {r["run"] for r in rows}
    settled = {
        (topic_of(c), str(c.body.get("messages")))
        for c in before
        if c.kind == "model" and c.started + c.seconds < killed_at - SETTLED_S
    }
    again = {(topic_of(c), str(c.body.get("messages"))) for c in after if c.kind == "model"}
    assert settled and not settled & again
    assert not [c for c in after if c.kind == "model" and c.key in ("Keywords", "QueryPlan")]


def test_ray_refuses_checkpoints_other_nodes_cannot_reach(tmp_path: Path) -> None:
    file = write_topics(tmp_path / "topics.txt", TOPICS[:1])
    env = {k: v for k, v in os.environ.items() if not k.startswith("DESKRESEARCH_")}
    proc = batch(env, str(file), "--ray", "auto", "--checkpoints", str(tmp_path / "x.sqlite"))
    assert proc.returncode == 3
    assert "--ray needs checkpoints every node reaches" in proc.stderr
    assert "postgresql://" in proc.stderr and "Traceback" not in proc.stderr


def test_tavily_low_on_credits_is_said_once_for_the_whole_batch(
    web: FakeWeb, tmp_path: Path
) -> None:
    """2 keywords + 2 queries + 3 leads, and a line of one round (no leads): 7 + 4 searches, 10
    credits left. Said once (--quiet too), before the topics run."""
    web.key_credits = {"tvly-low": (990, 1000)}
    file = write_topics(tmp_path / "topics.txt", [TOPICS[0], '{"topic": "Urban beekeeping", '
                                                  '"max_rounds": 1}'])  # fmt: skip
    env = env_for(web, tmp_path, TAVILY_API_KEY="tvly-low", TAVILY_HTTP_PROXY=web.base,
                  DESKRESEARCH_TAVILY_BASE_URL="http://api.tavily.com")  # fmt: skip
    proc = batch(env, str(file), "-o", str(tmp_path / "out"), "-q")
    assert proc.returncode == 0, proc.stderr
    notes = [line for line in proc.stderr.splitlines() if "note:" in line]
    assert notes == [
        "deskresearch: note: the search engine tavily at http://api.tavily.com has 10 credits "
        "left (this key: 990 of 1,000 used); this batch makes up to 11 searches, and those past "
        "its credits fail (the run goes on with what the others found). Add credits at "
        "app.tavily.com, or name another engine with --search"
    ]
