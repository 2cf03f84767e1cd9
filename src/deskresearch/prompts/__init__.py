"""Prompt text, one module per model step; each exposes SYSTEM, USER and render().

Imports records, text (the language check) and its own common module only: nodes render
prompts, nothing renders them back. Every text from a page, a search result, the model or the
caller goes into a data block (prompts.common); tests/unit_tests/prompts/test_prompt_blocks.py
renders each module with hostile values to check it.
"""
