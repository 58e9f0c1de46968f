"""A Delta table (local, or in S3) read through its log with delta-rs (the `deltalake` package), as pyspark reads it.

Whatever delta-rs cannot read, or a value pyspark would give otherwise, is LogUnreadable: the caller asks Spark.
deltalake is imported on first use, and nothing here imports pyspark.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from deltainc.settings import is_s3, rs_location, storage_options
from deltainc.time_units import EPOCH

if TYPE_CHECKING:
    from deltalake import DeltaTable

__all__ = [
    "LogUnreadable",
    "TIME_TYPES",
    "Row",
    "reading",
    "plain_location",
    "local_folder",
    "local_file_path",
    "has_commit",
    "local_sizes",
    "table_uri",
    "open_table",
    "column_types",
    "job_rows",
    "require",
    "instant",
    "spark_value",
    "spark_row",
]

Row = dict[str, Any]
log = logging.getLogger(__name__)

_EPOCH_UTC = EPOCH.replace(tzinfo=dt.timezone.utc)
_MICROSECOND = dt.timedelta(microseconds=1)
# Delta types whose values arrow hands back as pyspark would (timestamps are converted apart).
TIME_TYPES = frozenset({"date", "timestamp", "timestamp_ntz"})  # the types an inc_col may have
_PLAIN_TYPES = {"string", "long", "integer", "short", "byte", "double", "float", "boolean", "date"}
_SAFE_LITERAL = re.compile(r"[A-Za-z0-9_.:@/ -]*")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")  # s3a:, abfss:, dbfs:, ...
_ODD = re.compile(r"[%#?{}\[\]*\\]")
_READERS = re.compile(r"[/\\](deltalake|pyarrow|arro3)[/\\]")  # the packages whose errors mean "cannot read"


class LogUnreadable(Exception):
    """The Delta log cannot answer exactly, or delta-rs cannot read the table: ask Spark instead."""


@contextmanager
def reading(location: str) -> Iterator[None]:
    """Turn what delta-rs, arrow or the filesystem raise while reading `location` (a Rust panic included) into
    LogUnreadable, naming the table. Any other exception is deltainc's own and passes through unchanged."""
    try:
        yield
    except BaseException as exc:
        if isinstance(exc, LogUnreadable) or not _from_the_log_readers(exc):
            raise
        raise LogUnreadable(f"delta-rs cannot read {location}: {type(exc).__name__}: {exc}") from exc


def _from_the_log_readers(exc: BaseException) -> bool:
    """Whether `exc` is delta-rs', arrow's or the filesystem's: one of their error types (pyo3's PanicException
    is a BaseException), or raised inside their Python code. Interrupts and deltainc's own errors are not."""
    if type(exc).__name__ == "PanicException":
        return True
    if not isinstance(exc, Exception):
        return False
    from deltalake.exceptions import DeltaError

    if isinstance(exc, (DeltaError, OSError)) or type(exc).__module__.startswith(("pyarrow", "arro3")):
        return True
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and _READERS.search(frames[-1].filename) is not None


def plain_location(location: str) -> bool:
    """Whether Hadoop reads `location` literally: no '%' (a URI would unescape it), '#', '?' or glob character."""
    return _ODD.search(location) is None


def local_folder(location: str) -> str:
    """The local folder of `location` (a path or a file: path); anything else is LogUnreadable.

    Hadoop reads '%' literally where a URI would unescape it, and takes some characters as glob or URI syntax:
    a location with any of those is left to Spark rather than guessed at.
    """
    if _ODD.search(location):
        raise LogUnreadable(f"a location with %, #, ? or glob characters is left to Spark: {location}")
    path = location
    if path.startswith("file:"):
        path = path[len("file:") :]
        if path.startswith("//"):
            authority, _, rest = path[2:].partition("/")
            if authority not in ("", "localhost"):
                raise LogUnreadable(f"not a local path: {location}")
            path = "/" + rest
        if not path.startswith("/"):
            raise LogUnreadable(f"not an absolute file: path: {location}")
    elif _SCHEME.match(path):
        raise LogUnreadable(f"not a local path: {location}")
    return os.path.abspath(path)


def local_file_path(location: str) -> str | None:
    """The local path of a Hadoop path string (as inputFiles() gives it), or None if it is on another file system.

    inputFiles() returns Hadoop's Path.toString(): the scheme, then the on-disk name verbatim, with no %-escapes
    (a timestamp partition folder `RecDate=2025-02-01 00%3A00%3A00` comes back as is, '%3A' being part of the
    name). So nothing may be unquoted, and it is not a URI either: '#' and '?' belong to the name, not to a
    fragment or query, which is why urllib's urlparse must not see it.
    """
    if location.startswith("file:"):
        rest = location[len("file:") :]
        if rest.startswith("//"):  # file:///tmp/x (empty authority) or file://host/tmp/x
            slash = rest.find("/", 2)
            return rest[slash:] if slash >= 0 else "/"
        return rest
    return None if _SCHEME.match(location) else location  # s3a:, abfss:, dbfs:, ... (a bare /path is local)


