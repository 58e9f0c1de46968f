"""The incremental join engine: two DataFrames in, one DataFrame out, one Spark plan, no writes.

Semantics (DESIGN.md sections 2-3). For an output window W = [s, e] in `time_uom` units:
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
  output in W) and B in [s - lb - mw, e]: never a row after e.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from deltainc.errors import ConfigError, SchemaError
from deltainc.join import asof
from deltainc.join.join_types import WAITING_TYPES, JoinType, normalize_how
from deltainc.join.output_layout import (
    DIFF_ARRIVAL_TIME,
    JOIN_TYPE,
    RESERVED_PREFIX,
    WAITING_TIME,
    OutputLayout,
    plan_layout,
)
from deltainc.join.settings import IncJoinSettings
from deltainc.join.windows import from_index, parse_point, unit_seconds

__all__ = [
    "inc_join",
    "JoinSpec",
    "prepare_join",
    "join_prepared",
    "read_sources",
    "source_filter",
    "unit_index",
    "unit_time",
]

_T = f"{RESERVED_PREFIX}t"  # unit index of the incremental column
_ID = f"{RESERVED_PREFIX}id"  # asof: one id per A row, to keep one match per A row
_KEY_FAMILIES = (
    (T.ByteType, T.ShortType, T.IntegerType, T.LongType),
    (T.FloatType, T.DoubleType),
    (T.DecimalType,),
)
_TIME_TYPES = (T.DateType, T.TimestampType, T.TimestampNTZType)


@dataclass(frozen=True)
class JoinSpec:
    """A validated join: everything `inc_join` needs besides the two DataFrames."""

    how: str
    join_cols: tuple[str, ...]
    join_cond: str | Column | None
    look_back_time: int
    max_waiting_time: int
    start: int | None  # unit index of the output window start; None = unbounded
    end: int | None  # unit index of the output window end; None = latest RecDate in both sources
    settings: IncJoinSettings
    layout: OutputLayout


def _check_time(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{field}: expected a whole number of time units >= 0, got {value!r}")
    if value < 0:
        raise ConfigError(f"{field}: must be >= 0, got {value}")
    return value


def _check_join_cols(join_cols: str | Sequence[str] | None, join_cond: object) -> tuple[str, ...]:
    cols: tuple[str, ...] = (join_cols,) if isinstance(join_cols, str) else tuple(join_cols or ())
    if any(not isinstance(c, str) or not c.strip() for c in cols):
        raise ConfigError(f"join_cols: expected non-empty column names, got {list(cols)!r}")
    if len({c.lower() for c in cols}) != len(cols):
        raise ConfigError(f"join_cols: duplicate column in {list(cols)!r}")
    if not cols and join_cond is None:
        raise ConfigError("join_cols / join_cond: give at least one join key or a join condition")
    return cols


def _column_type(df: DataFrame, column: str, side: str, role: str) -> T.DataType:
    for field in df.schema.fields:
        if field.name == column:
            return field.dataType
    raise SchemaError(f"{role}: column {column!r} missing from {side} (columns: {', '.join(df.columns)})")


def _check_sources(df_a: DataFrame, df_b: DataFrame, join_cols: Sequence[str], inc: str) -> None:
    for side, df in (("source_a", df_a), ("source_b", df_b)):
        inc_type = _column_type(df, inc, side, "inc_col_name")
        if not isinstance(inc_type, _TIME_TYPES):
            raise SchemaError(
                f"inc_col_name: column {inc!r} of {side} must be a date or timestamp, got {inc_type.simpleString()}"
            )
    for key in join_cols:
        a_type = _column_type(df_a, key, "source_a", "join_cols")
        b_type = _column_type(df_b, key, "source_b", "join_cols")
        same_family = any(isinstance(a_type, fam) and isinstance(b_type, fam) for fam in _KEY_FAMILIES)
        if a_type != b_type and not same_family:
            raise SchemaError(
                f"join_cols: key {key!r} has type {a_type.simpleString()} in source_a but "
                f"{b_type.simpleString()} in source_b; cast one of them"
            )


def _check_join_cond(df_a: DataFrame, df_b: DataFrame, join_cond: str | Column, settings: IncJoinSettings) -> None:
    """Resolve the condition against the aliased sources (analysis only, no Spark job)."""
    try:
        condition = F.expr(join_cond) if isinstance(join_cond, str) else join_cond
        df_a.alias(settings.alias_a).join(df_b.alias(settings.alias_b), condition, "inner").schema  # noqa: B018
    except Exception as exc:  # pyspark raises ParseException / AnalysisException here
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(
            f"join_cond: cannot be resolved against source_a as {settings.alias_a!r} and source_b as "
            f"{settings.alias_b!r}: {first_line}"
        ) from None


def _check_asof(df_a: DataFrame, df_b: DataFrame, join_cols: Sequence[str], settings: IncJoinSettings) -> None:
    """An as-of join needs the sliding join window (finality rests on it), and time columns (`asof_col`, B's named
    `asof_col_b` when it differs) of one kind that are not keys; `asof_tie_break` names columns of B."""
    if not settings.enforce_sliding_join_window:
        raise ConfigError(
            "how: 'asof' needs enforce_sliding_join_window = true: a match is final only once no nearer B row "
            "can still arrive, which the sliding join window bounds"
        )
    if settings.asof_col is not None:
        names = (settings.asof_col, settings.asof_col_b or settings.asof_col)
        field_b = "asof_col_b" if settings.asof_col_b else "asof_col"
        kinds = []
        sides = (("source_a", df_a, names[0], "asof_col"), ("source_b", df_b, names[1], field_b))
        for side, df, column, field in sides:
            if column.lower() in {c.lower() for c in join_cols}:
                raise ConfigError(f"{field}: {column!r} is a join key; name a time column of {side}")
            data_type = _column_type(df, column, side, field)
            if not isinstance(data_type, _TIME_TYPES):
                raise SchemaError(
                    f"{field}: column {column!r} of {side} must be a date or timestamp, got {data_type.simpleString()}"
                )
            kinds.append(isinstance(data_type, T.DateType))
        if kinds[0] != kinds[1]:
            raise SchemaError(f"{field_b}: A's {names[0]!r} and B's {names[1]!r} must both be dates or both timestamps")
    for name in settings.asof_tie_break:
        _column_type(df_b, name, "source_b", "asof_tie_break")


def prepare_join(
    a_columns_df: DataFrame,
    b_columns_df: DataFrame,
    how: str = "left",
    join_cols: str | Sequence[str] | None = None,
    join_cond: str | Column | None = None,
    look_back_time: int = 0,
    max_waiting_time: int = 0,
    output_window_start: str | dt.date | dt.datetime | None = None,
    output_window_end: str | dt.date | dt.datetime | None = None,
    other_settings: IncJoinSettings | None = None,
) -> JoinSpec:
    """Validate every argument against the two sources' schemas; raise before anything is computed."""
    settings = other_settings if other_settings is not None else IncJoinSettings()
    if not isinstance(settings, IncJoinSettings):
        raise ConfigError(f"other_settings: expected IncJoinSettings, got {type(settings).__name__}")
    canonical = normalize_how(how)
    lb = _check_time(look_back_time, "look_back_time")
    mw = _check_time(max_waiting_time, "max_waiting_time")
    cols = _check_join_cols(join_cols, join_cond)
    if join_cond is not None and not isinstance(join_cond, (str, Column)):
        raise ConfigError(f"join_cond: expected a SQL string or a Column, got {type(join_cond).__name__}")
    uom = settings.time_uom
    start = None if output_window_start is None else parse_point(output_window_start, "output_window_start", uom)
    end = None if output_window_end is None else parse_point(output_window_end, "output_window_end", uom)
    if canonical == "full_outer" and settings.b_waits_for_a and not settings.enforce_sliding_join_window:
        raise ConfigError(
            "b_waits_for_a: needs enforce_sliding_join_window = true: without the sliding join window an A row "
            "of any later window can match a B row, so a B row never stops waiting"
        )
    if canonical == "asof":
        _check_asof(a_columns_df, b_columns_df, cols, settings)
    elif settings.asof_col is not None or "asof_strategy" in settings.model_fields_set:
        field = "asof_col" if settings.asof_col is not None else "asof_strategy"  # asof_col_b needs asof_col
        raise ConfigError(f"{field}: only for how = 'asof', got how = {canonical!r}")
    if start is not None and end is not None and start > end:
        raise ConfigError(
            f"output window: output_window_start {from_index(start, uom)} is after "
            f"output_window_end {from_index(end, uom)}"
        )
    _check_sources(a_columns_df, b_columns_df, cols, settings.inc_col_name)
    if join_cond is not None:
        _check_join_cond(a_columns_df, b_columns_df, join_cond, settings)
    layout = plan_layout(a_columns_df.columns, b_columns_df.columns, cols, canonical, settings)
    return JoinSpec(canonical, cols, join_cond, lb, mw, start, end, settings, layout)


