"""One window's run-log row, built as the window goes (started failed until it succeeds, with what it read and
wrote, timed from where the command's clock stands), and the settings it remembers, `job_settings`: a target is
correct only as the result of one set of join settings (docs/design.md#the-contract), so a run under changed
settings is refused, naming each setting, until the target is rebuilt. The window's run (`controller/window.py`) only
calls the row's builders here."""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

from deltainc.errors import ConfigError
from deltainc.fact_counts import SETTINGS_CHECKED, asked
from deltainc.join.options import counted_types
from deltainc.join.windows import Window
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.kinds import JobKind
from deltainc.pipeline.job.kinds.two_source import kind_of
from deltainc.pipeline.state.model import Command, RunRecord, RunStatus

if TYPE_CHECKING:  # annotations only: `status` imports the settings' half without pyspark
    from deltainc.pipeline.delta.spark_counts import ScanStats
    from deltainc.pipeline.state.lock import Lease

__all__ = [
    "Clock",
    "started",
    "timed",
    "with_reads",
    "with_writes",
    "SettingChange",
    "SettingsChangedError",
    "built_with",
    "encode",
    "changes",
    "refusal",
    "check_unchanged",
]


@dataclass
class Clock:
    """Where a command's time went so far: Spark's start, not yet recorded by a window, and when the last window
    ended (or the command began). A window's duration runs from there, so nothing of the command is left out."""

    spark_start_s: float | None
    since: float = field(default_factory=time.monotonic)


class _Commit(Protocol):
    """What a target commit changed, as the row records it (the target's `CommitResult`)."""

    @property
    def inserted(self) -> int: ...
    @property
    def updated(self) -> int: ...
    @property
    def deleted(self) -> int: ...
    @property
    def files_added(self) -> int: ...
    @property
    def files_removed(self) -> int: ...
    @property
    def rows_copied(self) -> int: ...
    @property
    def deletion_vectors(self) -> int: ...
    @property
    def version(self) -> int | None: ...


class _Written(Protocol):
    """What writing the window did (the target's `Written`): how, its commit, what of the target it read."""

    @property
    def how(self) -> Any: ...  # a TargetWrite: its `value` is recorded
    @property
    def commit(self) -> _Commit: ...
    @property
    def read(self) -> ScanStats: ...
    @property
    def too_late(self) -> int: ...


def started(
    job: JobConfig,
    lease: Lease,
    command: Command,
    window: Window,
    null_counts: tuple[int, int],
    source_latest: str | None,
    downstream: str | None = None,
) -> RunRecord:
    """The window's run-log row as it stands when it starts: failed, releasing the lock (a failure ends the run).

    Example: ``record = started(job, lease, Command.RUN, Window(1, 1), (0, 0), None)``.
    """
    return RunRecord(
        job.name,
        lease.run_id,
        command.value,
        window.label(window.start),
        window.label(window.end),
        RunStatus.FAILED.value,
        None,
        dt.datetime.now(dt.timezone.utc).replace(tzinfo=None),
        0.0,
        null_inc_a=null_counts[0],
        null_inc_b=null_counts[1],
        time_uom=job.join.time_uom.value,
        releases_lock=True,
        took_over=lease.took_over,
        job_settings=encode(built_with(job)),
        source_latest=source_latest,
        downstream=downstream,
    )


def timed(clock: Clock, phases: dict[str, float]) -> dict[str, Any]:
    """The window's duration and its phases, as run-log fields: the time since the command's previous window ended
    (or it began), plus Spark's start on the command's first window; bookkeeping is what the other phases leave."""
    now = time.monotonic()
    spark_start, clock.spark_start_s = clock.spark_start_s or 0.0, None
    duration = spark_start + now - clock.since
    clock.since = now
    join, write = phases.get("join_s"), phases.get("write_s")
    return {
        "duration_s": duration,
        "spark_start_s": spark_start,
        "join_s": join,
        "write_s": write,
        "bookkeeping_s": max(0.0, duration - spark_start - (join or 0.0) - (write or 0.0)),
    }


