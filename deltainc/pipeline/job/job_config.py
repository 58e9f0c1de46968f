"""One job file as a whole: its name, first date and window cap, its sources, join, target and state, the rules
that span sections (a two-source job or a feature job, and what each may set), and loading it: find the file by
name or path, read its TOML (`tomllib`, its backport `tomli` on 3.10) and validate it, each problem a ConfigError
line naming the file and the field."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, model_validator

from deltainc.errors import ConfigError, did_you_mean
from deltainc.join.options import How
from deltainc.pipeline.job.checks_section import ChecksConfig
from deltainc.pipeline.job.field_types import Corrections, Name, NonNegativeInt, Section, absolute_location, known_keys
from deltainc.pipeline.job.sections import FeatureConfig, JoinConfig, SourceRef, StateConfig, TargetConfig
from deltainc.pipeline.job.upstream import check_dating, resolve_upstream, source_sections
from deltainc.settings import Settings, load_settings, uses_s3

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["JobConfig", "TOMLDecodeError", "load", "load_job", "resolve_job"]

TOMLDecodeError = tomllib.TOMLDecodeError


class JobConfig(Section):
    """One job file: its name, first date, window cap, the two sources, the join, the target, the state and the
    health checks' thresholds."""

    name: Name
    start_date: dt.date
    max_window: NonNegativeInt = 0
    source_a: SourceRef
    source_b: SourceRef | None = None  # a two-source job; a feature job lists [[features]] instead
    features: list[FeatureConfig] = Field(default_factory=list)
    join: JoinConfig = Field(default_factory=JoinConfig)  # required of a two-source job (`_one_form`)
    target: TargetConfig
    state: StateConfig = Field(default_factory=StateConfig)
    checks: ChecksConfig = Field(default_factory=ChecksConfig)  # `deltainc check`'s thresholds; no row depends on them

    @property
    def sources(self) -> tuple[tuple[str, SourceRef], ...]:
        """Every source with the name messages give it: source_a, then source_b or each features[name]."""
        others = [(f.role, f) for f in self.features] if self.features else [("source_b", self.source_b)]
        return (("source_a", self.source_a), *[(role, ref) for role, ref in others if ref is not None])

    def inc_col_of(self, role: str) -> str:
        """The incremental column source `role` is read by: its own `inc_col`, else `[join] inc_col`."""
        return dict(self.sources)[role].inc_col or self.join.inc_col

    @property
    def all_sources(self) -> str:
        """How messages name the job's sources together: "both sources", or "all 3 sources" in a feature job."""
        count = len(self.sources)
        return "both sources" if count == 2 else f"all {count} sources"

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
                   "corrections": self.target.corrections != Corrections.APPLY}  # fmt: skip
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
        if self.join.how in ("full_outer", "asof") and self.target.corrections == Corrections.KEEP:
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
        *section, key = error["loc"]
        return "unknown key" + did_you_mean(str(key), known_keys(JobConfig, section))
    if kind == "missing":
        return "required key is missing"
    if kind == "greater_than_equal":
        return f"must be >= {ctx['ge']} (got {got!r})"
    if kind in ("value_error", "assertion_error"):
        return str(ctx["error"])
    return f"{error['msg']} (got {got!r})"


def load_job(path: str | Path) -> JobConfig:
    """Read and validate a job file; every problem becomes a ConfigError naming the file and the field.

    Relative paths in the file are made absolute against the working directory, so the job means the same
    tables wherever Spark's JVM was started.

    Args:
        path: the job's TOML file.

    Returns:
        The validated job (`JobConfig`): `job.source_a.path`, `job.target.keys`, `job.join.max_waiting_time`, ...

    Raises:
        ConfigError: the file is missing or not TOML, or a key is unknown, missing or invalid, naming it.

    Example:
        ```python
        from deltainc import load_job

        job = load_job("conf/jobs/bank_trx.toml")
        print(job.name, job.join.look_back_time, job.join.max_waiting_time)
        ```
    """
    return _load(Path(path), ())


def _load(path: Path, downstream: tuple[str, ...]) -> JobConfig:
    """`load_job` of a job that the jobs in `downstream` (their file names, in order) read from."""
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"{path}: job file not found") from None
    except TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read job file: {exc.strerror or exc}") from None
    upstreams = {
        where: resolve_upstream(section, f"{path}: {where}", path.parent, (*downstream, path.stem), _load)
        for where, section in source_sections(data)
        if "job" in section
    }
    try:
        job = JobConfig.model_validate(data)
    except ValidationError as exc:
        lines = []
        for error in exc.errors():
            where = _where(error["loc"])
            lines.append(f"{path}: {where + ': ' if where else ''}{_describe(error)}")
        raise ConfigError("\n".join(lines)) from None
    for where, upstream in upstreams.items():
        check_dating(f"{path}: {where}", upstream, job)
    return job


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


def load(job: JobConfig | str | Path, settings: Settings | None = None) -> tuple[JobConfig, Settings]:
    """The job (a config, or a job name or file under the settings' job_dir) and the settings to run it with.

    Example: ``job, settings = load("bank_trx")``.
    """
    settings = settings or load_settings()
    if not isinstance(job, JobConfig):
        job = load_job(resolve_job(str(job), settings.job_dir))
    return job, settings
