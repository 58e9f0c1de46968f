"""`explain` for one key of a job's target (issue 64): the A rows with the key, the B rows with their join keys,
the target's rows for it now, and why each A row came out as it did (`rules.py`). Read with Spark
(a target may hold deletion vectors), each table filtered on the key so that its files are skipped on their
statistics; the watermark from the state's Delta log."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from deltainc.errors import ConfigError
from deltainc.join.options import JoinType
from deltainc.pipeline.delta.key_files import files_with_keys
from deltainc.pipeline.delta.snapshot import one_look
from deltainc.pipeline.delta.sources import read_table, table_exists
from deltainc.pipeline.explain.key_history import KeyHistory, key_equal, key_history
from deltainc.pipeline.explain.rules import explain_a_row, explain_absent, explain_b_row
from deltainc.pipeline.job.chain_suffixes import chain_suffixes
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.sections import SourceRef
from deltainc.pipeline.state.from_delta_log import read_runs_from_log, read_state_from_log
from deltainc.pipeline.state.model import state_paths
from deltainc.settings import Settings
from deltainc.time_units import TimeUnit, from_index, to_index, unit_label

__all__ = ["KeyExplanation", "explain_key"]


@dataclass(frozen=True)
class KeyExplanation:
    """What `explain` found for a key: the rows of A, B and the target (as dicts), one sentence per A row (or one
    for a key without any), and whether the key was found anywhere."""

    job: str
    keys: dict[str, Any]
    a_rows: tuple[dict[str, Any], ...]
    b_rows: tuple[dict[str, Any], ...]
    target_rows: tuple[dict[str, Any], ...]
    reasons: tuple[str, ...]
    watermark: str | None
    history: tuple[dict[str, Any], ...] = ()  # each commit that wrote a row of the key (`key_history`)
    history_read: str = ""  # what the history was read from, or why it was not
    history_vacuumed: tuple[int, ...] = ()  # the versions whose files of the key VACUUM removed (not in `history`)
    files: dict[str, int | None] = field(default_factory=dict)  # files read per table (None: not counted)
    suffixes: tuple[str, str] = ("A", "B")  # A's and B's suffixes in the target (a job in a chain picks its own)

    @property
    def found(self) -> bool:
        return bool(self.a_rows or self.b_rows or self.target_rows)

    def document(self) -> dict[str, Any]:
        """As `--json` gives it: dates as ISO text."""
        return {"job": self.job, "keys": _shown(self.keys), "found": self.found, "watermark": self.watermark,
                "a_rows": [_shown(r) for r in self.a_rows], "b_rows": [_shown(r) for r in self.b_rows],
                "target_rows": [_shown(r) for r in self.target_rows], "why": list(self.reasons),
                "history": [_shown(r) for r in self.history], "history_read": self.history_read,
                "history_vacuumed": list(self.history_vacuumed), "files_read": self.files}  # fmt: skip


def _shown(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row as JSON: dates, timestamps and decimals as text."""
    return {k: v if v is None or isinstance(v, (bool, int, float, str)) else (v.isoformat() if hasattr(v, "isoformat")
            else str(v)) for k, v in row.items()}  # fmt: skip


def _typed(spark: SparkSession, frame: DataFrame, given: Mapping[str, str], allowed: list[str],
           listed: str = "target.keys", role: str = "source_a") -> dict[str, Any]:  # fmt: skip
    """`given` as values of `frame`'s column types; a column not in `allowed` (the job's `listed`) or a value
    that is not of its column's type (in `role`) is a ConfigError naming the column."""
    if not given:
        raise ConfigError(f"explain: give the key as KEY=VALUE, one for each of {listed} ({', '.join(allowed)})")
    for name in given:
        if name not in allowed:
            raise ConfigError(f"{name}: not one of {listed} ({', '.join(allowed)})")
    kinds = {name: frame.schema[name].dataType for name in given}
    values = _cast(spark, {name: F.lit(text).cast(kinds[name]) for name, text in given.items()})
    if values is None or None in values.values():  # which one: each alone (bad input only)
        for name, text in given.items():
            alone = _cast(spark, {name: F.lit(text).cast(kinds[name])})
            if alone is None or alone[name] is None:
                raise ConfigError(
                    f"{name}: {text!r} is not a {kinds[name].simpleString()} (the column's type in {role})"
                )
    assert values is not None
    return values


