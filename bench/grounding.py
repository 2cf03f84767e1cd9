"""Grounding benchmark: does the citation check catch planted faults and leave correct sentences?

``python -m bench.grounding [--judge-error-rate 0.2] [--judge-batch N] [--local-window N] [--report NAME ...]``

Each report of ``bench/grounding_cases.json`` (hand-labelled cited sentences over ledgers built
from real pages) is put into the real compiled graph as if write_report had just finished
(``aupdate_state(..., as_node="write_report")``), and the graph runs on from there:
check_citations → judge_citations* (one branch per batch) → settle_citations → repair_report →
finish_report, with the real OpenAIChat talking to the fake model over loopback HTTP (served
from its own process, with a latency model: 300 ms a call + 3 ms per output token). The judge and the rewrite are the fake model's heuristics
(tests/support/fake_model.judge/fix): a deterministic stand-in that matches words of the
sentence against the claims and quotes the prompt lists, not an oracle. What it measures is the
product's code around the model: what code decides alone, what it believes of the model, and
what the repair does.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import Counter
from typing import Any

from bench.grounding_data import ROOT, Labelled, Outcome, Report, Run, load_reports
from bench.grounding_report import print_results
from bench.web import web_process
from deskresearch.config.providers import OLLAMA_PORT
from deskresearch.grounding.citations import without_citations

LATENCY = {"call_s": 0.3, "per_out_token_s": 0.003}
CHECK_NODES = ("check_citations", "judge_citations", "settle_citations", "repair_report",
               "recheck_citations", "finish_report")  # fmt: skip


def _values(report: Report) -> dict[str, Any]:
    """The state write_report leaves behind (the graph's own keys, nothing more)."""
    return {
        "topic": report.topic,
        "language": report.language,
        "queries": [report.topic],
        "sources": report.sources,
        "pages": report.pages,
        "draft": report.draft,
        "report_attempts": 1,
        "report_cited": True,
        "checks": [],
        "usage": [],
        "provenance": [],
    }


async def run_report(graph: Any, report: Report, context: Any) -> Run:
    """Inject ``report`` after write_report and let the graph finish it."""
    config = {"configurable": {"thread_id": report.name}}
    await graph.aupdate_state(config, _values(report), as_node="write_report")
    path: list[str] = []
    start = time.perf_counter()
    async for update in graph.astream(None, config, context=context, stream_mode="updates"):
        # The judge's batches run as parallel branches: the path shows them as one step, ×n.
        for node in (n for n in update if n in CHECK_NODES):
            if node == "judge_citations" and path and path[-1].startswith(node):
                seen = int(path[-1].removeprefix(node).removeprefix(" ×") or 1)
                path[-1] = f"{node} ×{seen + 1}"
            else:
                path.append(node)
    wall = time.perf_counter() - start
    out = (await graph.aget_state(config)).values
    calls: Counter[str] = Counter()
    tokens: dict[str, tuple[int, int]] = {}
    for u in out["usage"]:
        calls[u["stage"]] += u["calls"]
        had = tokens.get(u["stage"], (0, 0))
        tokens[u["stage"]] = (had[0] + u["input_tokens"], had[1] + u["output_tokens"])
    if not path or path[0] != "check_citations" or path[-1] != "finish_report":
        raise SystemExit(f"{report.name}: the graph ran {path}, not the citation check")
    return Run(report.name, tuple(path), wall, dict(calls), tokens, list(out["citations"]))


def port_free(port: int) -> bool:
    """Whether nothing listens on ``port`` of the loopback (the fake web may take it)."""
    import socket

    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


def _norm(text: str) -> str:
    return " ".join(without_citations(text).casefold().rstrip(" .").split())


def backed(label: Labelled, c: dict[str, Any], report: Report) -> bool | None:
    """Whether the sentence as the report now has it is stated by the page(s) it now cites.

    The labels say it for a sentence left as written (a correct one with its sources, a
    wrong-source fault moved to its true source); a rewrite is backed when it is the claim of
    a fact of the source it cites (the claims are hand-written from their quotes).
    """
    if c["verdict"] == "removed":
        return None
    if c["verdict"] == "rewritten":
        claims = {_norm(f["claim"]) for s in report.sources if s["id"] in c["sources"]
                  for f in s["facts"]}  # fmt: skip
        return _norm(c["sentence"]) in claims
    if c["verdict"] == "re-cited":
        return label.kind == "wrong-source" and tuple(c["sources"]) == (label.true,)
    return not label.fault


def outcomes(report: Report, run: Run) -> list[Outcome]:
    """Match each labelled sentence to its entry in the result's ``citations``."""
    by_text = {" ".join(c["original"].split()): c for c in run.citations}
    if len(by_text) != len(report.sentences):
        raise SystemExit(
            f"{report.name}: {len(report.sentences)} labelled sentences, "
            f"{len(run.citations)} citations: the draft was split differently"
        )
    found = []
    for label in report.sentences:
        c = by_text.get(" ".join(label.text.split()))
        if c is None:
            raise SystemExit(f"{report.name}: no citation for {label.text!r}")
        found.append(
            Outcome(
                label,
                c["verdict"],
                c["decided_by"],
                tuple(c["sources"]),
                c["reason"],
                c["sentence"],
                backed(label, c, report),
                c.get("dispute"),
            )  # fmt: skip
        )
    return found


async def _bench(
    reports: list[Report], error_rate: float, seed: int, alike: bool, settings: dict[str, Any],
    port: int = 0,
) -> tuple[list[Run], list[Any], float]:  # fmt: skip
    sys.path.insert(0, str(ROOT))
    from langgraph.checkpoint.memory import InMemorySaver

    from tests.support.runs import context_for, graph_for

    model = {"judge_error_rate": error_rate, "judge_seed": seed, "errs_alike": alike}
    with web_process(LATENCY, port=port, model=model) as (web, _):
        graph = graph_for(web, checkpointer=InMemorySaver())
        context = context_for(web, **settings)
        runs = [await run_report(graph, r, context) for r in reports]
    model_s = sum(c.seconds for c in web.log if c.kind == "model")  # the latency model's share
    return runs, web.model.misjudged, model_s


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its tables."""
    parser = argparse.ArgumentParser(prog="python -m bench.grounding", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--judge-error-rate", type=float, default=0.0, metavar="SHARE",
                        help="share of judged sentences the fake judge answers wrongly, in both "
                        "directions, fixed per sentence and prompt (tests/support/misjudge.py)")  # fmt: skip
    parser.add_argument("--judge-seed", type=int, default=0, metavar="N",
                        help="which sentences the erring judge gets wrong (default 0)")  # fmt: skip
    parser.add_argument("--errs-alike", action="store_true",
                        help="every prompt (the judge's, the rewrite's, the third look's) "
                        "misjudges the same sentences: the worst case for asking again")  # fmt: skip
    parser.add_argument(
        "--judge-batch",
        type=int,
        metavar="N",
        help="cited sentences per judge call (default: the judge_batch setting's)",
    )
    parser.add_argument("--local-window", type=int, metavar="TOKENS",
                        help="serve the fake model on Ollama's port (11434, which must be free) "
                        "with summary_context_window TOKENS: the judge's and the rewrite's "
                        "prompts are fitted to that window, as on a local server")  # fmt: skip
    parser.add_argument("--report", action="append", metavar="NAME",
                        help="run only this report (repeatable)")  # fmt: skip
    args = parser.parse_args(argv)
    if not 0.0 <= args.judge_error_rate <= 1.0:
        parser.error("--judge-error-rate must be between 0 and 1")
    reports = load_reports(set(args.report) if args.report else None)
    if not reports:
        parser.error(f"no report named {args.report}")
    settings: dict[str, Any] = {"judge_batch": args.judge_batch} if args.judge_batch else {}
    port = 0
    if args.local_window:
        if not port_free(OLLAMA_PORT):
            parser.error(f"--local-window serves the fake model on port {OLLAMA_PORT}: it is taken")
        settings["summary_context_window"], port = args.local_window, OLLAMA_PORT
        settings["base_url"] = f"http://127.0.0.1:{OLLAMA_PORT}/v1"  # the run's endpoint: local
    runs, misjudged, model_s = asyncio.run(
        _bench(reports, args.judge_error_rate, args.judge_seed, args.errs_alike, settings, port)
    )
    results = [o for r, run in zip(reports, runs, strict=True) for o in outcomes(r, run)]
    print_results(results, runs, misjudged, error_rate=args.judge_error_rate,
                  model_s=model_s / len(runs), alike=args.errs_alike)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
