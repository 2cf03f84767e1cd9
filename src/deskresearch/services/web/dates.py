"""A page's publication date as YYYY-MM-DD: where the page states it, and nowhere else.

HTML goes through trafilatura's metadata (htmldate: meta tags, JSON-LD, ``<time>``, the URL) with
htmldate's free-text search off: on the text it takes any date a page mentions (a law of 1998,
a copyright year read as 1 January), and ``since`` would drop pages for dates they only cite.
What the metadata lacks, and every plain-text, markdown, PDF or corpus file, is read from a
dateline at the head of the text (``BERLIN, 3 February 2025 —``, ``Published: 12 March 2024``,
a front matter's ``date:``, a line that is a date) and then from the URL. A month or a year
alone is no date. Runs in the extraction workers; htmldate (trafilatura's) is imported there.
"""

from __future__ import annotations

import html
import re
from datetime import date
from typing import Any

HEAD_LINES = 6  # non-empty lines a dateline may sit in
_SEGMENT = 40  # characters after a label or a place that may hold the date
_MARKUP = "#*_>`~-=+[]() \t"
_LABEL = re.compile(
    r"^(?:published|posted|updated|last updated|last modified|date|dated|released|issued"
    r"|created|veröffentlicht|aktualisiert|stand|datum|publié|mis à jour|publicado"
    r"|actualizado|fecha|pubblicato|aggiornato|gepubliceerd|bijgewerkt)\b"
    r"(?P<sep>\s*:|\s+(?:on|am|le|el|il|op)\b)?\s*",
    re.IGNORECASE,
)
# A dateline: a place (up to four capitalised words), an agency in brackets, a comma or dash.
_PLACE = re.compile(
    r"^[A-ZÀ-Þ][\w'’.-]*(?:[ -][A-ZÀ-Þ][\w'’.-]*){0,3}(?:\s*\([^)]{1,40}\))?(?:,|\s[—–-])\s+"
)
_SHORT = 40  # a line this short may be the date itself ("Tuesday, 12 March 2024")
# ... if it starts as a date does: a number, or a weekday or month and then a number.
_STARTS_AS_DATE = re.compile(r"^(?:\d|[^\W\d_]{3,}\.?(?:,\s+[^\W\d_]{3,}\.?)?,?\s+\d{1,2}\b)")
# A span, not a day: "since 12 March 2024", "bis 3. Mai 2025" do not date the page.
_SPAN = re.compile(
    r"^(?:since|until|till|from|by|before|after|between|seit|bis|ab|vor|nach|depuis|jusqu\w*|"
    r"avant|après|desde|hasta|antes|después|dal|fino|prima|dopo)\b",
    re.IGNORECASE,
)
# The author or agency between a label and its date: "by Reuters, ", "by Jane Doe on ".
_BYLINE = re.compile(r"^by\s+[^,|:]{1,40}?(?:,\s*|\s+on\s+)", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]{3,}")
_AMBIGUOUS = re.compile(r"\b(\d{1,2})/(\d{1,2})/\d{4}\b")  # 03/12/2024: March or December?


def html_date_params() -> dict[str, Any]:
    """Return htmldate's settings for trafilatura: what the page states, not dates it mentions."""
    return {
        "extensive_search": False,
        "original_date": True,
        "max_date": date.today().isoformat(),
    }


def _parse(segment: str) -> str:
    """The date a short segment states, to the day, or "" (htmldate reads many languages)."""
    from htmldate import find_date

    if (m := _AMBIGUOUS.search(segment)) and m.group(1) != m.group(2):
        if int(m.group(1)) <= 12 and int(m.group(2)) <= 12:
            return ""
    doc = f"<html><body><p>{html.escape(segment)}</p></body></html>"
    found = find_date(doc, extensive_search=True, original_date=True,
                      max_date=date.today().isoformat())  # fmt: skip
    if not found:
        return ""
    year, _, day = found.split("-")
    # htmldate turns "March 2024" or "© 2019" into the 1st of January; only a stated day counts.
    if not re.search(rf"\b{year}\b", segment) or not re.search(rf"\b0?{int(day)}\b", segment):
        return ""
    return found


def _only_a_date(line: str) -> bool:
    """Whether a short line is a date and nothing else ("Tuesday, 12 March 2024").

    At most a weekday and a month in words: not a sentence with a date in it.
    """
    return (len(line) <= _SHORT and bool(_STARTS_AS_DATE.match(line))
            and len(_WORD.findall(line)) <= 2)  # fmt: skip


def dateline(text: str) -> str:
    """The publication date a dateline at the head of ``text`` states, or ""."""
    lines = [ln.strip(_MARKUP) for ln in text[:2000].splitlines()]
    for line in [ln for ln in lines if ln][:HEAD_LINES]:
        for part in re.split(r"\s[|·]\s", line):
            part = part.strip(_MARKUP)
            if (m := _LABEL.match(part)) and (
                m["sep"] or _STARTS_AS_DATE.match(rest := _BYLINE.sub("", part[m.end() :]))
            ):  # "Published: ...", "Posted 3 May", "Published by Reuters, 3 May 2024"
                segment = (part[m.end() :] if m["sep"] else rest)[:_SEGMENT]
            elif m := _PLACE.match(part):
                segment = re.split(r"\s[—–-]\s|\s[—–]", part[m.end() :], maxsplit=1)[0][:_SEGMENT]
            elif _only_a_date(part):
                segment = part
            else:
                continue
            if segment and not _SPAN.match(segment) and (found := _parse(segment)):
                return found
    return ""


def url_date(url: str) -> str:
    """The full date a URL carries (``/2024/03/12/``, ``2024-03-12-report.md``), or ""."""
    from htmldate import find_date

    if not url:
        return ""
    found = find_date("<html><body></body></html>", url=url, extensive_search=False,
                      max_date=date.today().isoformat())  # fmt: skip
    return found or ""


def text_date(text: str, url: str) -> str:
    """The date of a page without metadata: its dateline, else its URL."""
    return dateline(text) or url_date(url)
