"""The package version, in one place (hatch reads it; importing it imports nothing else)."""

__version__ = "0.2.0"
