"""The grounding benchmark's tables: outcomes by category, the targets, and what went wrong."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

from bench.grounding_data import CORRECT, FAULTS, Outcome, Run

VERDICTS = ("supported", "re-cited", "rewritten", "removed", "unchecked")
CHANGED = ("re-cited", "rewritten", "removed")  # a fault caught; a correct sentence flagged
EXTRA_STAGES = ("judge_citations", "repair_report", "recheck_citations")


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.1f}%)" if d else "0/0"


def _tokens(runs: Sequence[Run], stage: str) -> str:
    pairs = [r.tokens.get(stage, (0, 0)) for r in runs]
    mean_in, mean_out = (statistics.fmean(p[i] for p in pairs) for i in (0, 1))
    return f"{mean_in:.0f} → {mean_out:.0f}"


def category_table(results: Sequence[Outcome]) -> list[str]:
    """One row per kind of sentence and language situation: how it was judged, and by whom."""
    rows = [
        "| sentences | report vs source | n | supported | re-cited | rewritten | removed "
        "| unchecked | by code | by model | outcome |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for kind in (*CORRECT, *FAULTS):
        for cross in (False, True):
            group = [o for o in results if o.label.kind == kind and o.label.cross == cross]
            if not group:
                continue
            v = Counter(o.verdict for o in group)
            by = Counter(o.decided_by for o in group)
            changed = sum(v[x] for x in CHANGED)
            outcome = (f"caught {_pct(changed, len(group))}" if kind in FAULTS
                       else f"kept {_pct(v['supported'], len(group))}")  # fmt: skip
            rows.append(
                f"| {kind} | {'other language' if cross else 'same language'} | {len(group)} | "
                + " | ".join(str(v[x]) for x in VERDICTS)
                + f" | {by['lexical']} | {by['model']} | {outcome} |"
            )
    return rows


def repair_needed_anyway(run: Run) -> bool:
    """Whether the rewrite call had work without the disputes the judge's "stated" raised.

    A sentence found unsupported by code, or by the judge (disputed or not), goes to the rewrite
    as it always did; only a "stated" verdict code doubted (not for certain) is sent there anew.
    """
    for c in run.citations:
        d = c.get("dispute")
        if d is None and c["verdict"] in ("rewritten", "removed"):
            return True
        if d is not None and (d["judge"] == "unsupported" or d["settled_by"] == "code"):
            return True
    return False


def weighing_calls(runs: Sequence[Run]) -> tuple[int, int]:
    """Calls made only to weigh verdicts: third looks, and rewrite calls only disputes needed."""
    third = sum(r.calls.get("recheck_citations", 0) for r in runs)
    rewrite = sum(r.calls.get("repair_report", 0) for r in runs if not repair_needed_anyway(r))
    return third, rewrite


def summary_table(results: Sequence[Outcome], runs: Sequence[Run], model_s: float) -> list[str]:
    """The issue's targets and the other numbers it asks for."""
    faults = [o for o in results if o.label.fault]
    correct = [o for o in results if not o.label.fault]
    caught = sum(o.verdict in CHANGED for o in faults)
    flagged = sum(o.verdict in CHANGED for o in correct)
    kept = [o for o in correct if o.kept]
    shown = [o for o in results if o.backed is not None]
    wrong_source = [o for o in faults if o.label.kind == "wrong-source"]
    to_true = sum(o.verdict == "re-cited" and o.sources == (o.label.true,) for o in wrong_source)
    cross = [o for o in results if o.label.cross]
    cross_by = Counter(o.decided_by for o in cross)
    cross_passed = sum(o.decided_by == "lexical" and o.verdict == "supported" for o in cross)
    lexical = [o for o in results if o.decided_by == "lexical"]
    lex_kept = sum(o.verdict == "supported" for o in lexical)
    calls = [sum(r.calls.get(s, 0) for s in EXTRA_STAGES) for r in runs]
    by_stage = {s: sum(r.calls.get(s, 0) for r in runs) for s in EXTRA_STAGES}
    third, rewrite_only = weighing_calls(runs)
    judge_calls = by_stage["judge_citations"]
    walls = [r.wall_s for r in runs]
    held = [o for o in results if o.label.held_out]
    held_faults = [o for o in held if o.label.fault]
    held_rows = (
        [
            f"| of which in the held-out report ({held[0].label.report}, written after the rules below) "
            f"| faults caught {_pct(sum(o.verdict in CHANGED for o in held_faults), len(held_faults))}"
            f", correct changed {_pct(sum(o.verdict in CHANGED for o in held if not o.label.fault), len(held) - len(held_faults))} | |"
        ]
        if held
        else []
    )
    return [
        "| measure | result | target |",
        "|---|---|---|",
        f"| planted faults caught (re-cited, rewritten or removed) | {_pct(caught, len(faults))} "
        "| ≥ 95% |",
        f"| planted faults left unchecked (not caught) | "
        f"{sum(o.verdict == 'unchecked' for o in faults)} | |",
        f"| wrong-source faults re-cited to the source that states them | "
        f"{_pct(to_true, len(wrong_source))} | |",
        f"| correct sentences kept as written with their true source(s) | "
        f"{_pct(len(kept), len(correct))}, of which unchecked: "
        f"{sum(o.verdict == 'unchecked' for o in kept)} | ≥ 97% |",
        f"| cited sentences in the final reports stated by the page they cite | "
        f"{_pct(sum(bool(o.backed) for o in shown), len(shown))} | ≥ 95% |",
        f"| correct sentences changed or removed | {_pct(flagged, len(correct))} | ≤ 3% |",
        *held_rows,
        f"| correct sentences left unchecked | {sum(o.verdict == 'unchecked' for o in correct)} "
        "| |",
        f"| other-language sentences decided by the model | {_pct(cross_by['model'], len(cross))}"
        f"; by code: {cross_by['lexical']} (a figure in no source), passed by code: "
        f"{cross_passed} | passed by code: 0 |",
        f"| sentences the code decided alone | {_pct(len(lexical), len(results))}: "
        f"{lex_kept} supported, {len(lexical) - lex_kept} with a figure in no source | |",
        f"| extra model calls per report (judge batches + rewrite + third look) | mean "
        f"{statistics.fmean(calls):.2f}, max {max(calls)} ({judge_calls} judge + "
        f"{by_stage['repair_report']} rewrite + {by_stage['recheck_citations']} third-look calls, "
        f"{len(runs)} reports) | judge: ceil(pending / judge_batch), at once; rewrite ≤ 1; "
        "third look ≤ 1 |",
        f"| calls made only to weigh disputed verdicts (third looks + rewrite calls nothing "
        f"else needed) | {third} + {rewrite_only} = {third + rewrite_only}, "
        f"{100 * (third + rewrite_only) / max(1, judge_calls):.1f}% of the judge's calls "
        "| ≤ 15% |",
        f"| tokens per report, judge / rewrite (in → out) | {_tokens(runs, 'judge_citations')} / "
        f"{_tokens(runs, 'repair_report')} | |",
        f"| wall time added per report (check → finish) | mean {statistics.fmean(walls):.2f} s "
        f"(latency model: {model_s:.2f} s summed over the calls, which partly overlap), "
        f"max {max(walls):.2f} s | |",
    ]


