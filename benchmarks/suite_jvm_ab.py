"""suite-jvm-ab: two settings of the test suite's worker JVMs compared under the suite's own load.

`make test` runs two workers on two cores, and one worker alone keeps about 1.6 cores busy, so the suite's time is
its CPU. This runs N copies of one test file at once (two by default, as the two workers), under setting A and then
B, alternately, and reports each round's wall seconds. A setting is the value of an environment variable, `--var`:
SUITE_WORKER_JIT (tests/jvm_options.py puts it on each worker's JVM; "" gives the JVM's defaults) or
SUITE_CODEGEN_CACHE (tests/conftest.py: the worker session's spark.sql.codegen.cache.maxEntries). "default" leaves
the variable unset, so the suite's own.

    python -m benchmarks.suite_jvm_ab --file tests/pipeline/test_b_side.py --pairs 2 --a "" --b default
    python -m benchmarks.suite_jvm_ab --var SUITE_CODEGEN_CACHE --a 100 --b default
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.report import load_average

ROOT = Path(__file__).resolve().parents[1]


def one_round(test_file: str, copies: int, var: str, value: str) -> float:
    """Wall seconds of `copies` pytest processes of `test_file` started together, with `var` = `value`."""
    env = {k: v for k, v in os.environ.items() if k != var}
    if value != "default":
        env[var] = value
    scratch = Path(tempfile.mkdtemp(prefix="deltainc-jvm-ab-"))
    started = time.perf_counter()
    try:
        runs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    f"--basetemp={scratch / str(i)}",
                    test_file,
                ],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for i in range(copies)
        ]
        codes = [run.wait() for run in runs]
        if any(codes):
            raise SystemExit(f"{test_file} failed under {var}={value!r}: exit codes {codes}")
        return time.perf_counter() - started
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.suite_jvm_ab", description=__doc__.splitlines()[0])
    parser.add_argument("--file", default="tests/pipeline/test_b_side.py")
    parser.add_argument("--copies", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--var", default="SUITE_WORKER_JIT", choices=["SUITE_WORKER_JIT", "SUITE_CODEGEN_CACHE"])
    parser.add_argument("--a", default="", help='the value for A ("" = the JVM\'s JIT defaults)')
    parser.add_argument("--b", default="default", help="the value for B (default = the suite's own)")
    args = parser.parse_args(argv)
    found: dict[str, list[float]] = {"A": [], "B": []}
    for pair in range(args.pairs):
        order = [("A", args.a), ("B", args.b)] if pair % 2 == 0 else [("B", args.b), ("A", args.a)]
        for name, value in order:
            found[name].append(one_round(args.file, args.copies, args.var, value))
            print(f"pair {pair + 1} {name}: {found[name][-1]:.0f} s", file=sys.stderr)
    print(f"{args.copies} copies of {args.file} at once; load average at the end {load_average()}")
    print(f"| setting | {args.var} | rounds (s) |\n|---|---|---|")
    for name, value in (("A", args.a), ("B", args.b)):
        print(f"| {name} | `{value}` | {', '.join(f'{s:.0f}' for s in found[name])} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
