"""What a scenario's run gets from the harness (`Context`): its session, settings, options, results and folder."""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import SparkSession

from benchmarks.bench import Bench
from benchmarks.data import ensure_sources
from benchmarks.report.results import Results
from deltainc.demo.sample_data import SampleSpec
from deltainc.settings import Settings

__all__ = ["START", "Context"]

START = dt.date(2024, 1, 1)  # the first day of every generated source


@dataclass(frozen=True)
class Context:
    """What a scenario's run gets: the harness's session and settings, the command line's options, the names chosen
    with `--scenarios`, the results to fill in, its own name, the progress echo, and the bench over the command
    line's sources (None when no chosen scenario uses them)."""

    spark: SparkSession
    settings: Settings
    args: argparse.Namespace
    chosen: frozenset[str]
    results: Results
    name: str
    echo: Callable[[str], None]
    shared: Bench | None

    @property
    def bench(self) -> Bench:
        """The bench over the command line's sources (`--rows-per-day` x `--days`)."""
        if self.shared is None:
            raise RuntimeError(f"{self.name}: the command line's sources were not generated")
        return self.shared

    @property
    def folder(self) -> Path:
        """The scenario's own folder, under --data's work folder (emptied at the start of every run)."""
        return Path(self.args.data).absolute() / "work" / self.name

    def small(self) -> Bench:
        """A bench on the harness's session over sources of its own: R = 2,000 rows a day over 40 days, or
        `--rows-per-day` and `--days` when smaller (the smoke test's sizes), kept under --data/small between runs;
        the scenario works in its folder."""
        args = self.args
        spec = SampleSpec(start=START, days=min(40, args.days), rows_per_day=min(2000, args.rows_per_day))
        sources = ensure_sources(self.spark, Path(args.data).absolute() / "small", spec)
        return Bench(self.spark, self.settings, sources, self.folder, args.repeat, args.max_seconds, args.look_back,
                     args.max_wait, None, self.echo)  # fmt: skip
