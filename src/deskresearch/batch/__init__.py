"""``deskresearch batch FILE``: many topics, in one process, on a Ray cluster, or on a server.

- ``topics``: the batch file (one topic a line, or JSON lines with per-topic settings), bad lines
  reported by number; stable thread ids derived from the batch and the topic.
- ``runner``: one topic through the run session: admitted, skipped when finished, resumed when not.
- ``local`` (here, and on a server through the session's ``ServerGraph``), ``ray_driver``
  (+ ``ray_task``, ``coordinator``, ``cluster_limits``): the ways to run.
- ``summary``: ``batch.json`` and ``batch.csv``, rewritten as each topic ends.
- ``board``: the live table in a terminal, plain lines otherwise.

An entry point: may import the session, the graph and below; never cli or mcp.
"""
