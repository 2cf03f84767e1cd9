"""The language of a text, so the citation check knows when a sentence and its source differ.

py3langid (from trafilatura's author) classifies the opening of each page once, in the
extraction workers; its model takes ~0.5 s to load, which the workers pay when they start.
"""

from __future__ import annotations

SAMPLE_CHARS = 3000  # the opening of a page says its language; more only costs time
MIN_CHARS = 40  # shorter texts (a snippet, a title) are too short to tell


def detect_language(text: str) -> str:
    """Return the two-letter code of ``text``'s language, or "" when it is too short to tell."""
    sample = " ".join(text[:SAMPLE_CHARS].split())
    if len(sample) < MIN_CHARS:
        return ""
    import py3langid  # loaded on first use: only extraction workers need it

    code, _ = py3langid.classify(sample)
    return str(code)
