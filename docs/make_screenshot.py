"""Make docs/progress.png: the CLI's live panel, from a real run against the loopback web.

    python docs/make_screenshot.py            (needs Debian's chromium: apt-get install chromium)

The CLI runs with stderr on a pseudo-terminal, as in a user's shell; one frame from the middle
of the run (page chunks being summarised) is turned into SVG by rich and photographed by headless
chromium. The model and the web are the test suite's fakes (with the benchmark's latencies),
so the numbers are a real run's, the topic's pages are the fixture pages.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.text import Text  # noqa: E402

from tests.support.loopback import FakeWeb, Latency, serve  # noqa: E402
from tests.support.runs import loopback_env  # noqa: E402
from tests.support.terminal import in_terminal  # noqa: E402

COLUMNS = 104
TOPIC = "How are lithium-ion batteries from electric cars recycled?"
FRAME = re.compile(r"(?:\x1b\[2K\x1b\[1A)+\x1b\[2K")  # rich Live: erase the last frame, redraw


def live_frames(env: dict[str, str], out_dir: str) -> list[str]:
    """Run the CLI on a pseudo-terminal; return the panel's frames (ANSI text)."""
    _, screen = in_terminal([TOPIC, "-o", out_dir], env, columns=COLUMNS)
    text = screen.replace("\r", "")
    text = text.replace("\x1b[?25l", "").replace("\x1b[?25h", "")  # cursor hidden / shown
    return [f for f in FRAME.split(text) if "╭─ deskresearch" in f]


def pick(frames: list[str]) -> str:
    """The last frame in which page chunks are being summarised (some done, some not)."""
    plain = [re.sub(r"\x1b\[[\d;?]*[A-Za-z]", "", f) for f in frames]
    busy = [
        i
        for i, p in enumerate(plain)
        if (m := re.search(r"chunks summarised +(\d+)/(\d+)", p)) and 0 < int(m[1]) < int(m[2])
    ]
    return frames[busy[-1] if busy else len(frames) // 2]


def main() -> None:
    """Write docs/progress.png."""
    latency = Latency(call_s=0.3, per_out_token_s=0.005, search_s=0.4, fetch_s=0.2)
    with serve(FakeWeb(latency=latency)) as web, tempfile.TemporaryDirectory() as tmp:
        env = loopback_env(web, DESKRESEARCH_CHECKPOINTS="memory")
        frame = pick(live_frames(env, tmp))
        prompt = f'$ deskresearch "{TOPIC}"\n'
        console = Console(record=True, width=COLUMNS, file=io.StringIO(), force_terminal=True)
        console.print(Text(prompt, style="bold") + Text.from_ansi(frame.rstrip("\n")))
        svg = Path(tmp) / "progress.svg"
        svg.write_text(console.export_svg(title="deskresearch"), encoding="utf-8")
        width, height = (
            float(v) for v in re.findall(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg.read_text())[0]
        )
        page = Path(tmp) / "progress.html"
        page.write_text(f'<html><body style="margin:0"><img src="{svg}"></body></html>')
        out = ROOT / "docs" / "progress.png"
        subprocess.run(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             f"--window-size={int(width)},{int(height)}", f"--screenshot={out}", page.as_uri()],
            check=True, capture_output=True,
        )  # fmt: skip
    print(f"wrote {out}")  # noqa: T201


if __name__ == "__main__":
    main()