def _cast(spark: SparkSession, casts: Mapping[str, Column]) -> dict[str, Any] | None:
    """The values of `casts` in one Spark job; None where a cast fails (with ANSI mode), NULL values where it
    does not."""
    try:
        row = spark.range(1).select(*[cast.alias(name) for name, cast in casts.items()]).first()
    except Exception:
        return None
    return None if row is None else row.asDict()


def _any_of(columns: list[str], values: set[tuple[Any, ...]]) -> Column:
    """Rows whose `columns` hold any of `values` (the join keys of the rows found on the other side)."""
    return functools.reduce(operator.or_, [key_equal(dict(zip(columns, value, strict=True))) for value in values])


def _near(units: list[int], before: int, after: int, inc: str, uom: TimeUnit) -> tuple[Column, tuple[str, Any, Any]]:
    """The other side's rows worth naming for rows at `units`: from `before` units before the first to `after`
    units after the last (the join's window widened by one wait each way, so that the read is bounded however old
    the table), as a filter and as `files_with_key`'s `between`. No units: no row (nothing is joined)."""
    if not units:
        return F.lit(False), (inc, None, None)
    low, high, end = (from_index(u, uom) for u in (min(units) - before, max(units) + after, max(units) + after + 1))
    column = F.col(f"`{inc}`")
    return (column >= F.lit(low)) & (column < F.lit(end)), (inc, low, high)


def _rows_and_joined(frame: DataFrame, where: str | None) -> tuple[list[dict[str, Any]], list[bool]]:
    """`frame`'s rows, and for each whether the source's `where` keeps it (the job joins it), in one Spark job."""
    flag = "__deltainc_joined"
    kept = F.lit(True) if where is None else F.coalesce(F.expr(where), F.lit(False))
    rows = [r.asDict() for r in frame.withColumn(flag, kept).collect()]
    return [{k: v for k, v in r.items() if k != flag} for r in rows], [bool(r[flag]) for r in rows]


@dataclass(frozen=True)
class _Side:
    """The side a key names (A by `target.keys`; a full_outer job's B row by `target.b_keys`): its rows are read
    by the key, the other side's by their join keys from `before` units before the first of them to `after` units
    after the last, and a target row of one of its rows is dated up to `reach` units after it. `why` says why one
    of its rows came out as it did, given the other side's units, the outcome and whether the too-late table holds
    its too-late rows (A's only: `late_table`)."""

    name: str
    ref: SourceRef
    role: str
    listed: str
    keys: tuple[str, ...]
    other: SourceRef
    other_role: str
    before: int
    after: int
    reach: int
    late_table: bool
    why: Callable[[int, list[int], JoinType, bool], str]


def _side(job: JobConfig, given: Mapping[str, str]) -> _Side:
    """The side `given` names: B when every column given is one of a full_outer job's `b_keys` and not all are
    `keys`, else A."""
    join, target, source_b = job.join, job.target, job.source_b
    assert source_b is not None  # a two-source job (explain_key)
    lb, wait, uom = join.look_back_time, join.max_waiting_time, join.time_uom
    names = set(given)
    if join.how == "full_outer" and names and names <= set(target.b_keys) and not names <= set(target.keys):
        return _Side("B", source_b, "source_b", "target.b_keys", tuple(target.b_keys), job.source_a,
                     "source_a", 2 * wait, lb + wait, lb, False,
                     lambda unit, others, outcome, _: explain_b_row(unit, others, outcome, lb, wait, uom))  # fmt: skip

    def why_a(unit: int, others: list[int], outcome: JoinType, late: bool) -> str:
        return explain_a_row(unit, others, outcome, lb, wait, uom, late).sentence

    return _Side("A", job.source_a, "source_a", "target.keys", tuple(target.keys), source_b,
                 "source_b", lb + wait, 2 * wait, wait, True, why_a)  # fmt: skip


def explain_key(job: JobConfig, given: Mapping[str, str], spark: SparkSession, settings: Settings) -> KeyExplanation:
    """Explain the rows of `job`'s target with the key `given` (column -> text, as typed on the command line).

    Args:
        job: a two-source job joined on `join_cols`.
        given: some or all of `target.keys` with their values as text (a full_outer job's B row: `target.b_keys`).
        spark: the session that reads the tables.
        settings: the global settings (the state folder for the watermark).

    Example: ``explain_key(load_job("bank_trx"), {"TrxId": "6"}, spark, load_settings()).reasons`` gives
    ``("timed out on 2025-03-17: ...",)`` for the README's transaction 6 with a wait of 10 days.
    """
    with one_look():  # each table's Delta log opened once for the files counted
        return _explained(job, given, spark, settings)


