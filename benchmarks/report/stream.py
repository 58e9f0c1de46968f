"""The `stream` section: Structured Streaming against deltainc's daily run for the same day."""

from __future__ import annotations

from benchmarks.report.results import Results
from benchmarks.report.tables import one_row, table
from benchmarks.report.verdicts import Verdict, judge
from benchmarks.timing import fmt_ratio, ratio

__all__ = ["stream_check", "stream_section"]


def stream_check(results: Results) -> Verdict:
    """The stream over deltainc's daily run for the same day (no goal)."""
    if results.stream is None:
        return judge([])
    return judge([(f"stream / deltainc = {fmt_ratio(ratio(results.stream.stream, results.stream.daily))}", None)])


def stream_section(results: Results) -> list[str]:
    """Structured Streaming against deltainc's daily run for the same day, and how their outputs differ."""
    s = results.stream
    if s is None:
        return ["_Not run._"]
    progress = s.progress or {}
    report = s.daily.last.record if s.daily.last else None
    deltainc_read = f"{report.files_read_a} / {report.files_read_b} / {report.files_read_target}" if report else "-"
    return [
        "`readStream` of copies of A and B (days 1..D-1, then day D appended as one load), event time = RecDate, "
        "`withWatermark` on both, stream-stream left outer join on TrxId with B's time in [A's - lb, A's + mw], "
        "`trigger(availableNow=True)`, foreachBatch MERGE (insert if absent, pruned to the batch's RecDate_A "
        "range) into a Delta target. Timed: the AvailableNow run that processes day D (checkpoint and target "
        "restored between repetitions). deltainc: its daily run for day D on the same copies.",
        "",
        *one_row(
            {
                "day": str(s.day),
                "stream (AvailableNow + foreachBatch MERGE)": s.stream.cell(),
                "deltainc daily run": s.daily.cell(),
                "stream / deltainc": fmt_ratio(ratio(s.stream, s.daily)),
                "stream batches / input rows": f"{progress.get('batches', '-')} / {progress.get('input_rows', '-')}",
                "deltainc files read A / B / target": deltainc_read,
                "deltainc Spark jobs": s.daily.count_cell(),
            }
        ),
        "",
        f"Outputs after day {s.day} (watermark delay {s.watermark_delay!r} on both sides):",
        "",
        *table(
            ["outcome", "deltainc rows", "stream rows", "only in deltainc", "only in stream"],
            [[name, str(a), str(b), str(c), str(d)] for name, a, b, c, d in s.outcomes],
        ),
        "",
        "The stream's output is append-only: it emits an unmatched A row once, when the watermark evicts it "
        "from the join state, and cannot show it before (deltainc shows it as a_waiting and updates it later). "
        f"Of deltainc's a_timed_out rows missing from the stream, {s.late_timeouts} time out on day {s.day} itself "
        "(A.RecDate = D - mw): the stream still holds them, since it evicts only once the watermark is past "
        "A.RecDate + mw, i.e. on its next run. "
        f"Rows the stream emitted as timed out (final, it cannot revise them) whose A row deltainc matched: "
        f"{s.cannot_revise}.",
    ]