def with_reads(record: RunRecord, found: dict[int, int], kind: JobKind, reads: dict[str, ScanStats]) -> RunRecord:
    """The run-log row with what the window read: its output rows by JoinType (of the types a job of its kind
    outputs), the files and bytes of A and of B (of the feature sources together), and each source's own where
    the kind keeps them (`source_reads`, JSON). Named arguments: mypy checks each against RunRecord's fields."""
    others = [read for role, read in reads.items() if role != "source_a"]
    counted: dict[str, Any] = {
        f"rows_{code.outcome}": found.get(int(code), 0) for code in counted_types(kind.outcome_kind)
    }
    return replace(
        record,
        files_read_a=reads["source_a"].files,
        bytes_read_a=reads["source_a"].bytes,
        files_read_b=sum(r.files for r in others),
        bytes_read_b=sum(r.bytes for r in others),
        source_reads=kind.source_reads({role: (r.files, r.bytes) for role, r in reads.items()}),
        **counted,  # one column per JoinType outcome (RunRecord.rows names them the same way)
    )


def with_writes(record: RunRecord, written: _Written, late: int | None) -> RunRecord:
    """The run-log row with what the window wrote: the target's commit, what of the target it read, and the
    too-late B rows (those a re-run kept out of the target, and those `write_too_late` found)."""
    commit = written.commit
    return replace(
        record,
        rows_inserted=commit.inserted,
        rows_updated=commit.updated,
        rows_deleted=commit.deleted,
        rows_too_late=None if late is None and not written.too_late else (late or 0) + written.too_late,
        files_read_target=written.read.files,
        bytes_read_target=written.read.bytes,
        target_write=written.how.value if commit.version is not None else None,
        target_version=commit.version,
        target_files_added=commit.files_added,
        target_files_removed=commit.files_removed,
        target_rows_copied=commit.rows_copied,
        target_deletion_vectors=commit.deletion_vectors,
    )


@dataclass(frozen=True)
class SettingChange:
    """One remembered setting whose value in the job file differs from the one the target was built with."""

    setting: str
    before: object
    now: object


class SettingsChangedError(ConfigError):
    """A job's settings changed since its target was built; the message names each change and the ways out."""

    def __init__(self, message: str, changed: tuple[SettingChange, ...]) -> None:
        super().__init__(message)
        self.changed = changed


def built_with(job: JobConfig) -> dict[str, object]:
    """The settings that decide which rows the target holds, by their names in the job file (JSON values): what
    the job's kind remembers (`JobKind.remembered`), and the settings of the jobs whose targets it reads."""
    upstreams = [(where, ref.upstream) for where, ref in job.sources if ref.upstream is not None]
    inherited = {f"{where}.job.{name}": v for where, up in upstreams for name, v in built_with(up).items()}
    return {**kind_of(job).remembered(), **inherited}  # e.g. source_a.job.join.max_waiting_time


def encode(settings: Mapping[str, object]) -> str:
    """The settings as the run log stores them: one JSON object, keys sorted."""
    return json.dumps(dict(settings), sort_keys=True)


def changes(recorded: Mapping[str, object] | None, current: Mapping[str, object]) -> tuple[SettingChange, ...]:
    """The settings whose value differs; one the record does not know (added by a later version) is no change."""
    if recorded is None:
        return ()
    return tuple(
        SettingChange(name, recorded[name], value)
        for name, value in current.items()
        if name in recorded and recorded[name] != value
    )


def _show(value: object) -> str:
    if isinstance(value, Enum):  # a TimeUnit, quoted as the job file writes it: 'day'
        value = value.value
    return json.dumps(value) if not isinstance(value, str) else repr(value)


def refusal(job: JobConfig, changed: tuple[SettingChange, ...], command: str) -> SettingsChangedError:
    """The error refusing `command` on `job`: each changed setting, old and new value, and the ways out."""
    lines = [
        f"{command}: job {job.name!r} changed since its target was built, so its rows would mean two things "
        f"(rows waiting under the old settings might never be read again):"
    ]
    lines += [f"{c.setting}: {_show(c.before)} -> {_show(c.now)}" for c in changed]
    lines.append(
        "ways out: restore the old value(s); or recompute the whole target under the new settings with "
        f"`deltainc run {job.name} --rebuild` (one window from start_date to the latest RecDate); "
        "or give the job a new name and a new target and backfill that"
    )
    return SettingsChangedError("\n".join(lines), changed)


def check_unchanged(job: JobConfig, recorded: Mapping[str, object] | None, command: str) -> None:
    """Raise SettingsChangedError when the job file's settings differ from the ones its target was built with."""
    asked(SETTINGS_CHECKED)
    changed = changes(recorded, built_with(job))
    if changed:
        raise refusal(job, changed, command)