def unit_index(column: Column, data_type: T.DataType, uom: str) -> Column:
    """Integer units since 1970-01-01 UTC (session time zone), truncated to the unit."""
    if uom == "day":
        day = column if isinstance(data_type, T.DateType) else F.to_date(column)
        return F.datediff(day, F.lit(dt.date(1970, 1, 1)))
    seconds = F.unix_timestamp(column.cast("timestamp"))
    return F.floor(seconds / F.lit(unit_seconds(uom))).cast("int")


def unit_time(index: Column, uom: str) -> Column:
    """The date (day) or timestamp (hour, minute) of a unit index: the inverse of `unit_index`, for output RecDates."""
    if uom == "day":
        return F.date_add(F.lit(dt.date(1970, 1, 1)), index)
    return F.timestamp_seconds(index.cast("long") * F.lit(unit_seconds(uom)))


def source_filter(df: DataFrame, inc: str, uom: str, first: int | None, last: int | None) -> Column:
    """Literal bounds on the raw incremental column, so that Delta prunes partitions and files."""
    data_type = _column_type(df, inc, "source", "inc_col_name")
    column = F.col(f"`{inc}`")
    condition = column.isNotNull()
    if first is not None:
        condition = condition & (column >= F.lit(from_index(first, uom)))
    if last is not None:
        if isinstance(data_type, T.DateType) and uom == "day":
            condition = condition & (column <= F.lit(from_index(last, uom)))
        else:
            upper = from_index(last + 1, uom)
            bound = dt.datetime(upper.year, upper.month, upper.day) if not isinstance(upper, dt.datetime) else upper
            condition = condition & (column < F.lit(bound))
    return condition


