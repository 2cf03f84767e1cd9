"""Pages from the web: the fetcher, its network policy (netpolicy), TLS, extraction, PDF text.

May import services.base, services.workers and below.
"""
