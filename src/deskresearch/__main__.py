"""Run the CLI with ``python -m deskresearch``."""

import sys

from deskresearch.cli import main

sys.exit(main())
