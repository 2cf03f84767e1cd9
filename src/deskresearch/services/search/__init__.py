"""Search engines: the router (the chain with its fallbacks), one module per engine, the checks.

May import services.base, services.web (TLS, PDF), services.workers and below.
"""
