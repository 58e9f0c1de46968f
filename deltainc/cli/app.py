"""The `deltainc` command line: run, rerun, backfill, status, validate, verify, unlock, profile and demo.

Exit codes: 0 done (or nothing pending), 1 any other failure, 2 invalid configuration or input (nothing
written), 3 the job is locked by a concurrent run. Errors go to stderr as `deltainc: error: <message>`.

The SparkSession is started only by commands that need it, after the settings and the job file have been
checked. Unless --verbose, Spark's own output (log4j, the Ivy banner of the JVM) goes to a log file.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as dt
import decimal
import json
import logging
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from pydantic import BaseModel, ValidationError
from rich.console import Console
from rich.table import Table

from deltainc.errors import AmbiguousRowsError, Cancelled, ConfigError, JobLockedError, SchemaError
from deltainc.join.join_types import JOIN_TYPE_NAMES
from deltainc.join.windows import from_index, parse_point
from deltainc.pipeline.config import JobConfig, load_job, resolve_job
from deltainc.settings import DEFAULT_SETTINGS_FILE, Settings, load_settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from deltainc.join.windows import Pending
    from deltainc.pipeline.controller import PipelineResult, WindowReport
    from deltainc.pipeline.job_status import JobStatus

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_FAILURE", "EXIT_INVALID", "EXIT_LOCKED"]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_INVALID = 2
EXIT_LOCKED = 3
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

PROG = "deltainc"
SETTINGS_ENV = "DELTAINC_SETTINGS_FILE"
log = logging.getLogger("deltainc")


# --- argument parsing ---------------------------------------------------------------------------------------------


def _point(value: str) -> str:
    """A date (2025-03-07) or, for hourly jobs, a datetime (2025-03-07T10:00); kept as text for the pipeline."""
    try:
        parse_point(value, "date", "hour")
    except ConfigError:
        raise argparse.ArgumentTypeError(f"expected a date like 2025-03-07, got {value!r}") from None
    return value


def _date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date like 2025-03-07, got {value!r}") from None


def _conf(value: str) -> tuple[str, str]:
    key, sep, val = value.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value (e.g. spark.executor.memory=4g), got {value!r}")
    return key.strip(), val


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value!r}")
    return number


class _Parser(argparse.ArgumentParser):
    """argparse, with usage errors worded like every other error: `deltainc: error: <message>`, exit 2."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_INVALID, f"{PROG}: error: {message}\n")


