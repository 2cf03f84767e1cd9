"""Copies count once: group the pages a run read by the origin of their text.

Three sites carrying one press release are one witness, not three. Two pages are of one origin
when code finds, in what was read of them:

- near-identical text: most of the shorter page's word 8-grams are in the other (a mirror, a
  reprint with other boilerplate);
- a long shared passage: a run of at least ``PASSAGE_WORDS`` words in both (a wire story or a
  press release quoted whole inside an article of its own);
- a page that names another read page as its source: its address, or an attribution ("Source:",
  "originally published by", "Quelle:", "d'après") followed by that page's site or host.

Groups are closed under these links (a reprint of a reprint is one origin). The group's first
source is the original: the page others name as their source, else the earliest published, else
the first in the ledger. Pure code, no model call: a run reads tens of pages, so comparing every
pair of 8-gram sets is milliseconds (no MinHash index is needed at that size).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from urllib.parse import urlsplit

SHINGLE = 8  # words per shingle: long enough that common phrases do not make pages alike
NEAR_IDENTICAL = 0.5  # share of the shorter page's shingles found in the other
PASSAGE_WORDS = 40  # a shared run this long is a copied passage (about two sentences)
ATTRIBUTION_WINDOW = 120  # characters after an attribution word where the source is named

_WORD = re.compile(r"\w+", re.UNICODE)
_ATTRIBUTION = re.compile(
    r"\b(?:sources?|via|courtesy of|originally (?:published|appeared)|first (?:published|appeared)"
    r"|republished|reprinted|press release|quelle|erstmals (?:erschienen|veröffentlicht)"
    r"|zuerst erschienen|mitteilung|d'après|selon|publié (?:initialement|d'abord)"
    r"|communiqué)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Page:
    """What code compares of one source."""

    id: int
    url: str
    text: str
    site: str = ""
    published: str = ""  # ISO date, "" when undated


@dataclass(frozen=True)
class Link:
    """Why two sources are one origin: ``copy`` carries the text of ``original``."""

    copy: int
    original: int
    reason: str  # from the copy's side: "carries 93% of the text of source [2]"
    inverse: str = ""  # the same from the original's side, when the pair is near-identical

    def said_of(self, source: int) -> str:
        """The reason from ``source``'s side of the pair."""
        if source == self.copy:
            return self.reason
        return self.inverse or self.reason.replace(f"[{self.original}]", f"[{self.copy}]")


@dataclass(frozen=True)
class Grouped:
    """A source's place among the origins: its group number, what it copies and why."""

    group: int
    copy_of: int | None
    reason: str


def _words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKD", text.casefold())
    return _WORD.findall("".join(ch for ch in folded if not unicodedata.combining(ch)))


def _shingles(words: Sequence[str]) -> list[int]:
    return [hash(tuple(words[i : i + SHINGLE])) for i in range(len(words) - SHINGLE + 1)]


def _longest_run(mine: Sequence[int], theirs: set[int]) -> int:
    """Words in the longest stretch of ``mine`` whose every shingle is in ``theirs``."""
    best = run = 0
    for s in mine:
        run = run + 1 if s in theirs else 0
        best = max(best, run)
    return best + SHINGLE - 1 if best else 0


def _host(url: str) -> str:
    host = (urlsplit(url).hostname or "").casefold()
    return host.removeprefix("www.")


@dataclass(frozen=True)
class _Folded:
    """What ``_names`` reads of a page, made once per page (not once per pair)."""

    text: str  # casefolded
    windows: tuple[str, ...]  # what follows each attribution word, ATTRIBUTION_WINDOW long


def _folded(page: Page) -> _Folded:
    text = page.text.casefold()
    ends = (m.end() for m in _ATTRIBUTION.finditer(text))
    return _Folded(text, tuple(text[end : end + ATTRIBUTION_WINDOW] for end in ends))


def _names(page: Page, other: Page, read: _Folded) -> bool:
    """Whether ``page``'s text (``read``) names ``other`` as where it comes from."""
    address = other.url.split("://", 1)[-1].rstrip("/").casefold()
    if len(address) > 8 and address in read.text:
        return True
    # A site name short enough to be a common word ("News") names nothing.
    site = other.site.strip().casefold()
    marks = [m for m in (_host(other.url), site if len(site) >= 6 else "") if len(m) >= 4]
    same_publisher = _host(page.url) == _host(other.url) and page.site.casefold() == site
    if not marks or same_publisher:  # a site naming itself (a footer's "Source: ...")
        return False
    return any(mark in window for window in read.windows for mark in marks)


