"""The graph ``langgraph.json`` names: compiled without a checkpointer (the server brings one).

Served callers may not change the deployment's settings (``deskresearch.config.deployment``); a
``Context`` passed in-process is the caller's own and is taken as it is. A module of its own, so
that importing ``deskresearch.graph`` (the command line, the batch, the page: each builds a
graph of its own) does not build this one too; the package's ``deskresearch.graph`` names it.
"""

from deskresearch.config.deployment import Deployment
from deskresearch.graph import build_graph

graph = build_graph(deployment=Deployment.from_env())
