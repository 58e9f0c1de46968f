"""`make demo`'s command as a user runs it: `python -m deltainc demo` as fresh processes, each timed whole, with the
parts the demo reports of itself (the history's catch-up, the scheduled days, the rest), as Markdown (the `demo`
scenario of `python -m benchmarks.run`).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from benchmarks.timing import run_process

__all__ = ["DemoRun", "run_demo_process", "demo_time"]

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
    done = run_process([sys.executable, "-m", "deltainc", "demo", "--root", str(root), *options], cwd=checkout)
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
    return DemoRun(checkout.name, done.seconds, own, catch_up, days, day_s, load)


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


def demo_time(data: Path, days: int, rows_per_day: int, repeat: int) -> list[str]:
    """The report: `repeat` demos of `days` x `rows_per_day` under `data`, one after the other.

    Example: `lines = demo_time(Path("bench-data/demo"), 30, 200, 2)`.
    """
    options = ["--days", str(days), "--rows-per-day", str(rows_per_day)]
    checkout = Path(__file__).resolve().parents[2]
    runs = [run_demo_process(checkout, data.absolute(), options) for _ in range(repeat)]
    return _markdown(runs, options)
