"""The command line's research: ``deskresearch TOPIC``, ``--resume``, and ``deskresearch runs``.

What is its own: the options, the head start, the live panel, the review at the terminal, the
Ctrl-C message, the outcome's lines, the ``runs`` table. Settings, the pre-flight, checkpoints,
the run and its files are the session's (deskresearch.session), which it imports; it never
imports another entry point (batch, mcp). The ``deskresearch`` command itself is
``deskresearch.__main__``, which dispatches here.
"""
