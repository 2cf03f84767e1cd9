"""The citation check's pure parts: citations in a report, the draft's sentences, lexical support.

May import state, text, errors and records; nodes and the report import it.
"""
