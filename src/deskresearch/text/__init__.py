"""Text helpers without I/O: input cleaning, inert labels, languages, relevance, plurals.

Imports nothing of deskresearch but errors and records.
"""