def misses(results: Sequence[Outcome]) -> list[str]:
    """Every fault not caught, every correct sentence changed or left unchecked, and why."""
    lines = []
    for o in results:
        missed = o.label.fault and o.verdict not in CHANGED
        flagged = not o.label.fault and o.verdict != "supported"
        if missed or flagged:
            what = "MISSED" if missed else "LEFT UNCHECKED" if o.kept else "FLAGGED"
            lines.append(
                f"- {what} [{o.label.report}, {o.label.kind}"
                f"{', other language' if o.label.cross else ''}] {o.label.text}\n"
                f"  → {o.verdict} by {o.decided_by}: {o.reason}"
                + (f"\n  now: {o.sentence}" if o.sentence and o.sentence != o.label.text else "")
            )
    return lines


def misjudged_table(results: Sequence[Outcome], misjudged: Sequence[dict[str, Any]]) -> list[str]:
    """What became of the judge's deliberately wrong answers (once per sentence and prompt)."""
    by_text = {" ".join(o.label.text.split()): o for o in results}
    rows = [
        "| prompt | wrong answer | on | n | believed (as the judge said) | overruled | left unchecked |",
        "|---|---|---|---|---|---|---|",
    ]
    groups: dict[tuple[str, str, bool], dict[str, Outcome]] = {}
    for w in misjudged:
        o = by_text.get(" ".join(w["text"].split()))
        if o is not None:  # a sentence asked twice in one prompt errs the same way: once
            groups.setdefault((w.get("prompt", ""), w["kind"], o.label.fault), {})[w["text"]] = o
    for (prompt, kind, fault), found in sorted(groups.items()):
        said_supported = kind == "false supported"
        believed = sum(
            o.verdict == "supported" if said_supported else o.verdict in ("rewritten", "removed")
            for o in found.values()
        )
        unchecked = sum(o.verdict == "unchecked" for o in found.values())
        on = "planted fault" if fault else "correct sentence"
        rows.append(f"| {prompt} | {kind} | {on} | {len(found)} | {believed} | "
                    f"{len(found) - believed - unchecked} | {unchecked} |")  # fmt: skip
    return rows


