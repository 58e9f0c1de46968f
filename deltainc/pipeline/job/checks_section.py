"""The job file's `[checks]`: the thresholds a team sets for a job's health (`deltainc check`). Each check has a
`warn` and an `error` level, either left out to not check it at that level; nothing here changes the target."""

from __future__ import annotations

from pydantic import Field, NonNegativeFloat, PositiveInt, model_validator

from deltainc.pipeline.job.field_types import Section
from deltainc.text_enum import TextEnum

__all__ = ["Threshold", "FailedRun", "ChecksConfig"]


class Threshold(Section):
    """A value breaches `warn` or `error` when it is above it; `error` is at least `warn` when both are given."""

    warn: NonNegativeFloat | None = None
    error: NonNegativeFloat | None = None

    @model_validator(mode="after")
    def _error_above_warn(self) -> Threshold:
        if self.warn is not None and self.error is not None and self.error < self.warn:
            raise ValueError(f"error ({self.error:g}) is below warn ({self.warn:g}); an error is the worse breach")
        return self


class FailedRun(TextEnum):
    """What a last run that failed or was cancelled is (`checks.last_run`)."""

    ERROR = "error"
    WARN = "warn"
    OFF = "off"  # not checked


class ChecksConfig(Section):
    """`[checks]`: thresholds, each `{ warn = ..., error = ... }`. Example:

    ```toml
    [checks]
    lag = { warn = 1, error = 3 }                    # units the watermark is behind the sources' latest RecDate
    timed_out_share = { warn = 0.05, error = 0.2 }   # of the final A rows of the last `windows` windows
    too_late = { warn = 10 }                         # too-late B rows per unit, in one window of the last `windows`
    freshness_hours = { warn = 26, error = 50 }      # hours since the last successful run ended
    duration_s = { warn = 900 }                      # seconds the last run took
    ```

    A catch-up window (many units in one) is judged as usual windows (`state/health.py`): `too_late` per unit of
    output, `duration_s` with a catch-up counted at its seconds per usual window.
    """

    windows: PositiveInt = 7  # how many of the latest windows the per-window checks look at
    lag: Threshold = Field(default_factory=Threshold)
    timed_out_share: Threshold = Field(default_factory=Threshold)
    too_late: Threshold = Field(default_factory=Threshold)
    freshness_hours: Threshold = Field(default_factory=Threshold)
    duration_s: Threshold = Field(default_factory=Threshold)
    last_run: FailedRun = FailedRun.ERROR  # a last run that failed or was cancelled
