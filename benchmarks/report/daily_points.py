"""The cells of a daily run's measurements (a DailyPoint) that the daily, growth and floor sections share, and their
table with a row per history size."""

from __future__ import annotations

from collections.abc import Callable

from benchmarks.report.tables import mib, table
from benchmarks.scenarios.daily import DailyPoint
from deltainc.pipeline.delta.spark_counts import ScanStats

__all__ = ["files_read", "per_size", "read_cell", "scans_cell"]


def files_read(point: DailyPoint) -> int:
    """The files the daily run read, of A, B and the target together."""
    r = point.report.record
    return r.files_read_a + r.files_read_b + r.files_read_target


def read_cell(point: DailyPoint) -> str:
    """'files of A / B / target (their MiB)' that the daily run read."""
    r = point.report.record
    total = r.bytes_read_a + r.bytes_read_b + r.bytes_read_target
    return f"{r.files_read_a} / {r.files_read_b} / {r.files_read_target} ({mib(total)})"


def scans_cell(stats: tuple[ScanStats, ScanStats] | None) -> str:
    """'files of A / files of B (their MiB)' for two planned scans, or '-'."""
    if stats is None:
        return "-"
    a, b = stats
    return f"{a.files} / {b.files} ({mib(a.bytes + b.bytes)})"


def per_size(points: list[DailyPoint], columns: dict[str, Callable[[DailyPoint], str]]) -> list[str]:
    """A table with a row per history size D: `D (days)`, then a column per header of `columns`, each point's cell."""
    return table(["D (days)", *columns], [[str(p.days), *(cell(p) for cell in columns.values())] for p in points])