def local_sizes(files: Sequence[str]) -> int | None:
    """The bytes of `files` (Hadoop path strings, as inputFiles() gives them) where each is on this process's
    disk; None when one is on another file system."""
    local = [local_file_path(name) for name in files]
    if any(path is None for path in local):
        return None
    return sum(os.path.getsize(path) for path in local if path is not None)


def table_uri(location: str) -> str:
    """delta-rs's name for the table at `location`: its local folder, or its s3:// URI (deltainc.settings);
    LogUnreadable for anything else."""
    if is_s3(location):
        if _ODD.search(location):
            raise LogUnreadable(f"a location with %, #, ? or glob characters is left to Spark: {location}")
        return rs_location(location)
    return local_folder(location)


def has_commit(folder: str) -> bool:
    """Whether the local folder's `_delta_log` holds a commit (a Delta table has committed there)."""
    log = os.path.join(folder, "_delta_log")
    return os.path.isdir(log) and any(name.endswith(".json") for name in os.listdir(log))


def _exists(uri: str) -> bool:
    """Whether a Delta table has committed at `uri`: its local `_delta_log` holds a commit, or delta-rs finds one."""
    if not is_s3(uri):
        return has_commit(uri)
    from deltalake import DeltaTable

    with reading(uri):
        return DeltaTable.is_deltatable(uri, storage_options(uri))


def open_table(location: str) -> DeltaTable | None:
    """The Delta table at `location` (local, or in S3), or None when none has committed there yet."""
    uri = table_uri(location)
    try:
        from deltalake import DeltaTable
    except ImportError as exc:
        raise LogUnreadable(f"the deltalake package is not installed: {exc}") from exc
    if not _exists(uri):
        return None
    with reading(location):
        return DeltaTable(uri, storage_options=storage_options(uri))


def column_types(table: DeltaTable, location: str) -> dict[str, str]:
    """Each top-level column's Delta type name, in schema order (a class name such as StructType for nested ones)."""
    types: dict[str, str] = {}
    with reading(location):
        fields = table.schema().fields
    for field in fields:
        kind = getattr(field.type, "type", None)
        types[field.name] = kind if isinstance(kind, str) else type(field.type).__name__
    return types


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def job_rows(table: DeltaTable, location: str, job: str, columns: Sequence[str]) -> list[Row]:
    """The rows of `job` (raw arrow values: timestamps aware UTC), with only `columns`, in scan order.

    A job name of plain characters is pushed down as a predicate (files are skipped on their statistics);
    the rows are filtered again here with Python's equality, which is Spark's for strings.
    """
    projected = [*columns] if "job" in columns else [*columns, "job"]
    predicate = f"job = {_sql_text(job)}" if _SAFE_LITERAL.fullmatch(job) else None
    with reading(location):
        read = table.scan(columns=projected, predicate=predicate).read_all()
        values = {name: read.column(name).to_pylist() for name in projected}
    rows = [{name: values[name][i] for name in columns} for i in range(read.num_rows) if values["job"][i] == job]
    return rows


def require(types: dict[str, str], location: str, *names: str) -> None:
    missing = [name for name in names if name not in types]
    if missing:
        raise LogUnreadable(f"{location} has no column {', '.join(missing)} (Spark would fail on it)")


def instant(value: dt.datetime) -> int:
    """Microseconds since the epoch of a TIMESTAMP value (naive ones are UTC)."""
    aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.timezone.utc)
    return (aware - _EPOCH_UTC) // _MICROSECOND


def _spark_timestamp(value: dt.datetime) -> dt.datetime:
    """A TIMESTAMP as pyspark returns it: naive local time, by the same arithmetic as its `fromInternal`."""
    micros = instant(value)
    return dt.datetime.fromtimestamp(micros // 1_000_000).replace(microsecond=micros % 1_000_000)


def _spark_timestamp_ntz(value: dt.datetime) -> dt.datetime:
    """A TIMESTAMP_NTZ as pyspark returns it: the wall-clock value itself, naive."""
    return value.astimezone(dt.timezone.utc).replace(tzinfo=None) if value.tzinfo is not None else value


def spark_value(value: Any, kind: str, column: str) -> Any:
    """`value` of Delta type `kind` as pyspark's `collect()` returns it."""
    if value is None or kind in _PLAIN_TYPES or kind.startswith("decimal"):
        return value
    if kind == "timestamp":
        return _spark_timestamp(value)
    if kind == "timestamp_ntz":
        return _spark_timestamp_ntz(value)
    raise LogUnreadable(f"column {column} of type {kind}: pyspark's value is not reproduced here")


def spark_row(row: Row, types: dict[str, str]) -> Row:
    return {name: spark_value(value, types[name], name) for name, value in row.items()}