def _global_options(parser: argparse.ArgumentParser, prefix: str, default: Any) -> None:
    """--settings, --master, --conf, --verbose: accepted before the command (prefix 'g_') and after it."""
    group = parser.add_argument_group("global options")
    group.add_argument(
        "--settings",
        dest=f"{prefix}settings",
        metavar="FILE",
        default=default,
        help=f"settings file (default: ${SETTINGS_ENV} or {DEFAULT_SETTINGS_FILE})",
    )
    group.add_argument(
        "--master",
        dest=f"{prefix}master",
        metavar="URL",
        default=default,
        help="Spark master URL, overrides spark.master of the settings",
    )
    group.add_argument(
        "--conf",
        dest=f"{prefix}conf",
        metavar="KEY=VALUE",
        type=_conf,
        action="append",
        default=default,
        help="extra Spark configuration (repeatable)",
    )
    group.add_argument(
        "--verbose",
        "-v",
        dest=f"{prefix}verbose",
        action="store_true",
        default=default,
        help="full traceback on errors and Spark's own log output on the terminal",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
    parser = _Parser(
        prog=PROG,
        description="Keep a joined Delta target correct while two Delta sources are loaded incrementally "
        "and arrive late.",
        epilog="JOB is a job name in the job directory (settings job_dir, default conf/jobs) or a path to a "
        "job's TOML file. Exit codes: 0 done or nothing pending, 1 failure, 2 invalid configuration or "
        "input (nothing written), 3 job locked by a concurrent run.",
    )
    _global_options(parser, "g_", None)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(
        name: str, help_text: str, handler: Callable[[Context], int], json_flag: bool
    ) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        _global_options(sub, "", argparse.SUPPRESS)
        if json_flag:
            sub.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        sub.set_defaults(handler=handler, json=False)
        return sub

    sub = command("run", "process every pending window of a job", _cmd_run, True)
    sub.add_argument("job", metavar="JOB")
    sub.add_argument("--until", type=_point, metavar="DATE", help="process nothing after this date")
    sub.add_argument(
        "--rebuild",
        action="store_true",
        help="recompute the whole target under the job's current settings (after a change of look_back_time, "
        "max_waiting_time, how, keys, include_waiting, time_uom or start_date): one window from start_date "
        "to the latest RecDate, written over the target in one commit",
    )

    sub = command("rerun", "recompute an already processed window (the watermark never moves back)", _cmd_rerun, True)
    sub.add_argument("job", metavar="JOB")
    sub.add_argument("--start", type=_point, metavar="DATE", required=True)
    sub.add_argument("--end", type=_point, metavar="DATE", help="default: --start (one day)")

    sub = command(
        "backfill", "process a historic range in chunks; run it again to resume after a failure", _cmd_backfill, True
    )
    sub.add_argument("job", metavar="JOB")
    sub.add_argument("--start", type=_point, metavar="DATE", required=True)
    sub.add_argument("--end", type=_point, metavar="DATE", required=True)
    sub.add_argument(
        "--chunk", choices=("day", "month", "year", "all"), default="month", help="window of one chunk (default: month)"
    )

    sub = command("status", "watermark, latest RecDate available, pending window and last runs", _cmd_status, True)
    sub.add_argument("job", metavar="JOB", nargs="?", help="default: every job in the job directory")
    sub.add_argument("--runs", type=_positive, default=5, metavar="N", help="how many recent runs (default: 5)")

    sub = command(
        "validate",
        "check a job against its sources and show what the next run would read; writes nothing",
        _cmd_validate,
        True,
    )
    sub.add_argument("job", metavar="JOB", nargs="?", help="default: every job in the job directory")

    sub = command(
        "verify",
        "recompute a processed range in one shot and compare it with the target, row for row; writes nothing; "
        "exit 1 when they differ",
        _cmd_verify,
        True,
    )
    sub.add_argument("job", metavar="JOB")
    sub.add_argument("--start", type=_point, metavar="DATE", help="default: the job's start_date")
    sub.add_argument("--end", type=_point, metavar="DATE", help="default: the watermark")

    sub = command("unlock", "remove the lock a dead run left behind", _cmd_unlock, False)
    sub.add_argument("job", metavar="JOB")
    sub.add_argument("--run-id", metavar="ID", help="remove the lock only if run ID holds it")

    sub = command(
        "profile",
        "how late B arrives relative to A: a delay profile to choose look_back_time and max_waiting_time",
        _cmd_profile,
        True,
    )
    sub.add_argument("job", metavar="JOB")
    sub.add_argument("--start", type=_date, metavar="DATE")
    sub.add_argument("--end", type=_date, metavar="DATE")
    sub.add_argument("--chart", type=Path, metavar="PATH", help="also draw the profile into this image file")

    sub = command("demo", "a month of generated bank transactions loaded and joined day by day", _cmd_demo, False)
    sub.add_argument(
        "--root",
        type=Path,
        default=Path("demo-data"),
        metavar="DIR",
        help="folder for the demo's tables, emptied first (default: demo-data)",
    )
    sub.add_argument("--days", type=_positive, default=30, metavar="N", help="days of data (default: 30)")
    sub.add_argument(
        "--rows-per-day", type=_positive, default=200, metavar="N", help="ledger transactions per day (default: 200)"
    )
    return parser


# --- the context of one command -----------------------------------------------------------------------------------


@dataclasses.dataclass
class Context:
    """What every command needs: the parsed options, settings, consoles and a SparkSession started on demand."""

    args: argparse.Namespace
    settings: Settings
    verbose: bool
    extra_conf: dict[str, str]
    out: Console
    spark_log: Path | None = None
    hint: str | None = None
    log_name: str = PROG  # whose Spark log file: the job's, once a command loaded one
    _spark: SparkSession | None = None

    @property
    def json(self) -> bool:
        return bool(getattr(self.args, "json", False))

    def spark(self) -> SparkSession:
        if self._spark is None:
            self._spark, self.spark_log = _start_spark(self.settings, self.extra_conf, self.verbose, self.log_name)
        return self._spark

    def job(self, name_or_path: str) -> tuple[JobConfig, Path]:
        path = resolve_job(name_or_path, self.settings.job_dir)
        job = load_job(path)
        self.log_name = job.name
        return job, path

    def all_jobs(self) -> list[Path]:
        job_dir = self.settings.job_dir
        found = sorted(job_dir.glob("*.toml")) if job_dir.is_dir() else []
        if not found:
            raise ConfigError(f"job_dir: no job files (*.toml) in {job_dir}; give JOB or set job_dir in the settings")
        return found

    def print(self, text: str) -> None:
        """One line on stdout, flushed: a scheduler's redirected log shows it when it happens."""
        self.out.print(text, markup=False, highlight=False)
        self.out.file.flush()


def _start_spark(
    settings: Settings, extra_conf: dict[str, str], verbose: bool, log_name: str
) -> tuple[SparkSession, Path | None]:
    """Get or create the SparkSession; unless verbose, Spark's log goes to the job's log file (errors only)."""
    from deltainc.cli.spark_log import log_file
    from deltainc.spark import get_spark

    if verbose:
        spark = get_spark(settings, extra_conf)
        log.info(
            "Spark %s, master %s; Spark's log output goes to this terminal", spark.version, spark.sparkContext.master
        )
        return spark, None
    from pyspark.sql import SparkSession

    quiet = settings.model_copy(update={"spark": settings.spark.model_copy(update={"log_level": "ERROR"})})
    if SparkSession.getActiveSession() is not None:  # the JVM runs already (embedded use, tests): reuse it
        return get_spark(quiet, extra_conf), None
    log_path = log_file(settings.spark_log_dir, log_name)
    # The JVM started here inherits file descriptors 1 and 2: point them at the log file while the session
    # starts, so that log4j (stderr) and Ivy's banner (stdout) write there for the JVM's whole life, while
    # this process gets its own terminal back as soon as the session is up.
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    try:
        with open(log_path, "ab") as spark_output:
            for fd in saved:
                os.dup2(spark_output.fileno(), fd)
        spark = get_spark(quiet, extra_conf)
    finally:
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            os.close(copy)
    return spark, log_path


@contextlib.contextmanager
def _environment(settings_file: str | None) -> Iterator[None]:
    """DELTAINC_SETTINGS_FILE set for the duration of the command when --settings is given, then restored."""
    if settings_file is None:
        yield
        return
    if not Path(settings_file).is_file():
        raise ConfigError(f"--settings: no such file {settings_file}")
    before = os.environ.get(SETTINGS_ENV)
    os.environ[SETTINGS_ENV] = settings_file
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(SETTINGS_ENV, None)
        else:
            os.environ[SETTINGS_ENV] = before


def _settings(master: str | None) -> Settings:
    """The settings from the file and the environment, with --master on top; errors name the file and field."""
    source = os.environ.get(SETTINGS_ENV, str(DEFAULT_SETTINGS_FILE))
    try:
        settings = load_settings()
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: invalid TOML: {exc}") from None
    except ValidationError as exc:
        raise ConfigError(_validation_message(exc, f"settings ({source} or DELTAINC_* variables)")) from None
    if master is not None:
        settings = settings.model_copy(update={"spark": settings.spark.model_copy(update={"master": master})})
    return settings


def _validation_message(exc: ValidationError, source: str) -> str:
    lines = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        got = f" (got {error['input']!r})" if error["type"] != "missing" and "input" in error else ""
        lines.append(f"{source}: {where + ': ' if where else ''}{error['msg']}{got}")
    return "\n".join(lines)


# --- errors and output --------------------------------------------------------------------------------------------


def _classify(exc: BaseException) -> tuple[int, str]:
    """The exit code of an exception and its one-line (or, for config errors, one-line-per-problem) message."""
    if isinstance(exc, (ConfigError, SchemaError, AmbiguousRowsError)):
        return EXIT_INVALID, str(exc)
    if isinstance(exc, ValidationError):
        return EXIT_INVALID, _validation_message(exc, "input")
    if isinstance(exc, tomllib.TOMLDecodeError):
        return EXIT_INVALID, f"invalid TOML: {exc}"
    if isinstance(exc, JobLockedError):
        return EXIT_LOCKED, str(exc)
    java = getattr(exc, "java_exception", None)  # py4j's Py4JJavaError: its own first line says nothing
    text = str(java) if java is not None else str(exc)
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if len(first) > 300:
        first = first[:297] + "..."
    return EXIT_FAILURE, f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _error(message: str) -> None:
    lines = message.splitlines() or [""]
    sys.stderr.write(f"{PROG}: error: {lines[0]}\n")
    for line in lines[1:]:
        sys.stderr.write(f"  {line}\n")
    sys.stderr.flush()


def _report(ctx: Context | None, exc: BaseException, verbose: bool) -> int:
    code, message = _classify(exc)
    if verbose:
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    if code == EXIT_FAILURE:
        notes = []
        if ctx is not None and ctx.hint:
            notes.append(ctx.hint)
        if not verbose:
            notes.append("--verbose for the full trace")
        if ctx is not None and ctx.spark_log is not None:
            notes.append(f"Spark's log: {ctx.spark_log}")
        if notes:
            message = f"{message} ({'; '.join(notes)})"
    elif ctx is not None and ctx.hint and code != EXIT_INVALID:
        message = f"{message} ({ctx.hint})"
    _error(message)
    return code


def _json_default(value: Any) -> Any:
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "__dict__"):
        return {k: v for k, v in vars(value).items() if not k.startswith("_")}
    return str(value)


