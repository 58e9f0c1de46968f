"""Repeated wall-clock measurements: median and spread, with a per-measurement time budget; and a fresh process
timed whole, for the scenarios that measure a command as cron starts it. No Spark here."""

from __future__ import annotations

import resource
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

__all__ = ["Counter", "Measurement", "Process", "measure", "run_process", "ratio", "fmt_s", "fmt_ratio"]


class Counter(Protocol):
    """Counts something (e.g. Spark jobs) between begin() and end(), around one timed call."""

    def begin(self) -> None: ...

    def end(self) -> int: ...


@dataclass
class Measurement:
    """The wall times (seconds) of the repetitions of one timed call, and what each repetition returned."""

    name: str
    samples: list[float] = field(default_factory=list)
    outputs: list[Any] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)  # what the Counter counted, per repetition
    stopped_by_budget: bool = False

    @property
    def n(self) -> int:
        return len(self.samples)

    @property
    def median(self) -> float:
        return statistics.median(self.samples) if self.samples else float("nan")

    @property
    def low(self) -> float:
        return min(self.samples) if self.samples else float("nan")

    @property
    def high(self) -> float:
        return max(self.samples) if self.samples else float("nan")

    @property
    def last(self) -> Any:
        return self.outputs[-1] if self.outputs else None

    def cell(self) -> str:
        """'12.3 s [11.9-13.0] n=3' for a results table."""
        if not self.samples:
            return "-"
        budget = "*" if self.stopped_by_budget else ""
        return f"{fmt_s(self.median)} [{fmt_s(self.low, unit=False)}-{fmt_s(self.high, unit=False)}] n={self.n}{budget}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "samples_s": [round(s, 4) for s in self.samples],
            "median_s": round(self.median, 4) if self.samples else None,
            "min_s": round(self.low, 4) if self.samples else None,
            "max_s": round(self.high, 4) if self.samples else None,
            "counts": self.counts,
            "stopped_by_budget": self.stopped_by_budget,
        }

    def count_cell(self) -> str:
        """The median count, or '-'."""
        return str(int(statistics.median(self.counts))) if self.counts else "-"


def measure(
    name: str,
    call: Callable[[], Any],
    repeat: int,
    budget_s: float = 0.0,
    setup: Callable[[int], None] | None = None,
    echo: Callable[[str], None] | None = None,
    counter: Counter | None = None,
) -> Measurement:
    """Time `call` up to `repeat` times with time.perf_counter around the whole call.

    `setup(i)` runs untimed before repetition i (e.g. to restore a table). With `budget_s` > 0 a
    repetition is not started when the repetitions so far plus one more (estimated by their median)
    would exceed the budget; at least one repetition always runs. `counter` (begin/end, outside the
    timed span) counts e.g. the Spark jobs of each repetition.
    """
    result = Measurement(name)
    for i in range(max(1, repeat)):
        if i > 0 and budget_s > 0 and sum(result.samples) + result.median > budget_s:
            result.stopped_by_budget = True
            break
        if setup is not None:
            setup(i)
        if counter is not None:
            counter.begin()
        started = time.perf_counter()
        output = call()
        elapsed = time.perf_counter() - started
        if counter is not None:
            result.counts.append(counter.end())
        result.samples.append(elapsed)
        result.outputs.append(output)
        if echo is not None:
            echo(f"    {name} #{i + 1}: {elapsed:.2f} s")
    return result


def ratio(numerator: Measurement | float | None, denominator: Measurement | float | None) -> float | None:
    """numerator / denominator on medians; None when either is missing."""
    top = numerator.median if isinstance(numerator, Measurement) else numerator
    bottom = denominator.median if isinstance(denominator, Measurement) else denominator
    if top is None or bottom is None or bottom != bottom or top != top or bottom <= 0:
        return None
    return top / bottom


def fmt_s(seconds: float | None, unit: bool = True) -> str:
    if seconds is None or seconds != seconds:
        return "-"
    text = f"{seconds:.2f}" if seconds < 10 else f"{seconds:.1f}" if seconds < 100 else f"{seconds:.0f}"
    return f"{text} s" if unit else text


def fmt_ratio(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}x" if value < 10 else f"{value:.1f}x"


@dataclass(frozen=True)
class Process:
    """One fresh process timed whole: its wall seconds, its CPU seconds (user + system) and what it printed."""

    seconds: float
    cpu_s: float
    stdout: str


def run_process(
    command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None, ok: tuple[int, ...] = (0,)
) -> Process:
    """Run `command` as a fresh process and time it whole; a RuntimeError with its stderr's end when it exits with
    a code not in `ok`.

    Example: `run_process([sys.executable, "-m", "deltainc", "status", "trx"], cwd=root, env=bench_env(root))`.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in ok:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Process(seconds, cpu, done.stdout)
