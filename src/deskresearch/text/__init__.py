"""Text helpers without I/O: cleaning, language detection, chunk relevance, plural counts.

Imports nothing of deskresearch but errors and records.
"""
