"""What the commands print: a pipeline result's lines and JSON, tables of runs, pending ranges, JSON documents; and
how a command fails: its exit code, classified from the exception, and its `deltainc: error: <message>` line.

A pipeline result is rendered only here, by `window_line` and `result_document`, so that a change of
`WindowReport` or `PipelineResult` is met in one place. Exit codes: 0 done (or nothing pending), 1 any other
failure, 2 invalid configuration or input (nothing written), 3 the job is locked by a concurrent run, 130
interrupted (Ctrl-C), 143 cancelled (SIGTERM).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import json
import sys
import traceback
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError
from rich.console import Console
from rich.table import Table

from deltainc.cli.failure_notes import memory_note
from deltainc.connect_client import server_gone, server_gone_message
from deltainc.errors import AmbiguousRowsError, ConfigError, JobLockedError, SchemaError
from deltainc.join.options import COUNTED_ORDER
from deltainc.pipeline import TOMLDecodeError

if TYPE_CHECKING:
    from deltainc.join.windows import Pending
    from deltainc.pipeline import JobConfig, PipelineResult, WindowReport

__all__ = [
    "make_console",
    "json_value",
    "to_json",
    "emit_json",
    "window_line",
    "result_document",
    "runs_table",
    "pending_line",
    "PROG",
    "EXIT_OK",
    "EXIT_FAILURE",
    "EXIT_INVALID",
    "EXIT_LOCKED",
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "classify",
    "validation_message",
    "print_error",
    "print_trace",
    "report",
]


def make_console() -> Console:
    """The console of stdout; piped or captured, 200 columns wide so that tables are not wrapped at 80."""
    console = Console(highlight=False, soft_wrap=True)
    if not console.is_terminal:
        console = Console(highlight=False, soft_wrap=True, width=200)
    return console


def json_value(value: object) -> Any:
    """json's `default`: the JSON form of each type the documents hold (tuples and lists json writes itself);
    any other type raises TypeError, so that a new one is added here rather than printed as its str()."""
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, (bytes, bytearray)):  # a binary column in a sample of rows
        return value.hex()
    if isinstance(value, (set, frozenset)):
        return list(value)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"deltainc does not write {type(value).__name__} as JSON: {value!r}")


def to_json(value: object, indent: int | None = None) -> str:
    """`value` as JSON text, through `json_value`."""
    return json.dumps(value, indent=indent, default=json_value)


def emit_json(document: object) -> None:
    """One JSON document on stdout, indented, flushed."""
    sys.stdout.write(to_json(document, indent=2) + "\n")
    sys.stdout.flush()


def window_line(report: WindowReport) -> str:
    """One committed window: its rows by JoinType, the target's changes and the time it took."""
    record = report.record
    counts = "  ".join(f"{name} {rows}" for name, rows in report.counts.items())
    if record.rows_too_late is not None:
        counts += f"  too_late {record.rows_too_late}"
    return (
        f"{report.window}  {counts}  |  inserted {record.rows_inserted}  updated {record.rows_updated}  "
        f"deleted {record.rows_deleted}  files removed {record.target_files_removed}  ({record.duration_s:.1f} s)"
    )


def result_document(result: PipelineResult) -> dict[str, Any]:
    """The JSON document of a run, rerun or backfill."""
    return result.document()


_RUN_COLUMNS = (
    ("started (UTC)", "left"),
    ("command", "left"),
    ("window", "left"),
    ("status", "left"),
    ("rows", "right"),
    ("+ / ~ / -", "right"),
    ("late", "right"),
    ("null keys", "right"),
    ("files read", "left"),
    ("s", "right"),
    ("error", "left"),
)


def runs_table(runs: list[dict[str, Any]]) -> Table:
    """The last runs of a job, one row each: when, what, its window, status, rows, changes, late rows, rows with a
    NULL join key, time."""
    table = Table(box=None, pad_edge=False, show_edge=False)
    for heading, justify in _RUN_COLUMNS:
        table.add_column(heading, justify=justify)  # type: ignore[arg-type]
    for run in runs:
        start, end = run.get("window_start"), run.get("window_end")
        window = "-" if start is None else (start if start == end else f"{start}..{end}")
        started = run.get("started_at")
        if isinstance(started, dt.datetime):
            started = started.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        rows = sum(int(run.get(f"rows_{name}") or 0) for name in (code.outcome for code in COUNTED_ORDER))
        changes = f"{run.get('rows_inserted') or 0} / {run.get('rows_updated') or 0} / {run.get('rows_deleted') or 0}"
        error = (str(run.get("error") or "").splitlines() or [""])[0][:80]
        table.add_row(
            str(started),
            str(run.get("command")),
            window,
            str(run.get("status")),
            str(rows),
            changes,
            "-" if run.get("rows_too_late") is None else str(run.get("rows_too_late")),
            _null_keys(run),
            _files_read(run),
            f"{float(run.get('duration_s') or 0):.1f}",
            error,
        )
    return table


