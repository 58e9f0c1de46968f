"""The `reload` section: one reload against the daily runs of the same days, and its goal."""

from __future__ import annotations

from benchmarks.outcomes import OUTCOMES
from benchmarks.report.results import Results
from benchmarks.report.tables import one_row, table, yes
from benchmarks.report.verdicts import Verdict, at_least, judge
from benchmarks.timing import fmt_ratio, fmt_s, ratio

__all__ = ["reload_check", "reload_section"]


def reload_check(results: Results) -> Verdict:
    """The daily runs over the reload of the same days (>= 20x), and both targets equal."""
    r = results.reload
    if r is None:
        return judge([])
    value = ratio(r.daily, r.reload)
    return judge(
        [
            (f"daily runs / reload of {r.days} days = {fmt_ratio(value)}", at_least(value, 20)),
            (f"targets equal: {yes(r.comparison.equal)}", r.comparison.equal),
        ]
    )


def _median_int(values: list[int]) -> str:
    return str(sorted(values)[len(values) // 2]) if values else "-"


def reload_section(results: Results) -> list[str]:
    """One reload against the daily runs of the same days, and whether their targets agree."""
    r = results.reload
    if r is None:
        return ["_Not run._"]
    per_run = sorted(r.per_run)
    median_run = per_run[len(per_run) // 2] if per_run else None
    one_run = f"{fmt_s(median_run)} [{fmt_s(per_run[0], False)}-{fmt_s(per_run[-1], False)}]" if per_run else "-"
    c = r.comparison
    return [
        "Days 1..R in one `pipeline.run` (max_window = 0) into target X vs. R separate `pipeline.run` calls "
        "(max_window = 1, one day each) into target Y, each from an empty target and state.",
        "",
        *one_row(
            {
                "days reloaded": str(r.days),
                "one run (max_window = 0)": r.reload.cell(),
                "daily runs, total": r.daily.cell(),
                "one daily run (last set)": one_run,
                "daily / reload": fmt_ratio(ratio(r.daily, r.reload)),
                "Spark jobs reload / one daily run": f"{r.reload.count_cell()} / {_median_int(r.jobs_per_run)}",
            }
        ),
        "",
        f"Targets identical (exceptAll both ways, counts): {yes(c.equal)}: {c.rows_left} rows in the reload target, "
        f"{c.rows_right} in the daily target, {c.only_left} only in the reload, {c.only_right} only in the daily.",
        "",
        *table(
            ["outcome", "reload target", "daily target"],
            [[name, str(r.counts_x[name]), str(r.counts_y[name])] for name in OUTCOMES.values()],
        ),
    ]
