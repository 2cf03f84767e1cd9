"""The research tool over MCP: ``deskresearch mcp`` (stdio) and ``/mcp`` on a LangGraph server.

``tool`` is the one implementation (description, schemas, progress, errors), ``result`` the
bounded result, ``local`` its runs in this process (the CLI's settings, checkpoints and files),
``served`` its runs on the hosting server (the app ``langgraph.json`` mounts), ``stdio`` the
command. An entry point like ``cli`` and ``batch``: it may import cli, graph and everything
below; nothing imports it (the CLI names ``mcp.stdio`` as a string, imported when used). The
``mcp`` SDK is an optional extra: ``pip install '.[mcp]'`` in deskresearch's folder.
"""
