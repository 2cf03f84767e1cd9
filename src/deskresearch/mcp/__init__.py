"""The research tool over MCP: ``deskresearch mcp`` (stdio) and ``/mcp`` on a LangGraph server.

``tool`` is the one implementation (description, schemas, progress, errors), ``result`` the
bounded result, ``stdio`` the command (runs in this process: the session's local store and
report files), ``served`` the app ``langgraph.json`` mounts (runs on the hosting server). An
entry point: may import the session, the graph and below; never cli or batch
(``deskresearch.__main__`` dispatches to ``mcp.stdio``). The ``mcp`` SDK is an optional extra:
``pip install '.[mcp]'`` in deskresearch's folder.
"""
