"""A join's arguments validated against the two sources' schemas, before anything is computed: `JoinSpec`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from deltainc.errors import ConfigError, SchemaError, did_you_mean
from deltainc.join.options import ASOF_NEEDS_SLIDING_WINDOW, How, IncJoinSettings, normalize_how
from deltainc.join.output_layout import OutputLayout, plan_layout
from deltainc.time_units import TimeUnit, from_index, parse_point

__all__ = [
    "JoinSpec",
    "check_join",
    "check_inc_col",
    "condition_column",
    "resolve_join_cond",
    "JoinColumns",
    "JoinCondition",
    "Point",
    "TIME_TYPES",
    "column_type",
]

JoinColumns = str | Sequence[str] | None
JoinCondition = str | Column | None
Point = str | dt.date | dt.datetime | None  # a bound of the output window; None = open
TIME_TYPES = (T.DateType, T.TimestampType, T.TimestampNTZType)
_KEY_FAMILIES = (
    (T.ByteType, T.ShortType, T.IntegerType, T.LongType),
    (T.FloatType, T.DoubleType),
    (T.DecimalType,),
)


def column_type(schema: T.StructType, column: str, side: str, role: str) -> T.DataType:
    """The type of `column` of a source's schema; a SchemaError naming the setting (`role`) when it is missing."""
    for field in schema.fields:
        if field.name == column:
            return field.dataType
    names = schema.fieldNames()
    raise SchemaError(
        f"{role}: column {column!r} missing from {side} (columns: {', '.join(names)}){did_you_mean(column, names)}"
    )


@dataclass(frozen=True)
class JoinSpec:
    """A validated join: everything `inc_join` needs besides the two DataFrames."""

    how: How
    join_cols: tuple[str, ...]
    join_cond: str | Column | None
    look_back_time: int
    max_waiting_time: int
    start: int | None  # unit index of the output window start; None = unbounded
    end: int | None  # unit index of the output window end; None = latest RecDate in both sources
    settings: IncJoinSettings
    layout: OutputLayout

    @property
    def b_waits(self) -> bool:
        """Whether unmatched B rows wait lb units for an A row (full_outer with `b_waits_for_a`)."""
        return self.how == "full_outer" and self.settings.b_waits_for_a


