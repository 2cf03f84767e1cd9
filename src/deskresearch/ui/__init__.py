"""``deskresearch ui``: a research desk in the browser (ask, watch, read, come back).

An entry point beside cli, batch and mcp: it may import the session and everything below it,
never another entry point. ``command`` starts the server (starlette on uvicorn, loopback by
default), ``guard`` decides who may talk to it, ``app`` is its HTTP API, ``desk`` holds its runs
on one run session, ``form`` the settings the page shows; ``static/`` is the page itself
(plain HTML, CSS and JavaScript, no build step, nothing loaded from elsewhere).
"""
