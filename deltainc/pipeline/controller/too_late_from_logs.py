"""A one-unit window's too-late search fed through the Delta logs (docs/design.md#the-b-side-and-too-late-rows):
the target's final A rows and the window's B rows are read with delta-rs, and only those whose join keys meet a
row of the other side go to Spark, which joins them under the one match condition (`too_late_rows`).

A too-late B row's keys equal its A row's, so the rows left out can match nothing: the search's result is the
same as over the whole tables, while Spark no longer loads the target's snapshot, lists its files and checks
its deletion vectors for weeks of rows, and a window whose keys meet none runs no Spark job at all. Where the
logs cannot answer (a catalog table, S3 through Spark Connect, a `where` or `join_cond`, keys Spark would cast, an
incremental column other than a day job's DATE or an hour or minute job's TIMESTAMP), None: the search reads the
tables with Spark, as before.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from deltainc.join.output_layout import JOIN_TYPE
from deltainc.join.windows import Window
from deltainc.pipeline.controller.prepared_job import PreparedJob
from deltainc.pipeline.delta.delta_log import LogUnreadable
from deltainc.pipeline.delta.log_rows import existing_table, in_units, meeting_keys, unit_range_rows
from deltainc.pipeline.delta.snapshot import look
from deltainc.pipeline.delta.table import open_handle
from deltainc.pipeline.job.kinds import LateSearch
from deltainc.pipeline.target.too_late import FINAL_A_TYPES, a_side
from deltainc.spark_compat import session_kind
from deltainc.time_units import TimeUnit

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["LateInputs", "late_inputs_from_logs"]


@dataclass(frozen=True)
class LateInputs:
    """The too-late search's rows as read through the logs: the target's (its column names, `columns` mapping
    the A columns the search needs to them) and B's; `empty` when no key met, so nothing can be too late."""

    target_rows: DataFrame
    b_rows: DataFrame
    columns: Mapping[str, str]
    empty: bool


def late_inputs_from_logs(prepared: PreparedJob, search: LateSearch, window: Window) -> LateInputs | None:
    """The rows the too-late search of `window` (one unit, or any window whose own output it does not need) joins,
    read through the Delta logs and kept to those whose keys meet; None where the logs cannot answer (said once
    at info, as other log reads say it).

    E.g. `late_inputs_from_logs(prepared, prepared.join.late_search, Window(s, s, TimeUnit.DAY))`.
    """
    job, spark, spec = prepared.job, prepared.spark, search.spec
    b_ref, target = dict(job.sources)[search.role], job.target

    def from_log(b_location: str) -> LateInputs:
        if not session_kind(spark).reads_parquet_as_delta:
            raise LogUnreadable("a job on a classic Spark 4 session reads them through the logs")
        if spec.join_cond is not None or b_ref.where is not None or target.path is None:
            raise LogUnreadable("a join_cond, a where or a catalog target is resolved by Spark")
        return _read(prepared, search, window, b_location, open_handle(target, "target", spark).log_location())

    return prepared.tables[search.role].answer(f"{window}'s too-late search", from_log, lambda _why: None)


def _read(prepared: PreparedJob, search: LateSearch, window: Window, b_location: str, target: str) -> LateInputs:
    job, spec, rec = prepared.job, search.spec, prepared.rec
    inc, inc_b, join_cols = job.inc_col_of("source_a"), job.inc_col_of("source_b"), list(spec.join_cols)
    target_look = look(target)
    target_schema = T.StructType.fromJson(json.loads(target_look.schema_json))
    needed = list(dict.fromkeys([*join_cols, *job.target.keys, inc]))
    side = a_side(job.outcome_kind, spec.layout, target_schema.fieldNames(), needed)
    if not side.from_target:
        raise LogUnreadable(str(side.why))
    columns = {source: side.columns[source] for source in needed}
    # The final A rows published before the window whose B rows can be too late: dated (A's own RecDate) up to
    # e - mw - 1, output in [s - horizon, s - 1]; the exact bounds are Spark's again (`window_a_rows`).
    first, last_a = window.start - search.horizon, window.end - spec.max_waiting_time - 1
    a_names = [*columns.values(), JOIN_TYPE, rec]
    a = unit_range_rows(target_look.table, target, a_names, rec, first, window.start - 1, prepared.uom)
    a = _final_up_to(a, columns[inc], last_a, prepared.uom)
    b_names = list(dict.fromkeys([*join_cols, *job.target.b_keys, inc_b]))
    unnamed = [name for name in b_names if name not in search.schema.fieldNames()]
    if unnamed:  # Spark resolves names in any case; delta-rs and the types below take them as the table has them
        raise LogUnreadable(f"{search.role} has no column spelled {', '.join(unnamed)}")
    b = unit_range_rows(existing_table(b_location), b_location, b_names, inc_b, window.start, window.end, prepared.uom)
    a, b = meeting_keys(a, b, [(columns[key], key) for key in join_cols])
    spark = prepared.spark
    return LateInputs(
        _frame(spark, a, target_schema),
        _frame(spark, b, search.schema),
        columns,
        empty=a.num_rows == 0 or b.num_rows == 0,
    )


def _final_up_to(rows: pa.Table, a_inc: str, last: int, uom: TimeUnit) -> pa.Table:
    """The rows of `rows` that carry a final A row (FINAL_A_TYPES) of unit `last` or earlier."""
    import pyarrow as pa
    import pyarrow.compute as pc

    codes = rows.column(JOIN_TYPE)
    final = pc.is_in(codes, value_set=pa.array([int(code) for code in FINAL_A_TYPES]).cast(codes.type))
    return rows.filter(pc.and_(final, in_units(rows.column(a_inc), None, last, uom, f"the target's {a_inc}")))


def _frame(spark: SparkSession, rows: pa.Table, schema: T.StructType) -> DataFrame:
    """`rows` as a Spark DataFrame with the types Spark reads the table with (`schema`'s fields of those names)."""
    fields = {field.name: field for field in schema.fields}
    wanted = T.StructType([fields[name] for name in rows.column_names])
    return spark.createDataFrame(rows, schema=wanted)