def _files_read(run: dict[str, Any]) -> str:
    """The files each source's read spans: 'A 3 / B 5', or for a feature job 'A 3 / risk 5 / payment 4'."""
    reads = run.get("source_reads")
    a = f"A {run.get('files_read_a') or 0}"
    if isinstance(reads, str):
        reads = json.loads(reads)
    if isinstance(reads, dict) and reads:
        named = [f"{role.removeprefix('features[').removesuffix(']')} {read['files']}" for role, read in reads.items()]
        return " / ".join([a, *named])
    return f"{a} / B {run.get('files_read_b') or 0}"


def _null_keys(run: dict[str, Any]) -> str:
    """The window's rows with a NULL join key, 'A / B' ('-' when not counted: a join_cond job, an older run)."""
    a, b = run.get("null_key_a"), run.get("null_key_b")
    return "-" if a is None and b is None else f"{a or 0} / {b or 0}"


def pending_line(pending: Pending | None, job: JobConfig) -> str:
    """All that is pending, and how many windows `max_window` makes of it: '2025-01-01..2025-01-15 (15 days,
    15 windows of max_window 1; next 2025-01-01)'."""
    if pending is None:
        return "nothing pending"
    whole, unit = pending.whole, job.join.time_uom
    size = f"{whole.units} {unit}{'s' if whole.units != 1 else ''}"
    if pending.windows == 1:
        return f"{whole} ({size}, one window)"
    return f"{whole} ({size}, {pending.windows} windows of max_window {job.max_window}; next {pending.next})"


PROG = "deltainc"

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_INVALID = 2
EXIT_LOCKED = 3
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

# Spark's Hive catalog could not open its metastore. The embedded one (Derby, in the settings' warehouse_dir) is
# single-process: a second Spark (a `deltainc serve`, a notebook, a run) on the same warehouse cannot open it.
METASTORE_SIGNS = ("SessionHiveMetaStoreClient", "Another instance of Derby may have already booted")
METASTORE_HINT = (
    "Spark could not open its Hive metastore: the embedded Derby metastore of warehouse_dir allows one process at "
    "a time, and another Spark may hold it (a `deltainc serve`, a notebook); give the session a metastore server "
    "(hive.metastore.uris) or run through Spark Connect (--remote)"
)


def validation_message(exc: ValidationError, source: str) -> str:
    """One line per problem of a pydantic validation error: `<source>: <field>: <what> (got <input>)`."""
    lines = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        got = f" (got {error['input']!r})" if error["type"] != "missing" and "input" in error else ""
        lines.append(f"{source}: {where + ': ' if where else ''}{error['msg']}{got}")
    return "\n".join(lines)


def classify(exc: BaseException) -> tuple[int, str]:
    """The exit code of an exception and its one-line (or, for config errors, one-line-per-problem) message."""
    if isinstance(exc, (ConfigError, SchemaError, AmbiguousRowsError)):
        return EXIT_INVALID, str(exc)
    if isinstance(exc, ValidationError):
        return EXIT_INVALID, validation_message(exc, "input")
    if isinstance(exc, TOMLDecodeError):
        return EXIT_INVALID, f"invalid TOML: {exc}"
    if isinstance(exc, JobLockedError):
        return EXIT_LOCKED, str(exc)
    if server_gone(exc):
        return EXIT_FAILURE, server_gone_message()
    java = getattr(exc, "java_exception", None)  # py4j's Py4JJavaError: its own first line says nothing
    text = str(java) if java is not None else str(exc)
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if len(first) > 300:
        first = first[:297] + "..."
    message = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    if any(sign in text for sign in METASTORE_SIGNS):
        message = f"{message} ({METASTORE_HINT})"
    memory = memory_note(text)
    if memory is not None:
        message = f"{message} ({memory})"
    return EXIT_FAILURE, message


def print_error(message: str) -> None:
    """`deltainc: error: <first line>` on stderr, further lines indented under it."""
    lines = message.splitlines() or [""]
    sys.stderr.write(f"{PROG}: error: {lines[0]}\n")
    for line in lines[1:]:
        sys.stderr.write(f"  {line}\n")
    sys.stderr.flush()


def print_trace(exc: BaseException) -> None:
    """The full traceback on stderr (--verbose)."""
    traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)


def report(exc: BaseException, verbose: bool, hint: str | None = None, spark_log: Path | None = None) -> int:
    """Print why the command failed and return its exit code. A failure (1) notes the command's `hint` (how
    to resume), --verbose and Spark's log file; a locked job (3) notes the hint; invalid input (2) nothing."""
    code, message = classify(exc)
    if verbose:
        print_trace(exc)
    if code == EXIT_FAILURE:
        notes = []
        if hint:
            notes.append(hint)
        if not verbose:
            notes.append("--verbose for the full trace")
        if spark_log is not None:
            notes.append(f"Spark's log: {spark_log}")
        if notes:
            message = f"{message} ({'; '.join(notes)})"
    elif hint and code != EXIT_INVALID:
        message = f"{message} ({hint})"
    print_error(message)
    return code
