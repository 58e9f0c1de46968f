"""One handle per Delta table per command: every question a command asks of one table (exists, shape, latest
commit, latest unit, files and their statistics), and whether its Delta log or Spark answers, decided once.

`open_handle(ref, role, spark)` decides it: a `LogTable` for a path delta-rs reads (a local folder, S3), whose
answers come from the command's one look at its log (`snapshot.look`), falling back inside itself where the log
cannot answer one question exactly (deletion vectors, a missing statistic, a session whose files are not this
process's); a `SparkTable` for anything else (a catalog name, another file system). Call sites never ask "is it
local", "is it Delta" or "can the log answer": this module is the one place those are asked.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from deltainc.errors import ConfigError
from deltainc.pipeline.delta.delta_log import LogUnreadable, has_commit, local_file_path, table_uri
from deltainc.pipeline.delta.delta_log_stats import latest_unit_from_log
from deltainc.pipeline.delta.snapshot import look, retake
from deltainc.pipeline.job.sections import SourceRef, TableRef
from deltainc.settings import is_s3
from deltainc.spark_compat import session_kind
from deltainc.time_units import TimeUnit

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql import types as T

__all__ = ["TableShape", "Table", "LogTable", "SparkTable", "open_handle", "shape_from_log", "logs_else"]

log = logging.getLogger(__name__)
R = TypeVar("R")
_WITHOUT_LOG = "%s read without the Delta log: %s"


@dataclass(frozen=True)
class TableShape:
    """A Delta table's columns, partition columns, properties (values lower-cased) and the table features its
    protocol names (reader and writer: `deletionVectors`, ...), as its log records them."""

    schema: T.StructType
    partition_by: tuple[str, ...]
    properties: Mapping[str, str] = field(default_factory=dict)
    features: tuple[str, ...] = ()


def logs_else(
    what: str, from_logs: Callable[[], R], otherwise: Callable[[Exception], R], line: str = _WITHOUT_LOG
) -> R:
    """`from_logs()` when the Delta logs answer exactly (it raises LogUnreadable or FileNotFoundError where they
    cannot), else `otherwise(why)`, after one line at info (`--verbose`) of `what` and why: for an answer that
    several tables' handles give together (a command from the logs, the latest unit of all sources)."""
    try:
        return from_logs()
    except (LogUnreadable, FileNotFoundError) as exc:
        log.info(line, what, exc)
        why: Exception = exc
    return otherwise(why)


def shape_from_log(location: str) -> TableShape:
    """The shape of the Delta table at `location` from the command's snapshot of its log (no Spark job): its
    schema as Spark reads it (the log holds Spark's StructType JSON); LogUnreadable when there is no table there,
    delta-rs cannot read it, or this pyspark does not know one of its types."""
    from pyspark.sql import types as T

    snapshot = look(location)
    try:
        schema = T.StructType.fromJson(json.loads(snapshot.schema_json))
    except (ValueError, KeyError) as exc:  # a type this pyspark does not know: Spark reads the table itself
        raise LogUnreadable(f"{location}: pyspark cannot parse the schema in the log: {exc}") from exc
    return TableShape(schema, snapshot.partition_columns, snapshot.properties, snapshot.features)