def _emit_json(document: Any) -> None:
    sys.stdout.write(json.dumps(document, indent=2, default=_json_default) + "\n")
    sys.stdout.flush()


def _make_console() -> Console:
    console = Console(highlight=False, soft_wrap=True)
    if not console.is_terminal:  # piped or captured: no 80-column wrapping of tables
        console = Console(highlight=False, soft_wrap=True, width=200)
    return console


@contextlib.contextmanager
def _logging(settings_level: str, verbose: bool) -> Iterator[None]:
    """The package's log records on stderr: warnings only, or from settings.log_level with --verbose."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{PROG}: %(levelname)s: %(message)s"))
    level = logging.getLevelName(settings_level.upper()) if verbose else logging.WARNING
    previous = log.level
    log.addHandler(handler)
    log.setLevel(level if isinstance(level, int) else logging.INFO)
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(previous)


# --- main ---------------------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (the console script calls `sys.exit(main())`)."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:  # --help (0) or a usage error (2, message already printed by argparse)
        return exc.code if isinstance(exc.code, int) else EXIT_INVALID
    verbose = bool(getattr(args, "verbose", False) or args.g_verbose)
    settings_file = getattr(args, "settings", None) or args.g_settings
    master = getattr(args, "master", None) or args.g_master
    extra_conf = dict([*(args.g_conf or []), *getattr(args, "conf", [])])
    ctx: Context | None = None
    try:
        with _environment(settings_file), _cancel_on_sigterm():
            settings = _settings(master)
            ctx = Context(args, settings, verbose, extra_conf, _make_console())
            with _logging(settings.log_level, verbose):
                return int(args.handler(ctx))
    except (KeyboardInterrupt, Cancelled) as exc:
        what = "cancelled (SIGTERM)" if isinstance(exc, Cancelled) else "interrupted"
        _error(f"{what} ({ctx.hint})" if ctx is not None and ctx.hint else what)
        return EXIT_TERMINATED if isinstance(exc, Cancelled) else EXIT_INTERRUPTED
    except Exception as exc:
        return _report(ctx, exc, verbose)


@contextlib.contextmanager
def _cancel_on_sigterm() -> Iterator[None]:
    """Turn SIGTERM (a scheduler's timeout or cancel) into Cancelled, so that the run stops cleanly: its
    run-log row says cancelled and releases the lock. Only in the main thread, where signals arrive."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signal_number: int, _frame: object) -> None:
        raise Cancelled(signal_number)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


# --- run, rerun, backfill -----------------------------------------------------------------------------------------


def _window_line(report: WindowReport) -> str:
    counts = "  ".join(f"{name} {rows}" for name, rows in report.counts.items())
    if report.too_late is not None:
        counts += f"  too_late {report.too_late}"
    return (
        f"{report.window}  {counts}  |  inserted {report.inserted}  updated {report.updated}  "
        f"deleted {report.deleted}  files rewritten {report.target_files_removed}  ({report.duration_s:.1f} s)"
    )


def _result_document(result: PipelineResult) -> dict[str, Any]:
    document = dataclasses.asdict(result)
    document["nothing_pending"] = result.nothing_pending
    return document


def _print_result(ctx: Context, result: PipelineResult) -> None:
    """The command's outcome; its windows were printed one by one as they committed (`_on_window`)."""
    if ctx.json:
        _emit_json(_result_document(result))
    elif result.nothing_pending:
        ctx.print(result.message)
    else:
        ctx.print(f"{result.job}: {result.message}; watermark {result.watermark or 'none'}")


def _on_window(ctx: Context) -> Callable[[WindowReport], None]:
    """Print each window's line the moment it committed (flushed), unless the output is one JSON document."""
    return lambda report: None if ctx.json else ctx.print(_window_line(report))


def _cmd_run(ctx: Context) -> int:
    from deltainc import pipeline

    job, _ = ctx.job(ctx.args.job)
    result = pipeline.run(
        job,
        until=ctx.args.until,
        spark=ctx.spark(),
        settings=ctx.settings,
        on_window=_on_window(ctx),
        rebuild=ctx.args.rebuild,
    )
    _print_result(ctx, result)
    return EXIT_OK


def _check_range(start: str, end: str | None) -> None:
    if end is not None and parse_point(end, "--end", "hour") < parse_point(start, "--start", "hour"):
        raise ConfigError(f"--start {start} is after --end {end}: invalid window")


def _cmd_rerun(ctx: Context) -> int:
    from deltainc import pipeline

    _check_range(ctx.args.start, ctx.args.end)
    job, _ = ctx.job(ctx.args.job)
    result = pipeline.rerun(
        job, ctx.args.start, ctx.args.end, spark=ctx.spark(), settings=ctx.settings, on_window=_on_window(ctx)
    )
    _print_result(ctx, result)
    return EXIT_OK


def _cmd_backfill(ctx: Context) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from deltainc import pipeline
    from deltainc.join.windows import Window

    _check_range(ctx.args.start, ctx.args.end)
    job, _ = ctx.job(ctx.args.job)
    spark = ctx.spark()
    done = {"chunks": 0, "total": 0}
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=ctx.out,
        disable=ctx.json,
    )

    def on_progress(number: int, total: int, report: WindowReport | None, window: Window) -> None:
        done.update(chunks=number, total=total)
        progress.update(task, completed=number, total=total)
        if not ctx.json:
            line = _window_line(report) if report is not None else f"{window}  already processed, skipped"
            progress.console.print(f"[{number}/{total}] {line}", markup=False, highlight=False)

    ctx.hint = "run the same command again to resume: processed chunks are skipped"
    with progress:
        task = progress.add_task(f"backfill {job.name}", total=None)
        try:
            result = pipeline.backfill(
                job,
                ctx.args.start,
                ctx.args.end,
                chunk=ctx.args.chunk,
                spark=spark,
                settings=ctx.settings,
                on_progress=on_progress,
            )
        except Exception:
            if done["total"]:
                ctx.hint = (
                    f"stopped after chunk {done['chunks']} of {done['total']}; run the same command again "
                    "to resume: processed chunks are skipped"
                )
            raise
    if ctx.json:
        _emit_json(_result_document(result))
    else:
        ctx.print(f"{result.job}: {result.message}; watermark {result.watermark or 'none'}")
    return EXIT_OK


