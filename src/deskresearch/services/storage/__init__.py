"""What outlives a step: the persistent cache, the checkpoint stores, the run's page claims.

May import services.base, services.web.netpolicy (a cached page is policy-checked) and below.
"""
