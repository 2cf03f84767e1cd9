"""Prompt text, one module per model step; each exposes SYSTEM, USER and render().

Imports records and its own common module only: nodes render prompts, nothing renders them back.
"""
