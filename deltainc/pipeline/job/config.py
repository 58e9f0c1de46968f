"""The job file: a TOML file naming the two Delta sources, the join, the target and the state; strict."""

from __future__ import annotations

import datetime as dt
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from deltainc.errors import ConfigError
from deltainc.join.join_types import HOW_CHOICES, How, canonical_how
from deltainc.join.settings import (
    ASOF_NEEDS_SLIDING_WINDOW,
    DEFAULT_OUTPUT_SELECT,
    AsofStrategy,
    IncJoinSettings,
    JoinOptions,
    Text,
)
from deltainc.storage import spark_location, uses_s3

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "TableRef",
    "SourceRef",
    "FeatureConfig",
    "JoinConfig",
    "TargetConfig",
    "StateConfig",
    "JobConfig",
    "load_job",
    "resolve_job",
]

_JOB_NAME = re.compile(r"[A-Za-z0-9_-]+")


def _unique(columns: list[str]) -> list[str]:
    seen: dict[str, str] = {}
    for column in columns:
        first = seen.get(column.lower())
        if first is not None:
            same = "" if first == column else f" (same as {first!r}: Spark column names ignore case)"
            raise ValueError(f"duplicate column {column!r}{same}")
        seen[column.lower()] = column
    return columns


def absolute_location(location: str) -> str:
    """A local path made absolute against the current directory; a URI (file:/..., abfss://) is kept as is, but
    S3's s3:// and s3n:// become s3a://, the name Spark's Hadoop reads S3 by.

    Spark resolves relative paths against the directory its JVM started in, which need not be the
    directory the command runs in; absolute paths make a job mean the same wherever it is run from.
    """
    if "://" in location or location.startswith(("file:", "dbfs:")):
        return spark_location(location)  # S3 as Spark names it (s3a://); delta-rs gets s3:// (deltainc.storage)
    return os.path.abspath(os.path.expanduser(location))


def _looks_like_path(value: str) -> bool:
    """A location rather than a catalog table name: a URI, or a path with a slash or starting with . or ~."""
    return "://" in value or value.startswith(("/", ".", "~", "file:")) or os.sep in value


def _named(value: str) -> str:
    if not _JOB_NAME.fullmatch(value):
        raise ValueError(f"expected letters, digits, '_' or '-' only, got {value!r}")
    return value


