"""Prompt text, one module per model step; each exposes SYSTEM, USER and render()."""
