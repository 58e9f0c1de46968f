"""The one message of a target identity that is not unique: which output rows share it, which source holds the
duplicate (two of its rows with the same identity columns of that source) and what to put in the job file.

Two places find such rows, the two-pass check and the check inside a window's write; both build their error here.
The sources are asked only once the output was found ambiguous, for one sample key, so a run that writes pays
nothing for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from deltainc.errors import AmbiguousRowsError
from deltainc.pipeline.job.kinds.job_kind import Identity

__all__ = ["WindowSources", "SourceDuplicate", "duplicate_in_sources", "ambiguous_identity", "shown_samples"]


@dataclass(frozen=True)
class WindowSources:
    """The rows a job's join reads, by role (`source_a`, `source_b` or a feature source), and their inc_col: where
    the duplicate behind an ambiguous output row is looked for."""

    frames: Mapping[str, DataFrame]
    inc_cols: Mapping[str, str]  # role -> the source's incremental column


@dataclass(frozen=True)
class SourceDuplicate:
    """Rows of one source that share the identity columns of that source (its keys and its inc_col)."""

    role: str  # "source_a", "source_b" or a feature source's role
    setting: str  # the job-file setting that names its keys: "target.keys", "target.b_keys", "features[0].keys"
    key: tuple[tuple[str, object], ...]  # (source column, value), the keys then the inc_col
    rows: int


def duplicate_in_sources(sample: Row, identity: Identity, sources: WindowSources) -> SourceDuplicate | None:
    """The source whose rows share the identity of the ambiguous output row `sample`: A first, then B (one small
    Spark job each, filtered on the row's RecDate). None when neither holds two rows (e.g. one A row matched two B
    rows and target.b_keys is empty).

    Example: a B source with two rows ScanId=7, RecDate=2025-03-02 gives
    `SourceDuplicate("source_b", "target.b_keys", (("ScanId", 7), ("RecDate", date(2025, 3, 2))), 2)`."""
    names = list(identity.key_names) or [*identity.a_keys, *identity.b_keys]
    sides = [
        (("target.keys", "source_a"), identity.a_keys, names[: len(identity.a_keys)], identity.a_rec),
        (identity.b_setting, identity.b_keys, names[len(identity.a_keys) :], identity.b_rec),
    ]
    for (setting, role), keys, key_names, rec in sides:
        frame = sources.frames.get(role)
        if rec is None or not keys or frame is None:
            continue
        key = (*zip(key_names, [sample[k] for k in keys], strict=True), (sources.inc_cols[role], sample[rec]))
        condition = F.lit(True)
        for column, value in key:
            condition = condition & F.col(f"`{column}`").eqNullSafe(F.lit(value))
        rows = frame.where(condition).count()
        if rows > 1:
            return SourceDuplicate(role, setting, tuple(key), rows)
    return None


def ambiguous_identity(
    identity: Identity, samples: Sequence[Row], sources: WindowSources | None = None
) -> AmbiguousRowsError:
    """The error of output rows that share one target identity: the samples (rows of the identity columns and a
    `count`), the source that holds the duplicate when `sources` tell, and what to do. Nothing was written."""
    head = f"target identity {', '.join(identity.columns)} is not unique in the join output"
    if samples:
        head = f"{head}: {shown_samples(identity, samples)}"
    found = duplicate_in_sources(samples[0], identity, sources) if samples and sources is not None else None
    return AmbiguousRowsError(f"{head}. {_held(found) if found else _hint(identity)}. Nothing was written.")


def shown_samples(identity: Identity, samples: Sequence[Row]) -> str:
    """Output rows that share an identity as a message shows them: `TrxId=1, RecDate_A=2025-03-01 (2 rows)`."""
    return "; ".join(
        ", ".join(f"{c}={row[c]}" for c in identity.columns) + f" ({row['count']} rows)" for row in samples
    )


def _held(found: SourceDuplicate) -> str:
    """Which source holds the duplicate, its key, and the ways out in job-file terms."""
    key = ", ".join(f"{column}={value}" for column, value in found.key)
    columns = ", ".join(column for column, _ in found.key)
    section = f"[{found.role}]" if found.role in ("source_a", "source_b") else f"the [[features]] source {found.role}"
    return (
        f"{found.role} holds the duplicate: {found.rows} of its rows share {key} ({found.setting} and the inc_col "
        f"identify a row of {found.role}). Keep one of them: leave the others out with a `where` under {section} "
        f"(a condition only one of them meets), or read {found.role} through a view that keeps one row per "
        f"{columns} (given as `table`); or, if they are two records, add to {found.setting} a column that tells "
        "them apart"
    )


def _hint(identity: Identity) -> str:
    """Where a duplicate can come from, when the sources were not asked or hold none."""
    setting, side = identity.b_setting
    return "two rows of source_a share these target.keys and RecDate, " + (
        f"or two rows of {side} share these {setting} and RecDate"
        if identity.b_keys
        else "or one A row matches several rows of source_b with one RecDate: set target.b_keys to the "
        "columns that identify a B row"
        if identity.fan_out is None
        else f"or one spine row matches several rows of {identity.fan_out}: list under that [[features]] source "
        "the keys that tell its rows apart"
    )
