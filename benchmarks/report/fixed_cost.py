"""The `fixed-cost` section: a small warm daily run on deltainc's session and on Delta's defaults, and its goal."""

from __future__ import annotations

import statistics

from benchmarks.report.results import Results
from benchmarks.report.verdicts import Verdict, judge

__all__ = ["fixed_cost_check", "fixed_cost_section"]


def fixed_cost_check(results: Results) -> Verdict:
    """deltainc's session: the daily run's median seconds (<= 3), Spark jobs (<= 15), Delta commits (<= 3)."""
    if not results.sessions or not results.sessions.get("deltainc"):
        return judge([])
    runs = results.sessions["deltainc"]
    seconds = statistics.median(s for r in runs for s in r["daily_s"])
    jobs = statistics.median(j for r in runs for j in r["daily_jobs"])
    commits = sum(runs[-1]["commits"])
    parts: list[tuple[str, bool | None]] = [
        (f"{seconds:.2f} s", seconds <= 3),
        (f"{jobs:.0f} Spark jobs", jobs <= 15),
        (f"{commits} Delta commits", commits <= 3),
    ]
    defaults = [s for r in results.sessions.get("delta-defaults", []) for s in r["daily_s"]]
    if defaults:
        parts.append((f"Delta's defaults {statistics.median(defaults):.2f} s", None))
    return judge(parts)


def fixed_cost_section(results: Results) -> list[str]:
    """The two sessions' daily runs, side by side."""
    if not results.sessions:
        return ["_Not run._"]
    from benchmarks.scenarios.fixed_cost import render as render_sessions

    return [
        "A small daily run in a warm session, on deltainc's session and on a session built only with Delta's "
        "defaults (`configure_spark_with_delta_pip`), each in a child process of its own "
        "(`benchmarks.scenarios.fixed_cost`).",
        "",
        *render_sessions(results.sessions, *results.sessions_size),
    ]
