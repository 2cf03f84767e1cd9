"""Text helpers without I/O: input cleaning, links and inert labels, languages, chunk relevance.

Imports nothing of deskresearch but errors and records.
"""
