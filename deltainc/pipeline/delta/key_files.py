"""Which files of a Delta table may hold one key's rows: those whose partition values equal the key's and whose
min/max statistics include it, the files Delta's data skipping keeps for a read filtered on the key (`explain`).
Pure comparisons (`may_hold`) and, for a table's live files, its log through delta-rs (`files_with_key`); no JVM.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from deltainc.pipeline.delta.delta_log import reading
from deltainc.pipeline.delta.snapshot import Snapshot, look
from deltainc.pipeline.delta.table import open_handle
from deltainc.pipeline.job.sections import TableRef

__all__ = ["as_type_of", "may_hold", "overlaps", "files_with_keys"]


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


def _bounds(snapshot: Snapshot, column: str) -> list[tuple[Any, Any, Any]]:
    """Each live file's (min, max, partition value) of `column`: its partition value where `column` partitions
    the table, else its min/max statistics."""
    if column in snapshot.partition_columns:
        return [(None, None, equal) for equal in snapshot.values(f"partition.{column}")]
    lows, highs = snapshot.values(f"min.{column}"), snapshot.values(f"max.{column}")
    return [(low, high, None) for low, high in zip(lows, highs, strict=True)]


def files_with_keys(
    ref: TableRef, role: str, keys: Sequence[Mapping[str, Any]], between: tuple[str, Any, Any] | None = None
) -> int | None:
    """How many live files of the table `ref` may hold rows with any of `keys` (each column -> value), and with
    the column `between[0]` in [`between[1]`, `between[2]`] when given, from its Delta log; None where the log
    cannot say (a catalog table, mapped column names, another reader feature).

    Example: ``files_with_keys(job.source_a, "source_a", [{"TrxId": 6}])`` -> 1 for a table whose ids rise by day.
    """

    def from_log(location: str) -> int | None:
        snapshot = look(location).statistics()
        with reading(snapshot.location):
            bounds = {name: _bounds(snapshot, snapshot.column(name)) for key in keys for name in key}
            files = [False] * snapshot.actions.num_rows
            for key in keys:
                holds = [True] * len(files)
                for name, value in key.items():
                    holds = [h and may_hold(value, *b) for h, b in zip(holds, bounds[name], strict=True)]
                files = [f or h for f, h in zip(files, holds, strict=True)]
            if between is not None:
                spans = _bounds(snapshot, snapshot.column(between[0]))
                files = [f and overlaps(between[1], between[2], *b) for f, b in zip(files, spans, strict=True)]
        return sum(files)

    return open_handle(ref, role).answer(f"the files of {role} with the key", from_log, _not_counted)


def _not_counted(_why: Exception) -> None:
    return None
