"""Entry point: ``python -m benchmarks``."""

import sys

from benchmarks._harness import main

if __name__ == "__main__":
    sys.exit(main())
