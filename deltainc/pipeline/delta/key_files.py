"""Which files of a Delta table may hold one key's rows: those whose partition values equal the key's and whose
min/max statistics include it, the files Delta's data skipping keeps for a read filtered on the key (`explain`).
Pure comparisons (`may_hold`) and, for a table's live files, its log through delta-rs (`files_with_key`); no JVM.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from deltainc.pipeline.delta.delta_log import reading
from deltainc.pipeline.delta.delta_log_stats import source_location
from deltainc.pipeline.delta.snapshot import log_else, look
from deltainc.pipeline.job.sections import TableRef

__all__ = ["as_type_of", "may_hold", "overlaps", "files_with_key"]


def as_type_of(value: Any, like: Any) -> Any:
    """`value` (a statistic or partition value, as the log gives it) as the Python type of `like`; None when it
    does not convert (the caller then keeps the file: a statistic it cannot read rules nothing out).

    Example: ``as_type_of("2025-03-07", dt.date(2025, 3, 1)) == dt.date(2025, 3, 7)``.
    """
    if value is None or isinstance(value, type(like)):
        return value
    try:
        if isinstance(like, bool):
            return str(value).lower() == "true"
        if isinstance(like, dt.datetime):
            return None  # a timestamp statistic is truncated to the millisecond: not compared
        if isinstance(like, dt.date):
            return dt.date.fromisoformat(str(value)[:10])
        if isinstance(like, Decimal):
            return Decimal(str(value))
        return type(like)(value)
    except (ValueError, TypeError, InvalidOperation):
        return None


def may_hold(value: Any, low: Any = None, high: Any = None, equal: Any = None) -> bool:
    """Whether a file may hold `value`: its partition value `equal` is it, and it lies in the file's statistics
    [`low`, `high`]; a bound that is missing or does not compare rules nothing out.

    Example: ``may_hold(6, low=1, high=5) is False``; ``may_hold(6, equal="6") is True``.
    """
    if equal is not None:
        known = as_type_of(equal, value)
        if known is not None and known != value:
            return False
    below, above = as_type_of(low, value), as_type_of(high, value)
    try:
        return not ((below is not None and value < below) or (above is not None and value > above))
    except TypeError:  # values that do not compare (e.g. NaN's kin): not ruled out
        return True


def overlaps(low: Any, high: Any, file_low: Any = None, file_high: Any = None, equal: Any = None) -> bool:
    """Whether a file may hold a value in [`low`, `high`]: its partition value `equal`, or its statistics
    [`file_low`, `file_high`], meet the range; a bound that is missing or does not compare rules nothing out.

    Example: ``overlaps(date(2025, 3, 5), date(2025, 3, 9), equal="2025-03-10") is False``.
    """
    if equal is not None:
        known = as_type_of(equal, low)
        return known is None or may_hold(known, low=low, high=high)
    return may_hold(low, high=file_high) and may_hold(high, low=file_low)


def files_with_key(
    ref: TableRef, role: str, values: Mapping[str, Any], between: tuple[str, Any, Any] | None = None
) -> int | None:
    """How many live files of the table `ref` may hold rows with `values` (column -> value), and with the column
    `between[0]` in [`between[1]`, `between[2]`] when given, from its Delta log; None where the log cannot say (a
    catalog table, mapped column names, another reader feature).

    Example: ``files_with_key(job.source_a, "source_a", {"TrxId": 6})`` -> 1 for a table whose ids rise by day.
    """

    def from_log() -> int | None:
        snapshot = look(source_location(ref, role)).statistics()
        with reading(snapshot.location):
            names = {name: snapshot.column(name) for name in values}
            partitions = set(snapshot.partition_columns)
            files = [True] * snapshot.actions.num_rows
            for name, value in values.items():
                column = names[name]
                if column in partitions:
                    bounds = [(None, None, equal) for equal in snapshot.values(f"partition.{column}")]
                else:
                    lows, highs = snapshot.values(f"min.{column}"), snapshot.values(f"max.{column}")
                    bounds = [(low, high, None) for low, high in zip(lows, highs, strict=True)]
                files = [kept and may_hold(value, *bound) for kept, bound in zip(files, bounds, strict=True)]
            if between is not None:
                column, low, high = snapshot.column(between[0]), between[1], between[2]
                if column in partitions:
                    spans = [(None, None, equal) for equal in snapshot.values(f"partition.{column}")]
                else:
                    lows, highs = snapshot.values(f"min.{column}"), snapshot.values(f"max.{column}")
                    spans = [(first, last, None) for first, last in zip(lows, highs, strict=True)]
                files = [kept and overlaps(low, high, *span) for kept, span in zip(files, spans, strict=True)]
        return sum(files)

    return log_else(f"the files of {role} with the key", from_log, _not_counted)


def _not_counted(_why: Exception) -> None:
    return None
