"""`python -m benchmarks.run`: generate (or reuse) the sources, run the scenarios, write RESULTS.md.

    python -m benchmarks.run --rows-per-day 100000 --days 365 --reload-days 90 --repeat 3 \
        [--large] [--scenarios daily,growth,reload] [--out benchmarks/results/RESULTS.md] [--data bench-data]

The scenarios, with what each measures and its goal, are benchmarks.harness.registry.SCENARIOS (`--help` lists them);
benchmarks/README.md describes them at length.
"""

from __future__ import annotations

import sys

from benchmarks.harness.runner import main

if __name__ == "__main__":
    sys.exit(main())