def _minus(bound: int | None, amount: int) -> int | None:
    return None if bound is None else bound - amount


def _read(df: DataFrame, spec: JoinSpec, first: int | None) -> DataFrame:
    inc, uom = spec.settings.inc_col_name, spec.settings.time_uom
    data_type = _column_type(df, inc, "source", "inc_col_name")
    pruned = df.where(source_filter(df, inc, uom, first, spec.end))
    return pruned.withColumn(_T, unit_index(F.col(f"`{inc}`"), data_type, uom))


def _b_waits(spec: JoinSpec) -> bool:
    """Whether unmatched B rows wait lb units for an A row (full_outer with `b_waits_for_a`)."""
    return spec.how == "full_outer" and spec.settings.b_waits_for_a


def read_sources(df_a: DataFrame, df_b: DataFrame, spec: JoinSpec) -> tuple[DataFrame, DataFrame]:
    """The pruned scans the join reads: A in [s - mw, e] ([s - lb - mw, e] when B waits), B in [s - lb - mw, e]."""
    mw, lb = spec.max_waiting_time, spec.look_back_time
    # A B row output in W has b.RecDate >= s - lb when it waits; every A row that can match it is in [b - mw, e].
    a_first = _minus(spec.start, mw + lb) if _b_waits(spec) else _minus(spec.start, mw)
    return _read(df_a, spec, a_first), _read(df_b, spec, _minus(spec.start, lb + mw))


