"""What a run hands over: the ok/insufficient rule, the JSON contract and its schema, the HTML page.

May import grounding, config, safety, progress and records; nodes and the CLI import it.
"""