# --- status and validate ------------------------------------------------------------------------------------------


def _for_each_job(ctx: Context, check: Callable[[JobConfig, Path], dict[str, Any]]) -> int:
    """Apply `check` to JOB, or to every job of the job directory, carrying on past a job that fails (its
    error names it); one JSON document; the worst exit code."""
    if ctx.args.job is not None:
        job, path = ctx.job(ctx.args.job)
        document = check(job, path)
        if ctx.json:
            _emit_json(document)
        return EXIT_OK
    documents: list[dict[str, Any]] = []
    code = EXIT_OK
    for path in ctx.all_jobs():
        try:
            job = load_job(path)
            documents.append(check(job, path))
        except Exception as exc:
            job_code, message = _classify(exc)
            if ctx.verbose:
                traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
            _error(f"job {path.stem} ({path}): {message}")
            code = max(code, job_code) if code != EXIT_FAILURE else code
            documents.append({"job": path.stem, "file": str(path), "error": message, "exit_code": job_code})
    if ctx.json:
        _emit_json({"jobs": documents})
    return code


def _runs_table(runs: list[dict[str, Any]]) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False)
    for heading, justify in (
        ("started (UTC)", "left"),
        ("command", "left"),
        ("window", "left"),
        ("status", "left"),
        ("rows", "right"),
        ("+ / ~ / -", "right"),
        ("late", "right"),
        ("s", "right"),
        ("error", "left"),
    ):
        table.add_column(heading, justify=justify)  # type: ignore[arg-type]
    for run in runs:
        start, end = run.get("window_start"), run.get("window_end")
        window = "-" if start is None else (start if start == end else f"{start}..{end}")
        started = run.get("started_at")
        if isinstance(started, dt.datetime):
            started = started.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        rows = sum(int(run.get(f"rows_{name}") or 0) for name in JOIN_TYPE_NAMES.values())
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
            f"{float(run.get('duration_s') or 0):.1f}",
            error,
        )
    return table