@dataclass(frozen=True)
class Table:
    """One table a command reads (`role`: source_a, target, ...) in `spark` (None before Spark starts); what both
    kinds answer alike (existence, rows, Spark's shape and history), `LogTable` and `SparkTable` the rest."""

    ref: TableRef
    role: str
    spark: SparkSession | None = None

    @property
    def label(self) -> str:
        return self.ref.label

    def session(self) -> SparkSession:
        """The command's Spark session; LogUnreadable before Spark starts (a question the logs must answer)."""
        if self.spark is None:
            raise LogUnreadable(f"{self.role}: Spark is not started, and the log cannot answer")
        return self.spark

    def log_location(self) -> str:
        """The location delta-rs reads this table at; LogUnreadable for a table only Spark reads."""
        raise NotImplementedError

    def answer(
        self,
        what: str,
        from_log: Callable[[str], R],
        otherwise: Callable[[Exception], R],
        line: str = _WITHOUT_LOG,
        own_files: bool = False,
        missing_ok: bool = False,
        on_disk: bool = False,
    ) -> R:
        """`from_log(location)` when this table's log answers exactly, else `otherwise(why)` (Spark, or what is
        shown without an answer), after one line at info of `what` and why. `own_files`: the answer must be of
        the files the session itself reads (a commit just made, the files a write read). `missing_ok`: `from_log`
        is asked of a local folder without a Delta log too (it says so itself), not told FileNotFoundError.
        `on_disk`: `from_log` reads the table's files on this process's disk: it is given the local folder (a
        table in S3 is left to `otherwise`)."""
        raise NotImplementedError

    def exists(self) -> bool:
        """Whether a Delta table has committed here: a local folder from its `_delta_log` alone, else Spark."""
        if self.ref.path is None:
            return bool(self.session().catalog.tableExists(self.ref.table or ""))
        local = local_file_path(self.ref.path)  # Hadoop takes a path's name verbatim: nothing to unquote
        if local is not None:
            return has_commit(local)
        from pyspark.errors import AnalysisException

        try:
            self.session().read.format("delta").load(self.ref.path).schema  # noqa: B018 - reads the log's head
        except AnalysisException:
            return False
        return True

    def rows(self) -> DataFrame:
        """The table's current rows, as Spark reads them."""
        if self.ref.path is not None:
            return self.session().read.format("delta").load(self.ref.path)
        return self.session().read.table(self.ref.table or "")

    def present_rows(self) -> DataFrame:
        """The table's rows; a missing table is a ConfigError naming the role (and an upstream job not run yet)."""
        if not self.exists():
            upstream = self.ref.job if isinstance(self.ref, SourceRef) else None
            after = f" (the target of job {upstream}, which has not run yet: run it first)" if upstream else ""
            raise ConfigError(f"{self.role}: no Delta table at {self.label}{after}")
        return self.rows()

    def shape(self) -> TableShape:
        """The columns, partition columns, properties and features; a missing table is a ConfigError naming the
        role."""
        return self.answer(
            f"{self.role}'s columns", self._shape_from_log, lambda _why: self._shape_with_spark(), missing_ok=True
        )

    def _shape_from_log(self, location: str) -> TableShape:
        if look(location).found is None:
            raise ConfigError(f"{self.role}: no Delta table at {self.label}")
        return shape_from_log(location)

    def _shape_with_spark(self) -> TableShape:
        from deltainc.pipeline.delta.sql import detail

        schema = self.present_rows().schema
        found = detail(self.session(), self.ref)
        if found is None:
            return TableShape(schema, ())
        properties = {key: str(value).lower() for key, value in (found["properties"] or {}).items()}
        features = tuple(found.asDict().get("tableFeatures") or ())  # a column since Delta 3.0
        return TableShape(schema, tuple(found["partitionColumns"] or ()), properties, features)

    def latest_commit(self) -> Mapping[str, Any] | None:
        """The latest commit (version, operation, operationMetrics, ...), read again after a commit just made: from
        the log where the session's files are this process's, else DESCRIBE HISTORY's row (a Spark job)."""
        from deltainc.pipeline.delta.sql import table_name

        if self.ref.path is not None:
            retake(self.ref.path)  # after the commit just made, the table's snapshot is taken again

        def from_log(location: str) -> Mapping[str, Any] | None:
            history = look(location).history(1)
            if not history or "operation" not in history[0] or "version" not in history[0]:
                raise LogUnreadable(f"{location}: the log's last commit has no operation or version")
            return history[0]

        def with_spark(_why: Exception) -> Mapping[str, Any] | None:
            row = self.session().sql(f"DESCRIBE HISTORY {table_name(self.ref)} LIMIT 1").first()
            return None if row is None else row.asDict()

        return self.answer(f"the last commit of {self.label}", from_log, with_spark, own_files=True, missing_ok=True)

    def latest_unit(
        self,
        inc_col: str,
        uom: TimeUnit | str,
        upstream: Callable[[SourceRef], int | None] | None,
        with_spark: bool = False,
    ) -> int | None:
        """The latest unit this source has: for another job's target, `upstream(ref)`, that job's watermark (its
        final rows reach no further, though its target may hold later rows); else, or when `upstream` is None,
        the latest `inc_col` over all the table's rows, from the log (LogUnreadable or FileNotFoundError where it
        cannot answer), or with Spark reading the table when `with_spark`. The source's `where` narrows the rows
        a window joins, not the units the source has: it is not applied, whichever reads."""
        if upstream is not None and isinstance(self.ref, SourceRef) and self.ref.job is not None:
            return upstream(self.ref)
        if with_spark:
            from deltainc.pipeline.delta.spark_counts import latest_unit

            return latest_unit(self.present_rows(), inc_col, uom)
        return latest_unit_from_log(self.log_location(), inc_col, uom)


