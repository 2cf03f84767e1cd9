"""Run the benchmark: ``python -m bench``."""

import sys

from bench.run import main

sys.exit(main())