def _pending_line(pending: Pending | None, job: JobConfig) -> str:
    """All that is pending, and how many windows `max_window` makes of it: '2025-01-01..2025-01-15 (15 days,
    15 windows of max_window 1; next 2025-01-01)'."""
    if pending is None:
        return "nothing pending"
    whole, unit = pending.whole, job.join.time_uom
    size = f"{whole.units} {unit}{'s' if whole.units != 1 else ''}"
    if pending.windows == 1:
        return f"{whole} ({size}, one window)"
    return f"{whole} ({size}, {pending.windows} windows of max_window {job.max_window}; next {pending.next})"


def _read_status(ctx: Context, job: JobConfig) -> JobStatus:
    """The job's status from its Delta logs without a JVM where they can answer, else with Spark."""
    from deltainc import pipeline
    from deltainc.pipeline.log_status import LogUnreadable, status_from_log

    try:
        return status_from_log(job, ctx.settings, ctx.args.runs)
    except LogUnreadable as exc:
        log.info("%s: status read with Spark: %s", job.name, exc)
    return pipeline.status(job, spark=ctx.spark(), settings=ctx.settings, runs=ctx.args.runs)


def _print_status(ctx: Context, state: JobStatus, job: JobConfig, path: Path) -> None:
    ctx.print(f"{state.job}  ({path})")
    ctx.print(f"  watermark        {state.watermark or 'none (never run)'}")
    ctx.print(f"  latest {job.join.inc_col:<9} {state.latest_available or 'none'} (present in both sources)")
    if state.problem:
        ctx.print(f"  problem          {state.problem}")
    else:
        ctx.print(f"  pending          {_pending_line(state.pending, job)}")
    if state.changed_settings:
        changed = ", ".join(f"{c.setting} {c.before!r} -> {c.now!r}" for c in state.changed_settings)
        ctx.print(f"  settings         changed since the target was built: {changed} (run refuses; see validate)")
    lock = state.lock
    if lock is None:
        ctx.print("  lock             free")
    else:
        verdict = "alive" if lock["alive"] else "dead: the next run takes it over"
        ctx.print(
            f"  lock             held by run {lock['run_id']} ({lock['owner']}) for {lock['age_s']:.0f} s, "
            f"last heartbeat {lock['heartbeat_age_s']:.0f} s ago: {verdict} ({lock['reason']})"
        )
    if state.runs:
        ctx.print("  last runs:")
        ctx.out.print(_runs_table(state.runs))
        ctx.out.file.flush()
    else:
        ctx.print("  last runs:       none")


