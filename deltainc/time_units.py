"""Time units, pure Python: a job's `time_uom` (day, hour, minute) and the integer unit indexes every instant
is handled as, units since the epoch 1970-01-01 00:00 UTC (a naive datetime counts as UTC), so that the engine,
the controller and the tests share one exact arithmetic; and a unit's label, the one way a unit is written.
"""

from __future__ import annotations

import datetime as dt
from enum import Enum
from typing import overload

from deltainc.errors import ConfigError

__all__ = [
    "EPOCH",
    "EPOCH_DAY",
    "TimeUnit",
    "unit_seconds",
    "to_index",
    "from_index",
    "unit_label",
    "parse_point",
    "day_of",
    "day_units",
    "whole_units_through",
]


EPOCH = dt.datetime(1970, 1, 1)  # unit index 0 of every unit (naive = UTC)


EPOCH_DAY = EPOCH.date()


_SECONDS = {"day": 86400, "hour": 3600, "minute": 60}


class TimeUnit(str, Enum):
    """The unit of a join's times (`time_uom`), in the spirit of dbt's BatchSize.

    A str enum: TimeUnit.DAY == "day", so strings keep working wherever a unit is expected, and a unit shows and
    formats as its plain value. Rows written with Spark take `.value` (Spark's unpickler knows no enums).

    Example:
        ```python
        from deltainc import TimeUnit

        assert TimeUnit.HOUR == "hour" and TimeUnit("day") is TimeUnit.DAY
        ```
    """

    DAY = "day"
    HOUR = "hour"
    MINUTE = "minute"

    @property
    def seconds(self) -> int:
        """How many seconds one unit lasts."""
        return _SECONDS[self.value]

    @property
    def per_day(self) -> int:
        """How many units one (UTC) day has."""
        return _SECONDS["day"] // self.seconds

    @classmethod
    def unknown(cls, value: object) -> str:
        """The message for a value that names no unit."""
        return f"expected one of {', '.join(unit.value for unit in cls)}, got {value!r}"

    @classmethod
    def parse(cls, value: TimeUnit | str) -> TimeUnit:
        """The unit named `value` ("day", "hour", "minute" or a TimeUnit); a ConfigError naming time_uom otherwise."""
        try:
            return cls(value)
        except ValueError:
            raise ConfigError(f"time_uom: {cls.unknown(value)}") from None

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


def unit_seconds(time_uom: TimeUnit | str) -> int:
    """How many seconds one unit of `time_uom` lasts."""
    return TimeUnit.parse(time_uom).seconds


def to_index(point: dt.date | dt.datetime, time_uom: TimeUnit | str = TimeUnit.DAY) -> int:
    """The unit index of a date or datetime (naive = UTC), truncated to the unit."""
    unit = TimeUnit.parse(time_uom)
    if isinstance(point, dt.datetime):
        if point.tzinfo is not None:
            point = point.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return (point - EPOCH) // dt.timedelta(seconds=unit.seconds)
    if isinstance(point, dt.date):
        return (point - EPOCH_DAY).days * unit.per_day
    raise ConfigError(f"expected a date or datetime, got {type(point).__name__} {point!r}")


def from_index(index: int, time_uom: TimeUnit | str = TimeUnit.DAY) -> dt.date | dt.datetime:
    """The first instant of unit `index`: a date for days, a naive UTC datetime for hours and minutes."""
    unit = TimeUnit.parse(time_uom)
    if unit is TimeUnit.DAY:
        return EPOCH_DAY + dt.timedelta(days=index)
    return EPOCH + dt.timedelta(seconds=index * unit.seconds)


@overload
def unit_label(index: int, time_uom: TimeUnit | str = ...) -> str: ...
@overload
def unit_label(index: None, time_uom: TimeUnit | str = ...) -> None: ...
def unit_label(index: int | None, time_uom: TimeUnit | str = TimeUnit.DAY) -> str | None:
    """Unit `index` as users read it, the one way a unit is written: an ISO date for days, an ISO datetime for
    hours and minutes; None (no unit: never run, no rows) stays None.

    Example: `unit_label(20089)` is `"2025-01-01"`; `unit_label(None) or "none"` is `"none"`.
    """
    return None if index is None else from_index(index, time_uom).isoformat()


def parse_point(value: str | dt.date | dt.datetime, field: str, time_uom: TimeUnit | str = TimeUnit.DAY) -> int:
    """Parse a user-given point in time ('2025-03-07', '2025-03-07T10:00', a date) to a unit index."""
    if isinstance(value, (dt.date, dt.datetime)):
        return to_index(value, time_uom)
    try:
        parsed: dt.date | dt.datetime = (
            dt.date.fromisoformat(value) if len(value) == 10 else dt.datetime.fromisoformat(value)
        )
    except (TypeError, ValueError):
        raise ConfigError(f"{field}: expected a date like 2025-03-07, got {value!r}") from None
    return to_index(parsed, time_uom)


def day_of(index: int, time_uom: TimeUnit | str = TimeUnit.DAY) -> dt.date:
    """The calendar day (UTC) that unit `index` lies in."""
    return EPOCH_DAY + dt.timedelta(days=index // TimeUnit.parse(time_uom).per_day)


def day_units(day: dt.date, time_uom: TimeUnit | str = TimeUnit.DAY) -> tuple[int, int]:
    """The first and the last unit index of a calendar day (UTC)."""
    unit = TimeUnit.parse(time_uom)
    first = to_index(day, unit)
    return first, first + unit.per_day - 1


def whole_units_through(watermark: int, finer: TimeUnit | str, uom: TimeUnit | str) -> int:
    """The last unit of `uom` whose every unit of `finer` is at or before `watermark` (a unit of `finer`): how far
    a day job reads an hour job's target once that job's watermark is `watermark`.

    Example: ``whole_units_through(23, "hour", "day") == 0`` (hour 23 ends day 0); ``whole_units_through(22,
    "hour", "day") == -1``.
    """
    ratio = TimeUnit.parse(uom).seconds // TimeUnit.parse(finer).seconds
    return (watermark + 1) // ratio - 1
