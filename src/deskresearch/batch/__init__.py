"""``deskresearch batch FILE``: many topics, in one process, on a Ray cluster, or on a server.

- ``topics``: the batch file (one topic a line, or JSON lines with per-topic settings), bad lines
  reported by number; stable thread ids derived from the batch and the topic.
- ``runner``: one topic on a checkpointed graph: skipped when finished, resumed when not.
- ``local``, ``ray_driver`` (+ ``ray_task``, ``coordinator``, ``cluster_limits``), ``server``:
  the three ways to run.
- ``summary``: ``batch.json`` and ``batch.csv``, rewritten as each topic ends.
- ``board``: the live table in a terminal, plain lines otherwise.

The top layer with the CLI: may import cli (its settings and output), the graph and below.
"""