def _cmd_status(ctx: Context) -> int:
    from deltainc.pipeline.job_status import status_document

    def check(job: JobConfig, path: Path) -> dict[str, Any]:
        state = _read_status(ctx, job)
        if not ctx.json:
            _print_status(ctx, state, job, path)
        return {"file": str(path), **status_document(state)}

    return _for_each_job(ctx, check)


def _cmd_validate(ctx: Context) -> int:
    from deltainc import pipeline
    from deltainc.join.windows import read_bounds
    from deltainc.pipeline.job_status import status_document
    from deltainc.pipeline.remembered_settings import refusal
    from deltainc.pipeline.sources import table_exists

    def check(job: JobConfig, path: Path) -> dict[str, Any]:
        spark = ctx.spark()
        pipeline.prepare_job(job, spark, ctx.settings)  # the sources, the join and the output: raises if invalid
        state = pipeline.status(job, spark=spark, settings=ctx.settings, runs=1)
        if state.changed_settings:
            raise refusal(job, state.changed_settings, "validate")
        uom, join = job.join.time_uom, job.join
        bounds: dict[str, list[str]] | None = None
        if state.pending is not None:
            read = read_bounds(state.pending.next, join.look_back_time, join.max_waiting_time)

            def label(unit: int) -> str:
                return from_index(unit, uom).isoformat()

            bounds = {
                "source_a": [label(read.a_start), label(read.a_end)],
                "source_b": [label(read.b_start), label(read.b_end)],
            }
        target = table_exists(spark, job.target)
        warnings: list[str] = []
        if target:
            from deltainc.pipeline.target_layout import layout_warnings, read_layout

            layout = read_layout(spark, job.target)
            warnings = layout_warnings(layout, join.inc_col, uom, job.target.change_data_feed)
        status = status_document(state)
        document = {
            "job": job.name,
            "file": str(path),
            "valid": True,
            "watermark": state.watermark,
            "latest_available": state.latest_available,
            "pending": status["pending"],
            "next_window_reads": bounds,
            "target_exists": target,
            "warnings": warnings,
        }
        if not ctx.json:
            ctx.print(f"{job.name}: valid  ({path})")
            ctx.print(
                f"  sources          {job.source_a.label} (A), {job.source_b.label} (B): "
                f"join {join.how} on {', '.join(join.join_cols) or join.join_cond}, {join.inc_col} present, "
                "types compatible"
            )
            ctx.print(f"  target           {job.target.label} ({'exists' if target else 'created by the first run'})")
            for warning in warnings:
                ctx.print(f"  warning          {warning}")
            ctx.print(
                f"  watermark        {state.watermark or 'none (never run)'}; latest {join.inc_col} in both "
                f"sources {state.latest_available or 'none'}"
            )
            ctx.print(f"  pending          {_pending_line(state.pending, job)}")
            if bounds is not None:
                (a_first, a_last), (b_first, b_last) = bounds["source_a"], bounds["source_b"]
                ctx.print(
                    f"  next run reads   source_a {join.inc_col} {a_first}..{a_last}, "
                    f"source_b {join.inc_col} {b_first}..{b_last}"
                )
        return document

    return _for_each_job(ctx, check)


