"""What a target of the benchmark's left join holds: its outcomes (JoinType), its columns, and two targets compared
row for row."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame

from deltainc.demo.sample_data import A_SCHEMA, B_SCHEMA
from deltainc.join.options import IncJoinSettings, counted_types
from deltainc.join.output_layout import plan_layout

__all__ = ["MATCHED", "OUTCOMES", "OUTPUT_COLUMNS", "Comparison", "compare", "outcome_counts"]

# JoinType code -> name, as in docs/design.md#outcomes-of-a-row.
OUTCOMES: dict[int, str] = {code: code.outcome for code in counted_types("left")}
MATCHED = (1, 2, 3)
# The target's columns, in the order deltainc's default output_select gives them to the benchmark's left join
# (waiting rows included) of the sample sources.
OUTPUT_COLUMNS: tuple[str, ...] = plan_layout(
    A_SCHEMA.fieldNames(), B_SCHEMA.fieldNames(), ["TrxId"], "left", IncJoinSettings(include_waiting=True)
).selected


@dataclass(frozen=True)
class Comparison:
    """Two tables compared as multisets of rows."""

    rows_left: int
    rows_right: int
    only_left: int
    only_right: int

    @property
    def equal(self) -> bool:
        return self.only_left == 0 and self.only_right == 0 and self.rows_left == self.rows_right


def compare(left: DataFrame, right: DataFrame) -> Comparison:
    """Row-for-row comparison (exceptAll both ways, counts), columns matched by name."""
    right = right.select(*left.columns)
    return Comparison(left.count(), right.count(), left.exceptAll(right).count(), right.exceptAll(left).count())


def outcome_counts(frame: DataFrame) -> dict[str, int]:
    """Rows per JoinType name."""
    found = {int(r["JoinType"]): int(r["count"]) for r in frame.groupBy("JoinType").count().collect()}
    return {name: found.get(code, 0) for code, name in OUTCOMES.items()}
