"""Regenerate the README's picture of the HTML report: ``python -m bench.html_screenshot [PNG]``.

Not a benchmark: one offline run of the real graph against the test suite's loopback web and
fake model, rendered with ``render_html`` and photographed in Debian's chromium. The fake model's
report is planted with the faults the citation check exists for, so the picture shows each
outcome: a sentence pinned on the wrong source (re-cited), one that paraphrases its source too
loosely (rewritten) and an invented one (removed, listed under "Citation check").
"""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "html-report.png"
TOPIC = "EV battery recycling"
_LINE = re.compile(r"^- (.+) \[(\d+)\]\.$", re.MULTILINE)
FILLER = "according to several recent studies this hardly matters anymore"


def plant(report: str) -> str:
    """Pin the 2nd line on the 3rd line's source; loosen the 4th line's wording."""
    lines = _LINE.findall(report)
    if len(lines) < 4:
        return report
    (_, _), (claim2, id2), (_, id3), (claim4, id4) = lines[:4]
    report = report.replace(f"- {claim2} [{id2}].", f"- {claim2} [{id3}].", 1)
    words = [w for w in claim4.split() if len(re.sub(r"\W", "", w)) >= 4][:4]
    return report.replace(f"- {claim4} [{id4}].", f"- {' '.join(words)} {FILLER} [{id4}].", 1)


async def result() -> dict[str, Any]:
    """One offline run with the planted report."""
    from tests.support.fake_model import REPORT
    from tests.support.loopback import serve
    from tests.support.runs import run

    with serve() as web:
        web.model.fail(REPORT, "unknown_citation")  # "An invented claim ... [1]": removed
        answer = web.model._answer

        def planted(stage: str, user: str, fault: str) -> Any:
            out = answer(stage, user, fault)
            return plant(out) if stage == REPORT and isinstance(out, str) else out

        web.model._answer = planted  # type: ignore[method-assign]
        return await run(web, TOPIC, report_mode="single")


def main(out: Path = OUT) -> int:
    """Run, render, open the changed sentences' evidence, photograph the top of the page."""
    sys.path.insert(0, str(ROOT))
    from deskresearch.report.html import render_html
    from tests.support import browser

    data = asyncio.run(result())
    verdicts = [c["verdict"] for c in data["citations"]]
    print("verdicts:", ", ".join(verdicts))
    with tempfile.TemporaryDirectory() as tmp:
        page_file = Path(tmp) / "report.html"
        page_file.write_text(render_html(data, topic=TOPIC), encoding="utf-8")
        with browser.chromium() as chromium:
            page = chromium.new_page(viewport={"width": 1000, "height": 1180})
            page.goto(page_file.as_uri())
            for i, verdict in enumerate(verdicts):
                if verdict in ("re-cited", "rewritten"):
                    page.click(f"#ev-btn-{i}")
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
    print(f"wrote {out} ({out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
