"""The context of one command: its parsed options (the global ones, --settings, --master, --remote, --conf and
--verbose, accepted before the command and after it), the settings, stdout, and a SparkSession started on demand.

Commands that need Spark start it through `Context.spark()`, after their settings and job file were checked.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from rich.console import Console

from deltainc.cli import spark_start
from deltainc.cli.output import PROG, validation_message
from deltainc.errors import ConfigError
from deltainc.pipeline import JobConfig, TOMLDecodeError, load_job, resolve_job
from deltainc.settings import DEFAULT_SETTINGS_FILE, SETTINGS_FILE_ENV, Settings, load_settings, settings_file
from deltainc.settings import use as use_storage

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["Context", "command_settings", "GlobalOptions", "add_global_options", "global_options"]


def command_settings(file: str | None, master: str | None, remote: str | None = None) -> Settings:
    """The settings from `file` (--settings; default $DELTAINC_SETTINGS_FILE or conf/deltainc.toml) and the
    DELTAINC_* variables, with --master and --remote on top; a bad file raises ConfigError naming the file and
    the field."""
    if file is not None and not Path(file).is_file():
        raise ConfigError(f"--settings: no such file {file}")
    source = file if file is not None else str(settings_file())
    try:
        settings = load_settings(None if file is None else Path(file))
    except TOMLDecodeError as exc:
        raise ConfigError(f"{source}: invalid TOML: {exc}") from None
    except ValidationError as exc:
        raise ConfigError(validation_message(exc, f"settings ({source} or DELTAINC_* variables)")) from None
    if master is not None:
        settings = settings.model_copy(update={"spark": settings.spark.model_copy(update={"master": master})})
    if remote is not None:
        if not remote.startswith("sc://"):
            raise ConfigError(f"--remote: a Spark Connect URL starts with sc:// (got {remote!r}), e.g. sc://host:15002")
        settings = settings.model_copy(update={"spark": settings.spark.model_copy(update={"remote": remote})})
    use_storage(settings.storage)  # the state's delta-rs calls (status without a JVM) reach S3 with these
    return settings


@dataclasses.dataclass
class Context:
    """What every command needs: the parsed options, settings, consoles and a SparkSession started on demand."""

    args: argparse.Namespace
    settings: Settings
    verbose: bool
    extra_conf: dict[str, str]
    out: Console
    spark_log: Path | None = None  # where Spark's own output went, once started
    hint: str | None = None  # how to go on after a failure (resume a backfill), added to the error
    log_name: str = PROG  # whose Spark log file: the job's, once a command loaded one
    s3: bool = False  # a job the command loaded has tables in S3: the session gets S3A
    _spark: SparkSession | None = None

    @property
    def json(self) -> bool:
        """The command prints one JSON document instead of lines."""
        return bool(getattr(self.args, "json", False))

    def spark(self) -> SparkSession:
        """The SparkSession, started on first use (its log in the file of the job loaded last)."""
        if self._spark is None:
            self._spark, self.spark_log = spark_start.start_spark(
                self.settings, self.extra_conf, self.verbose, self.log_name, self.s3
            )
        return self._spark

    def job(self, name_or_path: str) -> tuple[JobConfig, Path]:
        """The job named or given by path (names are looked up in the settings' job_dir) and its file."""
        path = resolve_job(name_or_path, self.settings.job_dir)
        job = load_job(path)
        self.log_name, self.s3 = job.name, self.s3 or job.on_s3
        return job, path

    def all_jobs(self) -> list[Path]:
        """Every job file of the job directory; ConfigError when there is none."""
        job_dir = self.settings.job_dir
        found = sorted(job_dir.glob("*.toml")) if job_dir.is_dir() else []
        if not found:
            raise ConfigError(f"job_dir: no job files (*.toml) in {job_dir}; give JOB or set job_dir in the settings")
        return found

    def print(self, text: str) -> None:
        """One line on stdout, flushed: a scheduler's redirected log shows it when it happens."""
        self.out.print(text, markup=False, highlight=False)
        self.out.file.flush()


def _conf(value: str) -> tuple[str, str]:
    key, sep, val = value.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value (e.g. spark.executor.memory=4g), got {value!r}")
    return key.strip(), val


# Each option: its flags, and what argparse takes for it besides its dest and default.
_OPTIONS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (("--settings",), {"metavar": "FILE",
                       "help": f"settings file (default: ${SETTINGS_FILE_ENV} or {DEFAULT_SETTINGS_FILE})"}),
    (("--master",), {"metavar": "URL", "help": "Spark master URL, overrides spark.master of the settings"}),
    (("--remote",), {"metavar": "URL", "help": "be a client of this Spark Connect server (sc://host:15002) instead "
                     "of starting Spark; overrides spark.remote of the settings and $SPARK_REMOTE"}),
    (("--conf",), {"metavar": "KEY=VALUE", "type": _conf, "action": "append",
                   "help": "extra Spark configuration (repeatable)"}),
    (("--verbose", "-v"), {"action": "store_true",
                           "help": "full traceback on errors and Spark's own log output on the terminal"}),
)  # fmt: skip


def add_global_options(parser: argparse.ArgumentParser, prefix: str, default: Any) -> None:
    """--settings, --master, --remote, --conf, --verbose: accepted before the command (prefix 'g_') and after it."""
    group = parser.add_argument_group("global options")
    for flags, options in _OPTIONS:
        group.add_argument(*flags, dest=f"{prefix}{flags[0][2:]}", default=default, **options)


@dataclasses.dataclass(frozen=True)
class GlobalOptions:
    """The global options, wherever they were given (after the command wins, --conf from both)."""

    settings: str | None
    master: str | None
    remote: str | None
    conf: dict[str, str]
    verbose: bool


def global_options(args: argparse.Namespace) -> GlobalOptions:
    """The global options of parsed arguments."""
    return GlobalOptions(
        settings=getattr(args, "settings", None) or args.g_settings,
        master=getattr(args, "master", None) or args.g_master,
        remote=getattr(args, "remote", None) or args.g_remote,
        conf=dict([*(args.g_conf or []), *getattr(args, "conf", [])]),
        verbose=bool(getattr(args, "verbose", False) or args.g_verbose),
    )
