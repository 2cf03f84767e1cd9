"""Settings: ``Context`` (one field a setting), the deployment lock, providers and prices.

May import safety, errors and records only: every layer above reads its settings from here.
"""
