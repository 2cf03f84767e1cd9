"""Regenerate the README's picture of ``deskresearch ui``: ``python -m bench.ui_screenshot [PNG]``.

Not a benchmark: the command as a user starts it, against the loopback web (with the CLI
benchmark's latency model, so the panel's times are a real run's) and the fake model, driven by
Debian's chromium. Three questions are asked one after the other, so the list has something to
come back to; the last one is shown finished, with its panel (folded when a run ends) open.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "ui.png"
QUESTIONS = [
    "What limits the growth of night trains in Europe?",
    "How do open licences change how research is evaluated?",
    "How are lithium-ion batteries from electric cars recycled?",
]


def main(out: Path = OUT) -> int:
    """Ask, wait for each report, open the last one's panel, photograph the page."""
    sys.path.insert(0, str(ROOT))
    from bench.cli_mode import LATENCY
    from bench.web import web_process
    from tests.support import browser
    from tests.support.desk import served

    with web_process(LATENCY) as (web, _), tempfile.TemporaryDirectory(prefix="desk-") as tmp:
        with served(web, Path(tmp)) as desk, browser.chromium() as chromium:
            page = chromium.new_page(viewport={"width": 1280, "height": 1000})
            page.goto(desk.link)
            page.wait_for_selector("body[data-ready=true]")
            for question in QUESTIONS:
                page.goto(desk.base + "/#")
                page.wait_for_selector("body[data-ready=true]")
                page.fill("#topic", question)
                page.press("#topic", "Enter")
                page.wait_for_url("**/#run/*")
                page.wait_for_selector("#run-status[data-state=done]", timeout=300_000)
            page.click("#totals")  # the panel, folded when the run ended
            page.frame_locator("#report").locator("#claim-0").wait_for()
            page.locator(f'#runs a[data-status="ok"] >> nth={len(QUESTIONS) - 1}').wait_for()
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
    print(f"wrote {out} ({out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