# --- unlock -------------------------------------------------------------------------------------------------------


def _cmd_verify(ctx: Context) -> int:
    from deltainc.pipeline.verify import verify

    if ctx.args.start is not None:
        _check_range(ctx.args.start, ctx.args.end)
    job, _ = ctx.job(ctx.args.job)
    result = verify(job, ctx.args.start, ctx.args.end, spark=ctx.spark(), settings=ctx.settings)
    if ctx.json:
        document = json.loads(json.dumps(dataclasses.asdict(result), default=_json_default))
        _emit_json({**document, "equal": result.equal})
        return EXIT_OK if result.equal else EXIT_FAILURE
    verdict = "equal" if result.equal else "DRIFT"
    ctx.print(
        f"verify {result.job} {result.window} (watermark {result.watermark}): target {result.target_rows} rows, "
        f"recompute {result.recomputed_rows} rows: {verdict}"
    )
    read = (result.files_read_a, result.files_read_b, result.files_read_target)
    ctx.print("  read {} file(s) of A, {} of B, {} of the target".format(*read))
    for label, counts, sample in (
        ("only in the target", result.only_in_target, result.sample_only_in_target),
        ("only in the recompute", result.only_in_recompute, result.sample_only_in_recompute),
    ):
        if counts:
            ctx.print(f"  {label}: " + "  ".join(f"{name} {rows}" for name, rows in counts.items()))
            for row in sample:
                ctx.print("    " + json.dumps(row, default=_json_default))
    if not result.equal:
        ctx.print(f"  the target drifted from a reload; `deltainc rerun {result.job} --start DATE` rewrites it")
    return EXIT_OK if result.equal else EXIT_FAILURE