def disputes_table(results: Sequence[Outcome]) -> list[str]:
    """The verdicts code disputed, how each was settled, and whether the report got it right."""
    rows = [
        "| the judge said | on | settled by | n | report right (fault caught / correct kept) "
        "| left unchecked |",
        "|---|---|---|---|---|---|",
    ]
    groups: dict[tuple[str, bool, str], list[Outcome]] = {}
    for o in results:
        if o.dispute:
            said = "not stated" if o.dispute["judge"] == "unsupported" else "stated"
            key = (said, o.label.fault, o.dispute["settled_by"])
            groups.setdefault(key, []).append(o)
    for (said, fault, by), found in sorted(groups.items()):
        right = sum(o.verdict in CHANGED if fault else o.kept for o in found)
        rows.append(
            f"| {said} | {'planted fault' if fault else 'correct sentence'} | {by} | {len(found)} "
            f"| {right} | {sum(o.verdict == 'unchecked' for o in found)} |"
        )
    return rows


def print_results(
    results: Sequence[Outcome],
    runs: Sequence[Run],
    misjudged: Sequence[dict[str, Any]],
    *,
    error_rate: float,
    model_s: float,
    alike: bool = False,
) -> None:
    """Print every table (markdown) and the list of misses."""
    paths = Counter(" → ".join(r.path) for r in runs)
    print(f"# Grounding benchmark: {len(results)} labelled cited sentences, {len(runs)} reports\n")
    erring = (f", answering wrongly for {error_rate:.0%} of the sentences it judges, in both "
              "directions, " + ("the same sentences whatever the prompt" if alike else
                                "drawn anew for each prompt built differently")) if error_rate else ""  # fmt: skip
    print("Judge and rewrite: the fake model's word-overlap heuristics (a deterministic stand-in, "
          f"not an oracle){erring}.\n")  # fmt: skip
    print("\n".join(category_table(results)), end="\n\n")
    print("\n".join(summary_table(results, runs, model_s)), end="\n\n")
    print("Nodes run after the injected draft:")
    print("\n".join(f"- {path}: {n} report(s)" for path, n in paths.items()), end="\n\n")
    disputed = [o for o in results if o.dispute]
    print(f"Verdicts code disputed ({len(disputed)}):\n")
    print("\n".join(disputes_table(results)), end="\n\n")
    if error_rate:
        print(f"The judge's wrong answers ({len(misjudged)}):\n")
        print("\n".join(misjudged_table(results, misjudged)), end="\n\n")
    wrong = misses(results)
    print(f"Faults missed, correct sentences changed or left unchecked ({len(wrong)}):")
    print("\n".join(wrong) if wrong else "- none")