def _explained(job: JobConfig, given: Mapping[str, str], spark: SparkSession, settings: Settings) -> KeyExplanation:
    join = job.join
    if job.features or job.source_b is None or not join.join_cols or join.join_cond is not None:
        raise ConfigError(f"explain: {job.name} is not a two-source job joined on join_cols only (not yet explained)")
    own = [f"{role}.inc_col" for role, _ in job.sources if job.inc_col_of(role) != join.inc_col]
    if own:
        raise ConfigError(
            f"{own[0]}: explain reads both sources by [join] inc_col ({join.inc_col!r}); a source dated by its own "
            f"column is not yet explained (`deltainc profile {job.name}` and `deltainc status {job.name}` read it)"
        )
    side = _side(job, given)
    inc, uom = join.inc_col, join.time_uom
    mine_all = read_table(spark, side.ref, side.role)
    keys = _typed(spark, mine_all, given, list(side.keys), side.listed, side.role)
    rows, used = _rows_and_joined(mine_all.where(key_equal(keys)), side.ref.where)
    other_rows: list[dict[str, Any]] = []
    other_used: list[bool] = []
    joined = {tuple(r[c] for c in join.join_cols) for r in rows}
    near = _near([to_index(r[inc], uom) for r in rows], side.before, side.after, inc, uom)
    other_all = read_table(spark, side.other, side.other_role)
    if joined:
        match = _any_of(join.join_cols, joined) & near[0]
        other_rows, other_used = _rows_and_joined(other_all.where(match), side.other.where)
    target_rows = []
    if table_exists(spark, job.target):
        target_rows = [r.asDict() for r in read_table(spark, job.target, "target").where(key_equal(keys)).collect()]
    paths = state_paths(job.state_path(settings.state_dir))
    watermark = read_state_from_log(paths, job.name).watermark
    columns = {side.role: mine_all.columns, side.other_role: other_all.columns}
    named = chain_suffixes(job, columns["source_a"], columns["source_b"], join.engine_settings())  # in a chain
    suffixes = (named.alias_a, named.alias_b)
    at = f"{inc}_{suffixes[0] if side.role == 'source_a' else suffixes[1]}"  # the row's RecDate in the target
    late_ref = job.target.late_rows_ref
    kept_late: set[Any] = set()  # the A rows (their inc_col) whose too-late B rows the too-late table holds
    if side.late_table and late_ref is not None and table_exists(spark, late_ref):
        late = read_table(spark, late_ref, "target.late_rows")
        if set(keys) <= set(late.columns) and at in late.columns:
            kept_late = {r[0] for r in late.where(key_equal(keys)).select(at).collect()}
    reasons = []
    for row in (r for r, kept in zip(rows, used, strict=True) if kept):
        unit = to_index(row[inc], uom)
        mine = [t for t in target_rows if t.get(at, row[inc]) == row[inc]]
        if not mine:
            reasons.append(explain_absent([unit], watermark, False, uom, side.name))
            continue
        same = [to_index(o[inc], uom) for o, kept in zip(other_rows, other_used, strict=True)
                if kept and all(o[c] == row[c] for c in join.join_cols)]  # fmt: skip
        reasons.append(side.why(unit, same, JoinType(int(mine[0]["JoinType"])), row[inc] in kept_late))
    left_out = [to_index(r[inc], uom) for r, kept in zip(rows, used, strict=True) if not kept]
    if left_out:
        reasons.append(explain_absent(left_out, watermark, True, uom, side.name))
    if not rows:
        reasons.append(explain_absent([], watermark, False, uom, side.name))
    history = KeyHistory((), "")
    if target_rows:
        units = [to_index(r[inc], uom) for r in [*target_rows, *rows]]
        last = max(units + [to_index(r[inc], uom) + side.reach for r in rows])
        history = key_history(spark, job, keys, min(units), last, read_runs_from_log(paths, job.name, 1_000_000))
    files = {side.role: files_with_keys(side.ref, side.role, [keys])}
    if joined:
        others = [dict(zip(join.join_cols, value, strict=True)) for value in joined]
        files[side.other_role] = files_with_keys(side.other, side.other_role, others, near[1])
    files["target"] = files_with_keys(job.target, "target", [keys])
    files["target history"] = history.files_read
    mark = unit_label(watermark, uom)
    a_rows, b_rows = (rows, other_rows) if side.name == "A" else (other_rows, rows)
    return KeyExplanation(job.name, keys, tuple(a_rows), tuple(b_rows), tuple(target_rows), tuple(reasons), mark,
                          history.entries, history.read, history.vacuumed, files, suffixes)  # fmt: skip
