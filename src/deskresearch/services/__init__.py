"""I/O behind the Protocols in ``services.base``, by what it talks to: model, search, web, storage.

``defaults`` wires the real ones; nodes get them injected. May import config, prompts, state,
progress, runscope, safety, text, errors and records, never nodes, the graph or the CLI.
"""
