"""Time units and windows over them, pure Python (no Spark): a join's `time_uom`, unit indexes <-> dates and
timestamps, output windows, read bounds, the next window, chunks.

Every instant is handled as an integer index of `time_uom` units since the epoch, 1970-01-01 00:00 UTC (a naive
datetime counts as UTC), so that the engine, the controller and the tests share one exact arithmetic. The
Spark expressions of the same arithmetic are in `deltainc.join.columns`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from enum import Enum
from typing import Generic, TypeVar

from deltainc.errors import ConfigError

__all__ = [
    "TimeUnit",
    "EPOCH",
    "EPOCH_DAY",
    "unit_seconds",
    "to_index",
    "from_index",
    "parse_point",
    "day_of",
    "day_units",
    "whole_units_through",
    "Window",
    "Bounds",
    "ReadBounds",
    "OpenReadBounds",
    "read_bounds",
    "open_read_bounds",
    "next_window",
    "Pending",
    "pending_range",
    "chunk_windows",
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


_Unit = TypeVar("_Unit", int, int | None)  # a unit index; None = open (unbounded)


@dataclass(frozen=True, repr=False)
class Window:
    """An inclusive output window [start, end] in unit indexes; shown as dates (or timestamps) of its unit."""

    start: int
    end: int
    time_uom: TimeUnit | str = TimeUnit.DAY

    def __post_init__(self) -> None:
        object.__setattr__(self, "time_uom", TimeUnit.parse(self.time_uom))
        if self.start > self.end:
            raise ConfigError(f"output window: start {self.label(self.start)} is after end {self.label(self.end)}")

    @property
    def units(self) -> int:
        """How many units the window spans."""
        return self.end - self.start + 1

    def label(self, index: int) -> str:
        return from_index(index, self.time_uom).isoformat()

    @property
    def first(self) -> dt.date | dt.datetime:
        """The window's first unit as a date (day) or a timestamp (hour, minute)."""
        return from_index(self.start, self.time_uom)

    @property
    def last(self) -> dt.date | dt.datetime:
        """The window's last unit as a date (day) or a timestamp (hour, minute)."""
        return from_index(self.end, self.time_uom)

    def __str__(self) -> str:
        if self.start == self.end:
            return self.label(self.start)
        return f"{self.label(self.start)}..{self.label(self.end)}"

    def __repr__(self) -> str:
        return f"Window({self}, {self.units} {TimeUnit.parse(self.time_uom).value}{'s' if self.units != 1 else ''})"


@dataclass(frozen=True)
class Bounds(Generic[_Unit]):
    """The inclusive ranges of RecDate a join for one output window needs from A and from B
    (docs/design.md#what-a-window-reads)."""

    a_start: _Unit
    a_end: _Unit
    b_start: _Unit
    b_end: _Unit


ReadBounds = Bounds[int]  # a window's
OpenReadBounds = Bounds[int | None]  # an output window's whose start or end may be open (None)


def _before(point: _Unit, units: int) -> _Unit:
    return None if point is None else point - units


def open_read_bounds(
    start: _Unit, end: _Unit, look_back_time: int, max_waiting_time: int, b_waits_for_a: bool = False
) -> Bounds[_Unit]:
    """What a join of the output window [start, end] reads; an open end (None) reads without that bound.

    A in [s - mw, e], B in [s - lb - mw, e]; never after e. When unmatched B rows wait for an A row (full_outer
    with `b_waits_for_a`), A in [s - lb - mw, e]: a B row output in W has b.RecDate >= s - lb, and every A row
    that can match it is in [b.RecDate - mw, e].
    """
    if look_back_time < 0 or max_waiting_time < 0:
        raise ConfigError("look_back_time and max_waiting_time must be >= 0")
    b_reach = look_back_time + max_waiting_time
    a_reach = b_reach if b_waits_for_a else max_waiting_time
    return Bounds(_before(start, a_reach), end, _before(start, b_reach), end)


def read_bounds(window: Window, look_back_time: int, max_waiting_time: int, b_waits_for_a: bool = False) -> ReadBounds:
    """`open_read_bounds` of a window: A in [s - mw, e] ([s - lb - mw, e] when B waits), B in [s - lb - mw, e]."""
    return open_read_bounds(window.start, window.end, look_back_time, max_waiting_time, b_waits_for_a)


def next_window(
    watermark: int | None,
    start: int,
    latest_available: int | None,
    until: int | None = None,
    max_window: int = 0,
    time_uom: TimeUnit | str = TimeUnit.DAY,
) -> Window | None:
    """The next window to process, or None when nothing is pending.

    It starts the unit after the watermark (or at `start` on the first run) and ends at the latest unit
    available in both sources, capped by `until` and by `max_window` units (0 = no cap).
    """
    if max_window < 0:
        raise ConfigError(f"max_window: expected >= 0, got {max_window}")
    first = start if watermark is None else max(watermark + 1, start)
    if latest_available is None:
        return None
    last = latest_available if until is None else min(latest_available, until)
    if max_window:
        last = min(last, first + max_window - 1)
    if last < first:
        return None
    return Window(first, last, time_uom)


@dataclass(frozen=True)
class Pending:
    """All a run would process now: the whole range, how many windows `max_window` cuts it into, the first."""

    whole: Window
    windows: int
    next: Window


def pending_range(
    watermark: int | None, start: int, latest: int | None, until: int | None, max_window: int, time_uom: TimeUnit | str
) -> Pending | None:
    """The pending range after `watermark` (None when nothing is pending), for status and validate; the arguments
    are `next_window`'s."""
    first = next_window(watermark, start, latest, until, max_window, time_uom)
    whole = next_window(watermark, start, latest, until, 0, time_uom)
    if first is None or whole is None:
        return None
    windows = -(-whole.units // max_window) if max_window else 1
    return Pending(whole, windows, first)


def _next_chunk(day: dt.date, chunk: str) -> dt.date:
    """The first day of the chunk after the one `day` lies in."""
    if chunk == "day":
        return day + dt.timedelta(days=1)
    if chunk == "month":
        return (day.replace(day=1) + dt.timedelta(days=32)).replace(day=1)
    return dt.date(day.year + 1, 1, 1)


def chunk_windows(window: Window, chunk: str) -> list[Window]:
    """Split a window into consecutive chunks aligned on calendar days, months or years ('all' = one)."""
    if chunk not in ("day", "month", "year", "all"):
        raise ConfigError(f"chunk: expected one of day, month, year, all, got {chunk!r}")
    if chunk == "all":
        return [window]
    chunks: list[Window] = []
    cursor = window.start
    while cursor <= window.end:
        boundary, _ = day_units(_next_chunk(day_of(cursor, window.time_uom), chunk), window.time_uom)
        last = min(boundary - 1, window.end)
        chunks.append(Window(cursor, last, window.time_uom))
        cursor = last + 1
    return chunks
