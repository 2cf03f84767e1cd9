"""The HTML page's table of calls and tokens: tokens we counted ourselves are shown as such."""

import re

from deskresearch.report.html import usage_html

SERVED = {"stage": "summarise_chunk", "model": "m", "input_tokens": 1200, "output_tokens": 90,
          "calls": 3}  # fmt: skip
COUNTED = {"stage": "write_section", "model": "m", "input_tokens": 640, "output_tokens": 80,
           "calls": 2, "counted_calls": 2}  # fmt: skip


def cells(html: str, stage: str) -> list[str]:
    [row] = re.findall(rf"<tr><td>{stage}</td>.*?</tr>", html)
    return re.findall(r'<td class="n">([^<]*)</td>', row)


def test_counted_tokens_carry_an_approximate_sign_and_a_note_says_why() -> None:
    html = usage_html([SERVED, COUNTED])
    assert cells(html, "summarise_chunk") == ["3", "0", "1,200", "90"]
    assert cells(html, "write_section") == ["2", "0", "≈ 640", "≈ 80"]
    total = re.search(r"<tfoot>(.*?)</tfoot>", html)
    assert total and re.findall(r'<td class="n">([^<]*)</td>', total.group(1)) == [
        "5", "0", "≈ 1,840", "≈ 170"
    ]  # fmt: skip
    assert "no token usage for 2 of these calls" in html


def test_a_run_whose_servers_reported_every_call_shows_plain_numbers() -> None:
    html = usage_html([SERVED])
    assert "≈" not in html and "counted here" not in html