def _check_time(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{field}: expected a whole number of time units >= 0, got {value!r}")
    if value < 0:
        raise ConfigError(f"{field}: must be >= 0, got {value}")
    return value


def _check_join_cols(join_cols: JoinColumns, join_cond: object) -> tuple[str, ...]:
    cols: tuple[str, ...] = (join_cols,) if isinstance(join_cols, str) else tuple(join_cols or ())
    if any(not isinstance(c, str) or not c.strip() for c in cols):
        raise ConfigError(f"join_cols: expected non-empty column names, got {list(cols)!r}")
    if len({c.lower() for c in cols}) != len(cols):
        raise ConfigError(f"join_cols: duplicate column in {list(cols)!r}")
    if not cols and join_cond is None:
        raise ConfigError("join_cols / join_cond: give at least one join key or a join condition")
    return cols


def check_inc_col(schema: T.StructType, inc: str, side: str, setting: str, uom: TimeUnit) -> None:
    """SchemaError unless `side`'s incremental column `inc` (named by `setting`) is a date or timestamp, and a
    timestamp in an hour or minute job."""
    inc_type = column_type(schema, inc, side, setting)
    if not isinstance(inc_type, TIME_TYPES):
        raise SchemaError(
            f"{setting}: column {inc!r} of {side} must be a date or timestamp, got {inc_type.simpleString()}"
        )
    if isinstance(inc_type, T.DateType) and uom is not TimeUnit.DAY:
        # Every row of a DATE column sits at midnight: an hour job would see 23 empty hours a day.
        raise SchemaError(
            f"time_uom: {uom.value!r} needs a timestamp {inc!r}, but column {inc!r} of {side} is a date; set "
            f"time_uom = 'day', or give the source a timestamp column as inc_col"
        )


def _check_sources(
    schema_a: T.StructType, schema_b: T.StructType, join_cols: Sequence[str], settings: IncJoinSettings
) -> None:
    uom = TimeUnit.parse(settings.time_uom)
    for side, schema in (("source_a", schema_a), ("source_b", schema_b)):
        quoted = [name for name in schema.fieldNames() if "`" in name]
        if quoted:  # every column is named in backticks in the engine's expressions: one inside would end the name
            raise SchemaError(
                f"{side}: column {quoted[0]!r} has a backtick in its name, which deltainc cannot refer to; rename "
                "the column, or give the job a view of the table that renames it"
            )
        check_inc_col(schema, settings.inc_col_of(side), side, settings.inc_setting(side), uom)
    for key in join_cols:
        a_type = column_type(schema_a, key, "source_a", "join_cols")
        b_type = column_type(schema_b, key, "source_b", "join_cols")
        same_family = any(isinstance(a_type, fam) and isinstance(b_type, fam) for fam in _KEY_FAMILIES)
        if a_type != b_type and not same_family:
            raise SchemaError(
                f"join_cols: key {key!r} has type {a_type.simpleString()} in source_a but "
                f"{b_type.simpleString()} in source_b; cast one of them"
            )


def condition_column(join_cond: str | Column) -> Column:
    """A `join_cond` as a Column: SQL text parsed with F.expr, a Column as is (one rule for checking and joining)."""
    return F.expr(join_cond) if isinstance(join_cond, str) else join_cond


def resolve_join_cond(df_a: DataFrame, df_b: DataFrame, join_cond: str | Column, settings: IncJoinSettings) -> None:
    """Resolve the condition against the aliased sources (analysis only, no Spark job)."""
    try:
        condition = condition_column(join_cond)
        df_a.alias(settings.alias_a).join(df_b.alias(settings.alias_b), condition, "inner").schema  # noqa: B018
    except Exception as exc:  # pyspark raises ParseException / AnalysisException here
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(
            f"join_cond: cannot be resolved against source_a as {settings.alias_a!r} and source_b as "
            f"{settings.alias_b!r}: {first_line}"
        ) from None


def _check_asof(
    schema_a: T.StructType, schema_b: T.StructType, join_cols: Sequence[str], settings: IncJoinSettings
) -> None:
    """An as-of join needs the sliding join window (finality rests on it), and time columns (`asof_col`, B's named
    `asof_col_b` when it differs) of one kind that are not keys; `asof_tie_break` names columns of B."""
    if not settings.enforce_sliding_join_window:
        raise ConfigError(f"how: 'asof' {ASOF_NEEDS_SLIDING_WINDOW}")
    if settings.asof_col is not None:
        names = (settings.asof_col, settings.asof_col_b or settings.asof_col)
        field_b = "asof_col_b" if settings.asof_col_b else "asof_col"
        kinds = []
        sides = (("source_a", schema_a, names[0], "asof_col"), ("source_b", schema_b, names[1], field_b))
        for side, schema, column, field in sides:
            if column.lower() in {c.lower() for c in join_cols}:
                raise ConfigError(f"{field}: {column!r} is a join key; name a time column of {side}")
            data_type = column_type(schema, column, side, field)
            if not isinstance(data_type, TIME_TYPES):
                raise SchemaError(
                    f"{field}: column {column!r} of {side} must be a date or timestamp, got {data_type.simpleString()}"
                )
            kinds.append(isinstance(data_type, T.DateType))
        if kinds[0] != kinds[1]:
            raise SchemaError(f"{field_b}: A's {names[0]!r} and B's {names[1]!r} must both be dates or both timestamps")
    for name in settings.asof_tie_break:
        column_type(schema_b, name, "source_b", "asof_tie_break")


def check_join(
    source_a: T.StructType | DataFrame,
    source_b: T.StructType | DataFrame,
    how: str,
    join_cols: JoinColumns,
    join_cond: JoinCondition,
    look_back_time: int,
    max_waiting_time: int,
    output_window_start: Point,
    output_window_end: Point,
    other_settings: IncJoinSettings | None,
) -> JoinSpec:
    """Validate a join's arguments (all given: `inc_join` has the defaults) against its two sources; raise before
    anything is computed. Given the DataFrames, the join condition is also resolved by Spark's analyzer; given
    their schemas, everything but that, so that a job can be checked from the Delta logs before Spark starts."""
    schema_a = source_a if isinstance(source_a, T.StructType) else source_a.schema
    schema_b = source_b if isinstance(source_b, T.StructType) else source_b.schema
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
        _check_asof(schema_a, schema_b, cols, settings)
    elif settings.asof_options_given():
        raise ConfigError(f"{settings.asof_options_given()[0]}: only for how = 'asof', got how = {canonical!r}")
    if start is not None and end is not None and start > end:
        raise ConfigError(
            f"output window: output_window_start {from_index(start, uom)} is after "
            f"output_window_end {from_index(end, uom)}"
        )
    _check_sources(schema_a, schema_b, cols, settings)
    layout = plan_layout(schema_a.fieldNames(), schema_b.fieldNames(), cols, canonical, settings)
    spec = JoinSpec(canonical, cols, join_cond, lb, mw, start, end, settings, layout)
    if join_cond is not None and not isinstance(source_a, T.StructType) and not isinstance(source_b, T.StructType):
        resolve_join_cond(source_a, source_b, join_cond, settings)
    return spec
