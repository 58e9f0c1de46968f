"""`make demo`'s command as a user runs it: `python -m deltainc demo` as fresh processes, each timed whole, with the
parts the demo reports of itself (the history's catch-up, the scheduled days, the rest), printed as Markdown.

`python -m benchmarks.demo_time --repeat 2 --data /tmp/bench-demo` (the demo's sizes; `--days`, `--daily` and
`--rows-per-day` as `deltainc demo` takes them). `--other DIR` runs another checkout's demo too (started in that
folder, so that `python -m deltainc` imports its package) for a before/after pair; the runs alternate, it first.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DemoRun", "run_demo_process", "main"]

_DAY = re.compile(r"^  (\S+): loaded A .*\(([\d.]+) s\); run: .*\(([\d.]+) s\)")
_DONE = re.compile(r"^Done in (\d+) s")


@dataclass(frozen=True)
class DemoRun:
    """One `deltainc demo` process: its wall seconds, the seconds it reports as its own, its load average before."""

    checkout: str
    whole_s: float
    own_s: float
    catch_up_s: float  # load and run of the history in one window (0: the demo had none)
    days: int  # days loaded and run one at a time
    day_s: float  # their load and run seconds, summed
    load_before: float


def run_demo_process(checkout: Path, root: Path, options: list[str]) -> DemoRun:
    """Start `python -m deltainc demo --root root *options` in `checkout` and time it whole; its output parsed."""
    load = os.getloadavg()[0]
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "deltainc", "demo", "--root", str(root), *options],
        cwd=checkout,
        capture_output=True,
        text=True,
        check=True,
    )
    whole = time.monotonic() - started
    own, catch_up, days, day_s = 0.0, 0.0, 0, 0.0
    for line in done.stdout.splitlines():
        if matched := _DAY.match(line):
            seconds = float(matched[2]) + float(matched[3])
            if ".." in matched[1]:
                catch_up += seconds
            else:
                days, day_s = days + 1, day_s + seconds
        elif matched := _DONE.match(line):
            own = float(matched[1])
    return DemoRun(checkout.name, whole, own, catch_up, days, day_s, load)


def _markdown(runs: list[DemoRun], options: list[str]) -> list[str]:
    lines = [
        f"`python -m deltainc demo --root DIR {' '.join(options)}`, fresh processes one after the other (a whole "
        "run's wall seconds; own: the demo's `Done in` line, after Spark started)",
        "",
        "| checkout | whole s | own s | catch-up s | days run alone | their s (load + run) | load average before |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        lines.append(
            f"| {r.checkout} | {r.whole_s:.1f} | {r.own_s:.0f} | {r.catch_up_s:.1f} | {r.days} | {r.day_s:.1f} | "
            f"{r.load_before:.2f} |"
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="runs of each checkout's demo (default 2)")
    parser.add_argument("--data", type=Path, default=Path("bench-data/demo"), help="folder for the demo's tables")
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--daily", type=int, default=None, help="as `deltainc demo --daily` (default: the demo's)")
    parser.add_argument("--rows-per-day", type=int, default=200)
    parser.add_argument(
        "--other", type=Path, default=None, help="another checkout, e.g. a worktree of an earlier commit"
    )
    args = parser.parse_args(argv)
    options = ["--days", str(args.days), "--rows-per-day", str(args.rows_per_day)]
    if args.daily is not None:
        options += ["--daily", str(args.daily)]
    checkouts = [Path(__file__).resolve().parents[1]]
    if args.other is not None:
        checkouts.insert(0, args.other.resolve())
    runs = [
        run_demo_process(checkout, (args.data / checkout.name).absolute(), options)
        for _ in range(args.repeat)
        for checkout in checkouts
    ]
    print("\n".join(_markdown(runs, options)))


if __name__ == "__main__":
    main()
