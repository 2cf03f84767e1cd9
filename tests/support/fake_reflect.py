"""The fake model's reflection: a deterministic reader that follows the names facts mention.

A real model reads the facts gathered so far against the question and asks for what is missing.
The fake does the same on one simple rule, so the research loop can be tested without a model:

- a *name* is two or more capitalised words (particles such as "de", "von", "&" may join them)
  or one hyphenated capitalised word ("Lindqvist-Erbe"), leading articles and words of the
  question dropped; a name that still shares a word with the question is the question's own;
- a fact *about the question* shares at least two content words with it; every name it
  mentions is a *lead*;
- a lead is *resolved* once a fact from another page mentions it (two of its words, or its
  one word); the names that fact mentions are new leads (the next hop);
- every unresolved lead is a gap, and a follow-up query is the lead's name, verbatim, unless
  that query was already searched.

Nothing here knows the test's answers: what the fake finds depends only on the pages read.
"""

from __future__ import annotations

import re
from typing import Any

_CAP = r"[A-ZÀ-ÖØ-Þ][\w'’]*(?:-[A-ZÀ-ÖØ-Þ][\w'’]*)*"
_PARTICLE = r"(?:de|du|des|d'|von|van|der|den|la|le|&)"
_NAME = re.compile(rf"{_CAP}(?:\s+(?:{_PARTICLE}\s+)?{_CAP})*")
_HYPHENATED = re.compile(r"^[A-ZÀ-ÖØ-Þ][\w'’]*-[A-ZÀ-ÖØ-Þ][\w'’]*$")
_WORD = re.compile(r"[\w'’]+")
STOP = {
    # English
    "the", "and", "for", "was", "were", "with", "that", "which", "what", "who", "whom", "where",
    "when", "how", "from", "this", "its", "has", "had", "have", "are", "his", "her", "their",
    "into", "since", "every", "each", "one", "two", "also", "than", "all", "but", "not", "out",
    # German
    "der", "die", "das", "den", "dem", "des", "und", "ein", "eine", "einer", "einem", "wurde",
    "wird", "ist", "sind", "war", "seit", "von", "vom", "mit", "aus", "auf", "für", "bei", "nach",
    "zum", "zur", "im", "am", "an", "in", "welchem", "welcher", "welche", "wann", "wer", "wie",
    "hat", "haben", "sich", "ihr", "ihre", "ihren", "durch", "heute", "noch",
    # French
    "les", "une", "est", "été", "par", "dans", "pour", "qui", "que", "quel", "quelle",
    "sur", "aux", "son", "ses", "leur", "leurs", "depuis", "avec", "elle", "il",
}  # fmt: skip
_LEADING = {"the", "a", "an", "der", "die", "das", "den", "dem", "des", "le", "la", "les", "l'",
            "un", "une", "in", "im", "am", "on", "at", "en", "au"}  # fmt: skip
_FACT = re.compile(r"^\[(\d+)\]\s+(.*?)\s+\(page (\d+)\)\s*$")


def words(text: str) -> set[str]:
    """Content words: case-folded, three letters or more, no stop word; hyphens split."""
    found = {w.casefold().strip("'’") for w in _WORD.findall(text.replace("-", " "))}
    return {w for w in found if len(w) >= 3 and w not in STOP}


def names(sentence: str, question: set[str]) -> list[str]:
    """The names ``sentence`` mentions that are not the question's own (see the module doc)."""
    found: list[str] = []
    for match in _NAME.finditer(sentence):
        parts = match.group(0).split()
        while parts and (parts[0].casefold() in _LEADING or parts[0].casefold() in question):
            parts.pop(0)
        if not parts or parts[0] in ("&",):
            continue
        name = " ".join(parts)
        capitals = [p for p in parts if p[:1].isupper()]
        if len(capitals) < 2 and not (len(parts) == 1 and _HYPHENATED.match(parts[0])):
            continue
        if words(name) & question:
            continue
        if name not in found:
            found.append(name)
    return found


def _mentions(fact: str, lead: str) -> bool:
    needed = words(lead)
    return len(needed & words(fact)) >= min(2, len(needed))


def reflect(topic: str, facts_block: str, queries_block: str, allowed: int) -> dict[str, Any]:
    """The Reflection answer for the prompt's topic, facts and queries already searched."""
    question = words(topic)
    facts = [(int(m[1]), m[2], int(m[3])) for m in map(_FACT.match, facts_block.splitlines()) if m]
    done = {q.strip("- ").casefold() for q in queries_block.splitlines() if q.strip()}
    leads: dict[str, tuple[int, int]] = {}  # name → (fact number, page) that named it
    about = [f for f in facts if len(words(f[1]) & question) >= 2]
    for number, claim, page in about:
        for name in names(claim, question):
            leads.setdefault(name, (number, page))
    resolved: list[str] = []
    changed = True
    while changed:  # follow each resolved lead to the names its facts mention
        changed = False
        for lead, (_, origin) in list(leads.items()):
            if lead in resolved:
                continue
            hits = [f for f in facts if f[2] != origin and _mentions(f[1], lead)]
            if not hits:
                continue
            resolved.append(lead)
            changed = True
            for number, claim, page in hits:
                for name in names(claim, question | words(lead)):
                    leads.setdefault(name, (number, page))
    open_leads = [lead for lead in leads if lead not in resolved]
    gaps = [f"what the sources say about {lead}" for lead in open_leads]
    followups = [
        {"query": lead, "gap": gap, "lead": lead, "fact": leads[lead][0]}
        for lead, gap in zip(open_leads, gaps, strict=True)
        if lead.casefold() not in done
    ][:allowed]
    answered = [{"part": topic, "facts": [n for n, _, _ in about]}] if about else []
    return {"answered": answered, "gaps": gaps, "followups": followups}