def _cmd_unlock(ctx: Context) -> int:
    from deltainc.pipeline.lock import remove_lock
    from deltainc.pipeline.state import state_paths

    job, _ = ctx.job(ctx.args.job)
    paths = state_paths(job.state_path(ctx.settings.state_dir))
    removed = remove_lock(ctx.spark(), paths.locks, job.name, ctx.args.run_id)
    if not removed:
        ctx.print(f"{job.name}: no lock held, nothing to remove")
    now = dt.datetime.now()  # pyspark gives acquired_at in local time
    for row in removed:
        taken = row["acquired_at"]
        age = f", {int((now - taken).total_seconds() // 60)} minute(s) ago" if isinstance(taken, dt.datetime) else ""
        ctx.print(f"{job.name}: removed the lock of run {row['run_id']} ({row['owner']}), taken at {taken}{age}")
    if removed:
        ctx.print(
            "  (rarely needed: the next run takes over a dead run's lock by itself once its heartbeat is older "
            f"than lock_expiry_seconds = {ctx.settings.lock_expiry_seconds}, at once on the same host)"
        )
    return EXIT_OK


# --- profile and demo (modules imported on use) ---------------------------------------------------------------------


def _cmd_profile(ctx: Context) -> int:
    from deltainc.tools import profile as profiling

    start, end = ctx.args.start, ctx.args.end
    if start is not None and end is not None and start > end:
        raise ConfigError(f"--start {start} is after --end {end}: invalid window")
    job, _ = ctx.job(ctx.args.job)
    result = profiling.profile_job(ctx.spark(), job, start, end)
    chart = None if ctx.args.chart is None else profiling.plot_profile(result, ctx.args.chart, job)
    if ctx.json:
        document = json.loads(json.dumps(result, default=_json_default))
        if not isinstance(document, dict):
            document = {"profile": document}
        document.setdefault("job", job.name)
        if chart is not None:
            document["chart"] = str(chart)
        _emit_json(document)
    else:
        ctx.print(profiling.format_profile(result, job))
        if chart is not None:
            ctx.print(f"chart written to {chart}")
    return EXIT_OK


def _cmd_demo(ctx: Context) -> int:
    from deltainc.tools.demo import run_demo

    result = run_demo(
        ctx.args.root, ctx.spark(), days=ctx.args.days, rows_per_day=ctx.args.rows_per_day, echo=ctx.print
    )
    ok = getattr(result, "ok", True)
    if not ok:
        _error("demo: the daily schedules, the re-run and the one-shot reloads did not agree (see above)")
        return EXIT_FAILURE
    return EXIT_OK
