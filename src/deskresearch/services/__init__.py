"""I/O services behind the Protocols in services.base."""
