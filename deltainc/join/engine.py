"""The incremental join engine: two DataFrames in, one DataFrame out, one Spark plan, no writes.

Semantics (docs/design.md#join-semantics, docs/design.md#what-a-window-reads). For an output window
W = [s, e] in `time_uom` units:
- a B row b can match an A row a only if the keys (and `join_cond`) match and b.RecDate lies in the
  sliding join window [a.RecDate - lb, a.RecDate + mw]; with enforce_sliding_join_window = false, as in the
  seed library, every B row read (B.RecDate in [s - lb - mw, e]) can match, so matches depend on W's size;
- a matched pair is output at max(a.RecDate, b.RecDate); an unmatched A row at a.RecDate + WaitingTime,
  WaitingTime = min(mw, max(0, e - a.RecDate)); only rows whose output RecDate lies in W are returned;
- full_outer, B rows that match no A row: by default (the seed library's rule) output at b.RecDate with
  JoinType 0 NOT_MATCHED, which is not window-invariant (an A row of a later window may still match them);
  with `b_waits_for_a` such a B row waits for an A row like an A row waits for a B row: an A row can match it
  until b.RecDate + lb, so WaitingTime = min(lb, max(0, e - b.RecDate)) (reported in the WaitingTime column),
  it is output at b.RecDate + WaitingTime, JoinType 6 B_WAITING while WaitingTime < lb (dropped unless
  include_waiting) and 0 NOT_MATCHED, final, once WaitingTime = lb (at once when lb = 0); it needs
  enforce_sliding_join_window and is ignored by the other hows (they output no B-only row);
- asof (`deltainc.join.asof`): each A row once, with the nearest B row among its candidates or none; a match is
  output when final at a.RecDate + its final delay, before that as JoinType 7 PROVISIONAL at e (WaitingTime
  e - a.RecDate, dropped unless include_waiting); an unmatched A row waits as long as a candidate can arrive;
- the WaitingTime column: null for matched rows, the A row's wait for A-only rows, the B row's wait for B-only
  rows with `b_waits_for_a` (null under the seed library's rule);
- A is read in [s - mw, e] (with `b_waits_for_a`: [s - lb - mw, e], every A row that can match a B row
  output in W) and B in [s - lb - mw, e]: never a row after e (`deltainc.join.windows.open_read_bounds`).

The modules: `join_spec` validates the arguments, `columns` says when a B row matches an A row and derives the
equi-joins' rows, `asof` the as-of join's, this one reads the sources and puts the output together.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from deltainc.join.asof import A_ROW_ID, asof_rows
from deltainc.join.columns import UNIT, match_condition, matched_rows, side_column, source_filter, unit_index, unit_time
from deltainc.join.join_spec import JoinSpec, check_join, column_type
from deltainc.join.options import WAITING_TYPES, IncJoinSettings
from deltainc.join.output_layout import DIFF_ARRIVAL_TIME, JOIN_TYPE, RESERVED_PREFIX, WAITING_TIME
from deltainc.join.windows import open_read_bounds

__all__ = ["inc_join", "join_prepared", "read_sources", "read_units"]


def read_units(df: DataFrame, spec: JoinSpec, first: int | None, last: int | None, side: str) -> DataFrame:
    """Source `side` ("source_a" or "source_b") pruned to units [first, last] (None = open) of its own incremental
    column, with its unit index column `UNIT`: the engine's and the too-late rows' reads alike."""
    inc, uom = spec.settings.inc_col_of(side), spec.settings.time_uom
    data_type = column_type(df.schema, inc, side, spec.settings.inc_setting(side))
    pruned = df.where(source_filter(df, inc, uom, first, last))
    return pruned.withColumn(UNIT, unit_index(F.col(f"`{inc}`"), data_type, uom))


def read_sources(df_a: DataFrame, df_b: DataFrame, spec: JoinSpec) -> tuple[DataFrame, DataFrame]:
    """The pruned scans the join reads: A in [s - mw, e] ([s - lb - mw, e] when B waits), B in [s - lb - mw, e]."""
    bounds = open_read_bounds(spec.start, spec.end, spec.look_back_time, spec.max_waiting_time, spec.b_waits)
    return (
        read_units(df_a, spec, bounds.a_start, bounds.a_end, "source_a"),
        read_units(df_b, spec, bounds.b_start, bounds.b_end, "source_b"),
    )


def _with_latest_end(df_a: DataFrame, df_b: DataFrame, spec: JoinSpec) -> tuple[DataFrame, DataFrame, Column]:
    """When no window end is given: the latest unit present in both sources, computed inside the plan."""
    e_col = f"{RESERVED_PREFIX}e"
    latest = df_a.agg(F.max(UNIT).alias("a")).crossJoin(df_b.agg(F.max(UNIT).alias("b")))
    latest = latest.select(F.least("a", "b").alias(e_col))
    df_a = df_a.crossJoin(F.broadcast(latest)).where(F.col(UNIT) <= F.col(e_col))
    df_b = df_b.crossJoin(F.broadcast(latest)).where(F.col(UNIT) <= F.col(e_col))
    alias_a, alias_b = spec.settings.alias_a, spec.settings.alias_b
    return df_a, df_b, F.coalesce(F.col(f"{alias_a}.{e_col}"), F.col(f"{alias_b}.{e_col}"))


def inc_join(
    df_a: DataFrame,
    df_b: DataFrame,
    how: str = "left",
    join_cols: str | Sequence[str] | None = None,
    join_cond: str | Column | None = None,
    look_back_time: int = 0,
    max_waiting_time: int = 0,
    output_window_start: str | dt.date | dt.datetime | None = None,
    output_window_end: str | dt.date | dt.datetime | None = None,
    other_settings: IncJoinSettings | None = None,
) -> DataFrame:
    """Join A with B incrementally for the output window (the rules: this module's docstring, docs/concepts/).

    The rows returned are exactly the output rows whose output RecDate lies in the window, computed from the
    source rows that had arrived by its end: the same rows whichever way a range of days is cut into windows.

    Args:
        df_a: table A, the rows that wait for their match; it has the incremental column (`RecDate`, or its own
            `inc_col_name_a`).
        df_b: table B, the rows A waits for; the same incremental column (or its own `inc_col_name_b`).
        how: `inner`, `left` (or `left_outer`), `left_anti`, `full_outer` or `asof`.
        join_cols: equality keys present in both sources (a name or a list); a NULL key never matches.
        join_cond: an extra SQL condition (or Column) over the aliases, e.g. `"A.Amount = B.Amount"`.
        look_back_time: units of `time_uom` a B row may arrive before its A row (>= 0).
        max_waiting_time: units an A row waits for a B row arriving after it before it times out (>= 0).
        output_window_start: the window's first unit (a date, or a datetime for hour and minute jobs); None =
            from the sources' first rows.
        output_window_end: the window's last unit, inclusive; None = up to the latest RecDate in both sources.
        other_settings: aliases, `include_waiting`, the incremental column, `time_uom`, the as-of options,
            `output_select` (default: `IncJoinSettings()`).

    Returns:
        The joined rows: the join keys, the output `RecDate`, A's and B's columns (a name both have gets the
            alias as suffix), `DiffArrivalTime`, `WaitingTime` and `JoinType` (`deltainc.JoinType`'s codes).

    Raises:
        ConfigError: an argument out of range or of the wrong kind, naming it.
        SchemaError: a column the arguments name is missing from a source or has the wrong type.

    Example:
        ```python
        from deltainc import IncJoinSettings, inc_join

        out = inc_join(df_a, df_b, how="left", join_cols=["TrxId"], look_back_time=2, max_waiting_time=11,
                       output_window_start="2025-03-06", output_window_end="2025-03-18",
                       other_settings=IncJoinSettings(include_waiting=True))
        ```
    """
    spec = check_join(
        df_a,
        df_b,
        how,
        join_cols,
        join_cond,
        look_back_time,
        max_waiting_time,
        output_window_start,
        output_window_end,
        other_settings,
    )
    return join_prepared(df_a, df_b, spec)


def join_prepared(df_a: DataFrame, df_b: DataFrame, spec: JoinSpec) -> DataFrame:
    """The join for an already validated spec (the pipeline validates once, then joins)."""
    settings, layout = spec.settings, spec.layout
    s = spec.start
    alias_a, alias_b = settings.alias_a, settings.alias_b

    a_src, b_src = read_sources(df_a, df_b, spec)
    if spec.end is None:
        a_src, b_src, e = _with_latest_end(a_src, b_src, spec)
    else:
        e = F.lit(spec.end)
    if spec.how == "asof":
        a_src = a_src.withColumn(A_ROW_ID, F.monotonically_increasing_id())
    a, b = a_src.alias(alias_a), b_src.alias(alias_b)

    def col_a(name: str) -> Column:
        return side_column(alias_a, name)

    def col_b(name: str) -> Column:
        return side_column(alias_b, name)

    # Without the sliding join window the seed library adds no time condition: the read bounds [s - lb - mw, e]
    # alone limit B.
    condition = match_condition(spec, UNIT if settings.enforce_sliding_join_window else None)

    rows = asof_rows if spec.how == "asof" else matched_rows
    joined, diff, waiting, out_t, join_type = rows(a, b, condition, spec, e)

    keep = out_t <= e
    if s is not None:
        keep = keep & (out_t >= F.lit(s))
    if not settings.include_waiting:
        keep = keep & ~join_type.isin(*[int(code) for code in WAITING_TYPES])

    columns: dict[str, Column] = {}
    for key in spec.join_cols:
        columns[key] = col_a(key) if spec.how == "left_anti" else F.coalesce(col_a(key), col_b(key))
    columns[layout.inc_col] = unit_time(out_t, settings.time_uom)
    for source, name in layout.a_names:
        columns[name] = col_a(source)
    for source, name in layout.b_names:
        columns[name] = col_b(source)
    columns[DIFF_ARRIVAL_TIME] = diff.cast("int")
    columns[WAITING_TIME] = waiting.cast("int")
    columns[JOIN_TYPE] = join_type.cast("int")

    return joined.where(keep).select(*[columns[name].alias(name) for name in layout.selected])
