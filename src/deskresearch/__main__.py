"""Run the CLI with ``python -m deskresearch``."""

from deskresearch.cli import run

run()
