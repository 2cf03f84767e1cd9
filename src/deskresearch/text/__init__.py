"""Text helpers without I/O: topic and phrase cleaning, language detection, chunk relevance.

Imports nothing of deskresearch but errors and records.
"""