def links(pages: Sequence[Page], words: dict[int, list[str]]) -> list[Link]:
    """Every pair of sources code finds to be of one origin, with the reason."""
    seqs = {p.id: _shingles(words[p.id]) for p in pages}
    sets = {pid: set(seq) for pid, seq in seqs.items()}
    read = {p.id: _folded(p) for p in pages}
    found: list[Link] = []
    for a, b in combinations(pages, 2):
        if _names(a, b, read[a.id]):
            found.append(Link(a.id, b.id, f"names source [{b.id}] ({_host(b.url)}) as its source",
                              f"named as its source by source [{a.id}]"))  # fmt: skip
            continue
        if _names(b, a, read[b.id]):
            found.append(Link(b.id, a.id, f"names source [{a.id}] ({_host(a.url)}) as its source",
                              f"named as its source by source [{b.id}]"))  # fmt: skip
            continue
        sa, sb = sets[a.id], sets[b.id]
        if not sa or not sb:
            continue
        shared = len(sa & sb)
        shorter = min(len(sa), len(sb))
        # The longer text holds the other: the copy adds its own words around it (a reprint's
        # boilerplate, an article around a quoted release).
        copy, original = (b, a) if len(words[a.id]) <= len(words[b.id]) else (a, b)
        if shared / shorter >= NEAR_IDENTICAL:
            share = round(100 * shared / shorter)
            reason = f"carries {share}% of the text of source [{original.id}]"
            inverse = f"{share}% of its text is in source [{copy.id}]"
            found.append(Link(copy.id, original.id, reason, inverse))
            continue
        if shared < PASSAGE_WORDS - SHINGLE + 1:
            # Too few shingles in common for a passage that long (a passage that repeats its
            # own 8-grams could be missed: no prose does).
            continue
        run = _longest_run(seqs[copy.id], sets[original.id])
        if run >= PASSAGE_WORDS:
            reason = f"shares a {run}-word passage with source [{original.id}]"
            found.append(Link(copy.id, original.id, reason))
    return found


def group(pages: Sequence[Page]) -> dict[int, Grouped]:
    """Each source's origin group (numbered in ledger order), the original it copies, and why."""
    parent = {p.id: p.id for p in pages}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    words = {p.id: _words(p.text) for p in pages}
    found = links(pages, words)
    for link in found:
        parent[root(link.copy)] = root(link.original)
    members: dict[int, list[Page]] = {}
    for p in pages:
        members.setdefault(root(p.id), []).append(p)
    named = {link.original for link in found if "as its source" in link.reason}
    copied = {link.copy for link in found}
    out: dict[int, Grouped] = {}
    groups = sorted(members.values(), key=lambda ps: min(p.id for p in ps))
    for number, ps in enumerate(groups, start=1):
        # The original: the page others name as their source, else the first published, else
        # one found copied by none, the shortest (copies add words around what they carry).
        original = min(ps, key=lambda p: (p.id not in named, p.published or "9999",
                                          p.id in copied, len(words[p.id]), p.id))  # fmt: skip
        for p in ps:
            if p.id == original.id:
                out[p.id] = Grouped(number, None, "")
                continue
            # Why: its link to the original if there is one, else its first link in the group.
            mine = [lk for lk in found if p.id in (lk.copy, lk.original)]
            direct = [lk for lk in mine if original.id in (lk.copy, lk.original)]
            best = (direct or mine)[0]
            out[p.id] = Grouped(number, original.id, best.said_of(p.id))
    return out


# Words that count the report's own sources as confirmations: a quantifier and "sources"
# (reports, outlets, media) that confirm, report or agree, "according to several sources",
# "widely reported". Not the world's accounts, water sources or published reports ("the WHO
# has published several reports", "fraudsters opened many accounts").
_QUANTIFIER = (
    r"(?:several|multiple|many|numerous|various|independent|both|mehrere|zahlreiche|"
    r"verschiedene|viele|unabhängige|beide|plusieurs|nombreuses|nombreux|diverses|divers|"
    r"les deux|varias|varios|múltiples|ambas|diverse|numerose|molte|entrambe)"
)
_WITNESSES = (
    r"(?:sources|reports|outlets|media|news outlets|websites|Quellen|Berichte|Medien|médias|"
    r"rapports|fuentes|informes|medios|fonti|rapporti)"
)
_SAY = (
    r"(?:confirm\w*|report\w*|agree\w*|say|said|told|tell|state\w*|show\w*|indicate\w*|suggest\w*|"
    r"corroborat\w*|bestätig\w*|bericht\w*|berichten|stimmen|zeigen|confirment|indiquent|"
    r"rapportent|concordent|affirment|confirman|informan|coinciden|confermano|riportano)"
)
_SEVERAL = re.compile(
    rf"\b{_QUANTIFIER}\s+(?:\w+\s+)?{_WITNESSES}\s+(?:\w+\s+)?{_SAY}\b"
    rf"|\b(?:according to|laut|selon|según|secondo)\s+{_QUANTIFIER}\s+(?:\w+\s+)?{_WITNESSES}\b"
    r"|\b(?:sources agree|widely reported|independently confirmed|confirmed by (?:several|"
    r"multiple|many|various|independent)|übereinstimmend berichte\w*|les sources concordent)\b",
    re.IGNORECASE,
)


def overstated(sentence: str) -> bool:
    """Whether ``sentence`` says more than one source stands behind it ("several reports")."""
    return bool(_SEVERAL.search(sentence))