Location = Annotated[Text, AfterValidator(absolute_location)]
Name = Annotated[str, AfterValidator(_named)]  # a job's or a feature source's name: it keys state and columns
Columns = Annotated[list[Text], AfterValidator(_unique)]
NonNegativeInt = Annotated[int, Field(ge=0, strict=True)]
StrictBool = Annotated[bool, Field(strict=True)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TableRef(_Section):
    """A Delta table given by exactly one of `path` (a Delta path) or `table` (a catalog name)."""

    path: Location | None = None
    table: Text | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> TableRef:
        if (self.path is None) == (self.table is None):
            found = "both" if self.path is not None else "neither"
            raise ValueError(f"give exactly one of 'path' or 'table' (got {found})")
        return self

    @property
    def label(self) -> str:
        """A human label for messages and logs: 'path data/x' or 'table db.x'."""
        return f"path {self.path}" if self.path is not None else f"table {self.table}"


class SourceRef(TableRef):
    """A source table, and optionally which of its rows the job joins."""

    # A Spark SQL condition on the source's columns: only rows where it holds are joined, in every window alike
    # (e.g. "OrderId IS NOT NULL" leaves out rows whose key is NULL). A change is a change of the target's rows.
    where: Text | None = None


class FeatureConfig(SourceRef):
    """One `[[features]]` source of a feature job: its table, how it joins the spine (source_a), the columns it
    adds (named `prefix` + column) and, for a `left` source that can match several rows, what identifies one."""

    name: Name
    how: Literal["left", "asof"]
    join_cols: Columns = Field(default_factory=list)
    join_cond: Text | None = None
    look_back_time: NonNegativeInt = 0
    max_waiting_time: NonNegativeInt = 0
    asof_strategy: AsofStrategy = "backward"
    asof_col: Text | None = None
    asof_col_b: Text | None = None
    columns: Columns | None = None  # None = every column but the join keys and the incremental column
    prefix: str | None = None  # None = name + "_"; "" = the source's own column names
    keys: Columns = Field(default_factory=list)  # a left source's columns that tell its matches of one row apart

    @field_validator("how", mode="before")
    @classmethod
    def _normalise_how(cls, value: Any) -> Any:
        how = canonical_how(value) if isinstance(value, str) else None
        if how not in ("left", "asof"):
            raise ValueError(f"a feature source joins as 'left' or 'asof', got {value!r}")
        return how

    @model_validator(mode="after")
    def _check_source(self) -> FeatureConfig:
        if not self.join_cols and self.join_cond is None:
            raise ValueError("give join_cols or join_cond (or both)")
        given = [n for n in ("asof_col", "asof_col_b", "asof_strategy") if n in self.model_fields_set]
        if self.how != "asof" and given:
            raise ValueError(f'{given[0]}: only for how = "asof" (how is {self.how!r})')
        if self.how == "asof" and self.keys:
            raise ValueError("keys: an asof source gives each spine row one match; keys are for a left source")
        if self.asof_col_b is not None and self.asof_col is None:
            raise ValueError("asof_col_b: needs asof_col (the spine's time column); asof_col alone names both")
        return self

    @property
    def out_prefix(self) -> str:
        """What the source's output columns start with."""
        return f"{self.name}_" if self.prefix is None else self.prefix

    @property
    def role(self) -> str:
        """How messages and the run log name the source: features[name]."""
        return f"features[{self.name}]"


class JoinConfig(JoinOptions):
    """How A joins B: join type, keys or condition, incremental column and the late-arrival tolerances; the
    options it shares with the engine's IncJoinSettings (aliases, time_uom, asof_*) are `JoinOptions`'."""

    how: How | None = None  # None only in a job with [[features]], where each source has its own
    join_cols: Columns = Field(default_factory=list)
    join_cond: Text | None = None
    inc_col: Text = "RecDate"
    look_back_time: NonNegativeInt = 0
    max_waiting_time: NonNegativeInt = 0
    # Unlike the engine's default (False), a job keeps its waiting rows in the target, where the next window
    # replaces them. The job file's flags are strict: "yes" is no boolean.
    include_waiting: StrictBool = True
    enforce_sliding_join_window: StrictBool = True
    # B rows arriving after the A row they match timed out are counted (and kept with target.late_rows) up to
    # this many units after that A row; None = 2 x max_waiting_time, 0 = not looked for (reads stay smaller).
    late_horizon: NonNegativeInt | None = None
    output_select: Text | None = None

    @field_validator("how", mode="before")
    @classmethod
    def _normalise_how(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        how = canonical_how(value)
        if how is None:
            raise ValueError(f"expected one of {HOW_CHOICES}, got {value!r}")
        return how

    def engine_settings(self, tie_break: Sequence[str] = ()) -> IncJoinSettings:
        """The engine's settings for this job's join: the one conversion from the job file to `inc_join`.

        The shared options are copied (the asof ones for an asof job only); a job's B side waits for its A
        (docs/design.md#the-b-side-and-too-late-rows) so that full_outer output is window-invariant; an asof
        job orders equally near B rows by `tie_break` (the target's b_keys).
        """
        shared = {name for name in JoinOptions.model_fields if self.how == "asof" or not name.startswith("asof_")}
        options: dict[str, Any] = self.model_dump(include=shared)
        if self.how == "asof":
            options["asof_tie_break"] = tuple(tie_break)
        return IncJoinSettings(
            **options,
            inc_col_name=self.inc_col,
            b_waits_for_a=self.how == "full_outer",
            output_select=self.output_select or DEFAULT_OUTPUT_SELECT,
        )

    @property
    def horizon(self) -> int:
        """How far after its A row a too-late B row is still looked for (0 = not at all; asof jobs: not at all)."""
        if self.how in ("asof", None):  # a feature job does not look for them either
            return 0
        return 2 * self.max_waiting_time if self.late_horizon is None else self.late_horizon

    @model_validator(mode="after")
    def _check_join(self) -> JoinConfig:
        if self.how is None:  # a feature job's [join] holds the spine's options; JobConfig checks the rest
            return self
        if not self.join_cols and self.join_cond is None:
            raise ValueError("give join_cols or join_cond (or both)")
        if self.how == "full_outer" and not self.enforce_sliding_join_window:
            raise ValueError(
                "a full_outer job needs enforce_sliding_join_window = true: without it unmatched B rows depend "
                "on the window's size"
            )
        if self.how == "asof" and not self.enforce_sliding_join_window:
            raise ValueError(f"an asof job {ASOF_NEEDS_SLIDING_WINDOW}")
        if self.how != "asof" and self.asof_options_given():
            raise ValueError(f'{self.asof_options_given()[0]}: only for how = "asof" (how is {self.how!r})')
        if self.how == "asof" and self.late_horizon:
            raise ValueError(
                "late_horizon: an asof job does not look for too-late B rows (a later B row is a candidate of "
                "later A rows, not a late match); remove it"
            )
        if self.late_horizon is not None and 0 < self.late_horizon <= self.max_waiting_time:
            raise ValueError(
                f"late_horizon: must be 0 (off) or more than max_waiting_time ({self.max_waiting_time}), "
                f"got {self.late_horizon}"
            )
        return self


class TargetConfig(TableRef):
    """The Delta target: where it lives, the identity of an A record and of a B record, its layout."""

    keys: Columns
    b_keys: Columns = Field(default_factory=list)
    # None = the default layout: partitioned by the output RecDate for day jobs, files sorted by it for hour
    # jobs; [] = no partitioning. Applied when the target is created; an existing table keeps its own.
    partition_by: Columns | None = None
    deletion_vectors: StrictBool = True
    forward_write: Literal["replace_where", "merge"] = "replace_where"
    # A Delta table for too-late B rows: a path ('/data/late', './late', 's3://...') or a catalog table name.
    late_rows: Text | None = None
    # What a rerun does with rows the sources corrected in the past (a backdated B row for a timed-out A row):
    # "apply" recomputes through the watermark, so the target equals a reload; "keep" keeps what the target has
    # and only counts such rows as too late.
    corrections: Literal["apply", "keep"] = "apply"
    # A column added to a source: "none" refuses the run naming it; "add_columns" adds it to the target through
    # Delta's schema evolution (rows already there read NULL). A dropped or retyped column is always refused.
    schema_evolution: Literal["none", "add_columns"] = "none"
    # Create the target with Delta's Change Data Feed, so consumers read each run's changes (table_changes).
    change_data_feed: StrictBool = False

    @field_validator("late_rows")
    @classmethod
    def _late_rows_location(cls, value: str | None) -> str | None:
        return absolute_location(value) if value is not None and _looks_like_path(value) else value

    @property
    def late_rows_ref(self) -> TableRef | None:
        """`late_rows` as a table reference: a path if it looks like one, else a catalog table name."""
        if self.late_rows is None:
            return None
        if _looks_like_path(self.late_rows):
            return TableRef(path=self.late_rows)
        return TableRef(table=self.late_rows)

    @field_validator("keys")
    @classmethod
    def _keys_not_empty(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("must list at least one column")
        return value


class StateConfig(_Section):
    """Where the watermark table and the run log live; None = the settings' state_dir."""

    path: Location | None = None


class JobConfig(_Section):
    """One job file: its name, first date, window cap, the two sources, the join, the target and the state."""

    name: Name
    start_date: dt.date
    max_window: NonNegativeInt = 0
    source_a: SourceRef
    source_b: SourceRef | None = None  # a two-source job; a feature job lists [[features]] instead
    features: list[FeatureConfig] = Field(default_factory=list)
    join: JoinConfig = Field(default_factory=JoinConfig)  # required of a two-source job (`_one_form`)
    target: TargetConfig
    state: StateConfig = Field(default_factory=StateConfig)

    @property
    def sources(self) -> tuple[tuple[str, SourceRef], ...]:
        """Every source with the name messages give it: source_a, then source_b or each features[name]."""
        others = [(f.role, f) for f in self.features] if self.features else [("source_b", self.source_b)]
        return (("source_a", self.source_a), *[(role, ref) for role, ref in others if ref is not None])

    @property
    def locations(self) -> tuple[str, ...]:
        """Every table location the job names by path: its sources, its target, its state and too-late rows."""
        named = [ref.path for _, ref in self.sources] + [self.target.path, self.state.path, self.target.late_rows]
        return tuple(location for location in named if location is not None)

    @property
    def on_s3(self) -> bool:
        """Whether any of the job's tables is in S3: its Spark session then needs S3A (deltainc.storage)."""
        return uses_s3(self.locations)

    @property
    def outcome_kind(self) -> How:
        """The join kind whose outcomes the job's rows take (run log counts): a feature job's are an asof job's
        (matched, waiting, timed out, provisional)."""
        if self.join.how is None:
            return "asof"
        return self.join.how

    @model_validator(mode="before")
    @classmethod
    def _one_form(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        if "features" in data:
            if data["features"] == []:
                raise ValueError("features: give at least one feature source, or a [source_b] instead")
            if "source_b" in data:
                raise ValueError("give either [source_b] (a two-source job) or [[features]] (a feature job), not both")
            return data
        if "source_b" not in data:
            raise ValueError("source_b: required key is missing (or list the feature sources as [[features]])")
        join = data.get("join")
        if join is None:
            raise ValueError("join: required key is missing")
        if isinstance(join, dict) and "how" not in join:
            raise ValueError("join.how: required key is missing")
        return data

    @model_validator(mode="after")
    def _check_features(self) -> JobConfig:
        if not self.features:
            return self
        spine_only = ("how", "join_cols", "join_cond", "look_back_time", "max_waiting_time", "late_horizon",
                      "output_select", "alias_b", "asof_strategy", "asof_col", "asof_col_b",
                      "enforce_sliding_join_window")  # fmt: skip
        for name in spine_only:
            if name in self.join.model_fields_set:
                raise ValueError(
                    f"join.{name}: a job with [[features]] sets it per feature source; [join] holds the spine's "
                    "inc_col, time_uom, alias_a and include_waiting"
                )
        seen: dict[str, int] = {}
        for index, feature in enumerate(self.features):
            if feature.name.lower() in seen:
                raise ValueError(
                    f"features[{index}].name: {feature.name!r} is used twice (features[{seen[feature.name.lower()]}]"
                    " has it); give each feature source its own name"
                )
            seen[feature.name.lower()] = index
        fanning = [(i, f) for i, f in enumerate(self.features) if f.keys]
        if len(fanning) > 1:
            (_, first), (index, second) = fanning[:2]
            raise ValueError(
                f"features[{index}].keys: only one feature source may match several rows of a spine row "
                f"({first.name!r} already does); with two, each spine row would get every combination of their "
                "matches. Join the other one as asof, or give it a join that matches one row"
            )
        refused = {"b_keys": bool(self.target.b_keys), "late_rows": self.target.late_rows is not None,
                   "corrections": self.target.corrections != "apply"}  # fmt: skip
        for name, given in refused.items():
            if given:
                raise ValueError(
                    f"target.{name}: not available for a job with [[features]]"
                    + (" (a source that matches several rows lists its own keys)" if name == "b_keys" else "")
                )
        return self

    @model_validator(mode="after")
    def _check_b_side(self) -> JobConfig:
        if self.join.how == "full_outer" and not self.target.b_keys:
            raise ValueError(
                "target.b_keys: a full_outer job outputs B rows without an A row; list the columns that identify "
                "a B row (with B's RecDate they are such a row's identity)"
            )
        if self.join.how in ("full_outer", "asof") and self.target.corrections == "keep":
            raise ValueError(
                f'target.corrections: "keep" is not available for {self.join.how} jobs (their rows are revised when '
                'a source changes); use "apply"'
            )
        return self

    def state_path(self, default: Path) -> str:
        """The state location: the job's own `state.path`, else `default`."""
        return self.state.path if self.state.path is not None else absolute_location(str(default))


def _where(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text.lstrip(".")


def _describe(error: Any) -> str:
    kind, ctx, got = error["type"], error.get("ctx", {}), error.get("input")
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "required key is missing"
    if kind == "greater_than_equal":
        return f"must be >= {ctx['ge']} (got {got!r})"
    if kind in ("value_error", "assertion_error"):
        return str(ctx["error"])
    return f"{error['msg']} (got {got!r})"


def load_job(path: str | Path) -> JobConfig:
    """Read and validate a job file; every problem becomes a ConfigError naming the file and the field."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"{path}: job file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read job file: {exc.strerror or exc}") from None
    try:
        return JobConfig.model_validate(data)
    except ValidationError as exc:
        lines = []
        for error in exc.errors():
            where = _where(error["loc"])
            lines.append(f"{path}: {where + ': ' if where else ''}{_describe(error)}")
        raise ConfigError("\n".join(lines)) from None


def resolve_job(name_or_path: str, job_dir: Path) -> Path:
    """An existing .toml path as is, else `job_dir/<name>.toml`; a ConfigError lists the jobs available."""
    given = Path(name_or_path)
    if given.suffix == ".toml" and given.is_file():
        return given
    name = name_or_path.removesuffix(".toml")
    by_name = job_dir / f"{name}.toml"
    if by_name.is_file():
        return by_name
    available = sorted(p.stem for p in job_dir.glob("*.toml")) if job_dir.is_dir() else []
    raise ConfigError(
        f"job {name_or_path!r}: no such job file and no {by_name} (jobs in {job_dir}: {', '.join(available) or 'none'})"
    )