def _with_latest_end(df_a: DataFrame, df_b: DataFrame, spec: JoinSpec) -> tuple[DataFrame, DataFrame, Column]:
    """When no window end is given: the latest unit present in both sources, computed inside the plan."""
    e_col = f"{RESERVED_PREFIX}e"
    latest = df_a.agg(F.max(_T).alias("a")).crossJoin(df_b.agg(F.max(_T).alias("b")))
    latest = latest.select(F.least("a", "b").alias(e_col))
    df_a = df_a.crossJoin(F.broadcast(latest)).where(F.col(_T) <= F.col(e_col))
    df_b = df_b.crossJoin(F.broadcast(latest)).where(F.col(_T) <= F.col(e_col))
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
    """Join A with B incrementally for the output window; see the module docstring for the rules."""
    spec = prepare_join(
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


_Rows = tuple[DataFrame, Column, Column, Column, Column]  # joined rows, DiffArrivalTime, WaitingTime, out t, JoinType


def _rows(a: DataFrame, b: DataFrame, condition: Column, spec: JoinSpec, e: Column) -> _Rows:
    """The equi-joins (inner, left, left_anti, full_outer): every pair in the sliding join window."""
    lb, mw = spec.look_back_time, spec.max_waiting_time
    a_t, b_t = F.col(f"{spec.settings.alias_a}.{_T}"), F.col(f"{spec.settings.alias_b}.{_T}")
    if spec.how == "left_anti":
        joined = a.join(b, condition, "left_anti")
        b_t = F.lit(None).cast("int")  # B's columns are gone after an anti join
        matched = F.lit(False)
        a_only = F.lit(True)
    else:
        spark_how = {"inner": "inner", "left": "left_outer", "full_outer": "full_outer"}[spec.how]
        joined = a.join(b, condition, spark_how)
        matched = a_t.isNotNull() & b_t.isNotNull()
        a_only = a_t.isNotNull() & b_t.isNull()
    b_only = a_t.isNull() & b_t.isNotNull()  # full_outer only
    b_waits = _b_waits(spec)

    diff = F.when(matched, b_t - a_t)
    waiting = F.when(a_only, F.least(F.lit(mw), F.greatest(F.lit(0), e - a_t)))
    if b_waits:
        waiting = waiting.when(b_only, F.least(F.lit(lb), F.greatest(F.lit(0), e - b_t)))
    out_t = F.when(matched, F.greatest(a_t, b_t)).when(a_only, a_t + waiting)
    if spec.how == "full_outer":
        out_t = out_t.otherwise(b_t + waiting) if b_waits else out_t.otherwise(b_t)
    join_type = (
        F.when(matched & (diff == 0), int(JoinType.SAME_TIME))
        .when(matched & (diff < 0), int(JoinType.A_LATE))
        .when(matched, int(JoinType.B_LATE))
        .when(a_only & (waiting == F.lit(mw)), int(JoinType.A_TIMED_OUT))
        .when(a_only, int(JoinType.A_WAITING))
    )
    if b_waits:
        join_type = join_type.when(b_only & (waiting < F.lit(lb)), int(JoinType.B_WAITING))
    return joined, diff, waiting, out_t, join_type.otherwise(int(JoinType.NOT_MATCHED))


def _asof_rows(a: DataFrame, b: DataFrame, condition: Column, spec: JoinSpec, e: Column) -> _Rows:
    """The as-of join (`deltainc.join.asof`): each A row once, with its nearest candidate, final or provisional."""
    settings, lb, mw = spec.settings, spec.look_back_time, spec.max_waiting_time
    alias_a, alias_b = settings.alias_a, settings.alias_b
    a_t, b_t = F.col(f"{alias_a}.{_T}"), F.col(f"{alias_b}.{_T}")
    exact, strategy = settings.asof_col is not None, settings.asof_strategy
    if exact:
        a_col = settings.asof_col or ""
        b_col = settings.asof_col_b or a_col
        a_time = asof.asof_time(F.col(f"{alias_a}.`{a_col}`"), a.schema[a_col].dataType, True, a_t)
        b_time = asof.asof_time(F.col(f"{alias_b}.`{b_col}`"), b.schema[b_col].dataType, True, b_t)
    else:
        a_time, b_time = a_t, b_t
    scale = asof.time_scale(exact, settings.time_uom)
    candidate = condition & asof.is_candidate(a_time, b_time, strategy, lb, mw, scale)
    joined = a.join(b, candidate, "left_outer")
    named = list(settings.asof_tie_break)
    others = [
        f.name
        for f in b.schema.fields
        if f.name not in named and f.name != _T and not isinstance(f.dataType, T.MapType)  # maps do not order
    ]
    tie_break = [F.col(f"{alias_b}.`{name}`") for name in [*named, *others]]
    joined = asof.nearest_only(joined, F.col(f"{alias_a}.{_ID}"), a_time, b_time, b_t, tie_break)

    matched, a_only = b_t.isNotNull(), b_t.isNull()
    final_t = a_t + asof.final_delay(strategy, exact, mw, a_t, b_t)
    provisional = matched & (final_t > e)
    limit = asof.wait_limit(strategy, exact, mw)
    waited = F.least(F.lit(limit), F.greatest(F.lit(0), e - a_t))
    diff = F.when(matched, b_t - a_t)
    waiting = F.when(a_only, waited).when(provisional, e - a_t)
    out_t = F.when(provisional, e).when(matched, final_t).otherwise(a_t + waited)
    join_type = (
        F.when(provisional, int(JoinType.PROVISIONAL))
        .when(matched & (diff == 0), int(JoinType.SAME_TIME))
        .when(matched & (diff < 0), int(JoinType.A_LATE))
        .when(matched, int(JoinType.B_LATE))
        .when(waited == F.lit(limit), int(JoinType.A_TIMED_OUT))
        .otherwise(int(JoinType.A_WAITING))
    )
    return joined, diff, waiting, out_t, join_type


def join_prepared(df_a: DataFrame, df_b: DataFrame, spec: JoinSpec) -> DataFrame:
    """The join for an already validated spec (the pipeline validates once, then joins)."""
    settings, layout = spec.settings, spec.layout
    lb, mw, s = spec.look_back_time, spec.max_waiting_time, spec.start
    alias_a, alias_b = settings.alias_a, settings.alias_b

    a_src, b_src = read_sources(df_a, df_b, spec)
    if spec.end is None:
        a_src, b_src, e = _with_latest_end(a_src, b_src, spec)
    else:
        e = F.lit(spec.end)
    if spec.how == "asof":
        a_src = a_src.withColumn(_ID, F.monotonically_increasing_id())
    a, b = a_src.alias(alias_a), b_src.alias(alias_b)

    def col_a(name: str) -> Column:
        return F.col(f"{alias_a}.`{name}`")

    def col_b(name: str) -> Column:
        return F.col(f"{alias_b}.`{name}`")

    a_t, b_t = col_a(_T), col_b(_T)
    condition = F.lit(True)
    for key in spec.join_cols:
        condition = condition & (col_a(key) == col_b(key))
    if spec.join_cond is not None:
        condition = condition & (F.expr(spec.join_cond) if isinstance(spec.join_cond, str) else spec.join_cond)
    if settings.enforce_sliding_join_window:
        condition = condition & b_t.between(a_t - F.lit(lb), a_t + F.lit(mw))
    # Without it the seed library adds no time condition: the read bounds [s - lb - mw, e] alone limit B.

    rows = _asof_rows if spec.how == "asof" else _rows
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
