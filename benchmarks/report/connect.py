"""The `connect` section: `deltainc run` as its own JVM against a Spark Connect client of a warm server."""

from __future__ import annotations

import statistics

from benchmarks.report.results import Results
from benchmarks.report.verdicts import Verdict, judge

__all__ = ["connect_check", "connect_section"]


def connect_check(results: Results) -> Verdict:
    """A daily `deltainc run` starting its own JVM over the same as a Connect client (no goal)."""
    if not results.connect:
        return judge([])
    daily = results.connect["daily"]
    ratios = [a / b for a, b in zip(daily["local_s"], daily["connect_s"], strict=True)]
    return judge([(f"daily run, own JVM / Connect client = {statistics.median(ratios):.1f}x", None)])


def connect_section(results: Results) -> list[str]:
    """The Connect pairs' tables, or why the scenario did not run."""
    if not results.connect:
        return ["_Not run (Spark Connect needs Spark 4 and Delta 4)._"]
    from benchmarks.scenarios.connect import render as render_connect

    return render_connect(results.connect)