@dataclass(frozen=True)
class LogTable(Table):
    """A table at a path delta-rs reads: its log answers, through the command's one look at it; `own` says
    whether the session's files are this process's (a classic session, or none yet)."""

    location: str = ""
    own: bool = True

    def log_location(self) -> str:
        """The location; FileNotFoundError naming the role for a local folder with no Delta log (S3: delta-rs
        says whether a table is there)."""
        if not is_s3(self.location) and not os.path.isdir(os.path.join(table_uri(self.location), "_delta_log")):
            raise FileNotFoundError(f"{self.role}: no Delta table at {self.label}")
        return self.location

    def answer(
        self,
        what: str,
        from_log: Callable[[str], R],
        otherwise: Callable[[Exception], R],
        line: str = _WITHOUT_LOG,
        own_files: bool = False,
        missing_ok: bool = False,
        on_disk: bool = False,
    ) -> R:
        def read() -> R:
            if own_files and not self.own:
                raise LogUnreadable("the session's files are not this process'")
            if on_disk and is_s3(self.location):
                raise LogUnreadable(f"the {self.role} is in S3: its files are not read without Spark")
            location = self.location if missing_ok else self.log_location()
            return from_log(table_uri(location) if on_disk else location)

        return logs_else(what, read, otherwise, line)


@dataclass(frozen=True)
class SparkTable(Table):
    """A table only Spark reads (a catalog name, a file system delta-rs does not): `why` says so."""

    why: str = ""

    def log_location(self) -> str:
        raise LogUnreadable(self.why)

    def answer(
        self,
        what: str,
        from_log: Callable[[str], R],
        otherwise: Callable[[Exception], R],
        line: str = _WITHOUT_LOG,
        own_files: bool = False,
        missing_ok: bool = False,
        on_disk: bool = False,
    ) -> R:
        reason = LogUnreadable(self.why)
        log.info(line, what, reason)
        return otherwise(reason)


def open_handle(ref: TableRef, role: str, spark: SparkSession | None = None) -> Table:
    """The handle of the table behind `ref` (`role` names it in messages) for a command in `spark` (None: before
    Spark starts, this process's files): a `LogTable` where delta-rs reads its path, else a `SparkTable`.

    >>> open_handle(job.source_a, "source_a").shape().partition_by  # doctest: +SKIP
    ('RecDate',)
    """
    if ref.path is None:
        return SparkTable(
            ref, role, spark, why=f"{role} is a catalog table ({ref.table}): its location needs the metastore"
        )
    try:
        table_uri(ref.path)
    except LogUnreadable as exc:
        why = f"{role} is not a local path or in S3 ({ref.path})" if str(exc).startswith("not a") else str(exc)
        return SparkTable(ref, role, spark, why=why)
    own = spark is None or session_kind(spark).sees_its_files
    return LogTable(ref, role, spark, location=ref.path, own=own)
