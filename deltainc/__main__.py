"""`python -m deltainc`: the same command line as the `deltainc` console script."""

from __future__ import annotations

import sys

from deltainc.cli import main

if __name__ == "__main__":
    sys.exit(main())
