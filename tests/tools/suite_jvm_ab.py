"""suite-jvm-ab: two settings of the test suite's worker JVMs compared under the suite's own load.

`make test` runs two workers on two cores, and one worker alone keeps about 1.6 cores busy, so the suite's time is
its CPU. This runs N copies of one test file at once (two by default, as the two workers), under setting A and then
B, alternately, and reports each round's wall seconds. A setting is the value of an environment variable, `--var`:
SUITE_WORKER_JIT (tests/support/jvm_options.py puts it on each worker's JVM; "" gives the JVM's defaults) or
SUITE_CODEGEN_CACHE (tests/conftest.py: the worker session's spark.sql.codegen.cache.maxEntries) or
SUITE_SERVER_JIT (tests/support/jvm_options.py: "worker" gives the Connect server and the standalone cluster's JVMs the
workers' options) or SUITE_GC (tests/support/jvm_options.py: every JVM's collector; "" gives the JVM's default, G1).
"default" leaves the variable unset, so the suite's own. Beside each round's wall seconds it
reports the machine's busy CPU-seconds (/proc/stat), which counts every JVM a test starts: on a CPU-bound suite
that is the figure that adds up.

    python -m tests.tools.suite_jvm_ab --file tests/pipeline/controller/test_b_side.py --pairs 2 --a "" --b default
    python -m tests.tools.suite_jvm_ab --var SUITE_CODEGEN_CACHE --a 100 --b default
    python -m tests.tools.suite_jvm_ab --var SUITE_SERVER_JIT --a worker --b default --copies 1 \
        --file tests/pipeline/controller/test_cluster.py
    python -m tests.tools.suite_jvm_ab --var SUITE_GC --a "" --b default
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

ROOT = Path(__file__).resolve().parents[2]


def busy_cpu_seconds() -> float:
    """CPU-seconds the whole machine has spent busy since boot (all but idle and I/O wait), from /proc/stat."""
    fields = [int(n) for n in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def one_round(test_file: str, copies: int, var: str, value: str) -> tuple[float, float]:
    """Wall seconds and busy CPU-seconds of `copies` pytest processes of `test_file` started together, with `var` =
    `value`."""
    env = {k: v for k, v in os.environ.items() if k != var}
    if value != "default":
        env[var] = value
    scratch = Path(tempfile.mkdtemp(prefix="deltainc-jvm-ab-"))
    started, cpu = time.perf_counter(), busy_cpu_seconds()
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
        return time.perf_counter() - started, busy_cpu_seconds() - cpu
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _load_average() -> str:
    """The machine's 1-, 5- and 15-minute load averages."""
    return " / ".join(f"{value:.2f}" for value in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.tools.suite_jvm_ab", description=__doc__.splitlines()[0])
    parser.add_argument("--file", default="tests/pipeline/controller/test_b_side.py")
    parser.add_argument("--copies", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=2)
    variables = ["SUITE_WORKER_JIT", "SUITE_CODEGEN_CACHE", "SUITE_SERVER_JIT", "SUITE_GC"]
    parser.add_argument("--var", default="SUITE_WORKER_JIT", choices=variables)
    parser.add_argument("--a", default="", help='the value for A ("" = the JVM\'s JIT defaults)')
    parser.add_argument("--b", default="default", help="the value for B (default = the suite's own)")
    args = parser.parse_args(argv)
    found: dict[str, list[tuple[float, float]]] = {"A": [], "B": []}
    for pair in range(args.pairs):
        order = [("A", args.a), ("B", args.b)] if pair % 2 == 0 else [("B", args.b), ("A", args.a)]
        for name, value in order:
            found[name].append(one_round(args.file, args.copies, args.var, value))
            wall, cpu = found[name][-1]
            print(f"pair {pair + 1} {name}: {wall:.0f} s, {cpu:.0f} busy CPU-s", file=sys.stderr)
    print(f"{args.copies} copies of {args.file} at once; load average at the end {_load_average()}")
    print(f"| setting | {args.var} | rounds: wall s | rounds: busy CPU-s |\n|---|---|---|---|")
    for name, value in (("A", args.a), ("B", args.b)):
        walls = ", ".join(f"{wall:.0f}" for wall, _ in found[name])
        cpus = ", ".join(f"{cpu:.0f}" for _, cpu in found[name])
        print(f"| {name} | `{value}` | {walls} | {cpus} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
