"""The suffixes (`alias_a` / `alias_b`) of a two-source job in a chain: a job whose source is another job's target
reads columns that already carry that job's suffixes (`RecDate_A`, `RecDate_B`), so the default `A` / `B` would
name two output columns alike. Such a job that sets neither alias picks the first pair that names every output
column apart, `A` / `B` where they already do, else `A2` / `B2`, `A3` / `B3`, ...; as a feature job names its
colliding spine columns itself (`feature_source.spine_names`). A job that sets an alias keeps its own, and so
does a job with a `join_cond`, which names the sources by their aliases."""

from __future__ import annotations

from collections.abc import Sequence

from deltainc.join.options import IncJoinSettings
from deltainc.join.output_layout import first_collision, output_candidates
from deltainc.pipeline.job.job_config import JobConfig

__all__ = ["chain_suffixes", "picked_suffixes"]

_TRIED = 9  # A/B, then A2/B2 .. A9/B9


def _picks(job: JobConfig) -> bool:
    """Whether the job picks its own suffixes: it reads another job's target and sets no alias nor join_cond."""
    join = job.join
    reads_a_target = any(ref.job is not None for _, ref in job.sources)
    given = {"alias_a", "alias_b"} & join.model_fields_set
    return reads_a_target and not given and join.join_cond is None and not job.features


def chain_suffixes(
    job: JobConfig, a_columns: Sequence[str], b_columns: Sequence[str], settings: IncJoinSettings
) -> IncJoinSettings:
    """`settings` with the aliases the job's output is named by: the first pair that leaves every output column
    apart when the job picks its own (see the module), else `settings` as they are (a collision is then the
    output layout's error, which names a pair to set).

    Example: a job on `up`'s target, whose columns hold `RecDate_A` and `RecDate_B`, gets `alias_a = "A2"` and
    `alias_b = "B2"`: ``chain_suffixes(job, a_cols, b_cols, base).alias_a == "A2"``.
    """
    if not _picks(job):
        return settings
    join_cols, how = job.join.join_cols, job.outcome_kind
    for n in range(1, _TRIED + 1):
        number = "" if n == 1 else str(n)
        candidate = settings.model_copy(
            update={"alias_a": f"{settings.alias_a}{number}", "alias_b": f"{settings.alias_b}{number}"}
        )
        if first_collision(output_candidates(a_columns, b_columns, join_cols, how, candidate)) is None:
            return candidate
    return settings


def picked_suffixes(job: JobConfig, settings: IncJoinSettings) -> str | None:
    """What `validate` says of the suffixes a job picked itself (`settings` are its checked join's), e.g.
    "A2 / B2 (picked: A / B would name source columns alike; set join.alias_a / alias_b to choose)"; None when
    the job sets them or reads no other job's target."""
    if not _picks(job):
        return None
    pair = f"{settings.alias_a} / {settings.alias_b}"
    why = (
        "they name every output column apart"
        if settings.alias_a == job.join.alias_a
        else (f"{job.join.alias_a} / {job.join.alias_b} would name two output columns alike")
    )
    return f"{pair} (picked, as a source is another job's target: {why}; set join.alias_a / alias_b to choose)"
