"""Run the CLI with ``python -m deskresearch``."""

from deskresearch.cli.command import run

run()
