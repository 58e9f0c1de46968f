"""The job file's `[join]`: how A joins B, and the one conversion of it to the engine's settings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field, field_validator, model_validator

from deltainc.join.options import (
    ASOF_NEEDS_SLIDING_WINDOW,
    DEFAULT_OUTPUT_SELECT,
    HOW_CHOICES,
    How,
    IncJoinSettings,
    JoinOptions,
    Text,
    canonical_how,
)
from deltainc.pipeline.job.field_types import Columns, NonNegativeInt, StrictBool

__all__ = ["JoinConfig"]


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
