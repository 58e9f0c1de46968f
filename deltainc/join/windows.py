"""Pure window arithmetic: time units, output windows, read bounds, next window, chunks. No Spark here.

Every instant is handled as an integer index of `time_uom` units since 1970-01-01 (UTC), so that the
engine, the controller and the tests share one exact arithmetic.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Literal

from deltainc.errors import ConfigError

__all__ = [
    "TimeUom",
    "TIME_UOMS",
    "Window",
    "ReadBounds",
    "to_index",
    "from_index",
    "parse_point",
    "read_bounds",
    "next_window",
    "Pending",
    "pending_range",
    "chunk_windows",
]

TimeUom = Literal["day", "hour", "minute"]
TIME_UOMS: tuple[str, ...] = ("day", "hour", "minute")
Chunk = Literal["day", "month", "year", "all"]

_EPOCH_DAY = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1)
_UNIT_SECONDS = {"day": 86400, "hour": 3600, "minute": 60}


def unit_seconds(time_uom: str) -> int:
    """How many seconds one unit of `time_uom` lasts."""
    _check_uom(time_uom)
    return _UNIT_SECONDS[time_uom]


def _check_uom(time_uom: str) -> None:
    if time_uom not in TIME_UOMS:
        raise ConfigError(f"time_uom: expected one of {', '.join(TIME_UOMS)}, got {time_uom!r}")


def to_index(point: dt.date | dt.datetime, time_uom: str = "day") -> int:
    """The unit index of a date or datetime (naive = UTC), truncated to the unit."""
    _check_uom(time_uom)
    if isinstance(point, dt.datetime):
        if point.tzinfo is not None:
            point = point.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return (point - _EPOCH) // dt.timedelta(seconds=_UNIT_SECONDS[time_uom])
    if isinstance(point, dt.date):
        return (point - _EPOCH_DAY).days * (_UNIT_SECONDS["day"] // _UNIT_SECONDS[time_uom])
    raise ConfigError(f"expected a date or datetime, got {type(point).__name__} {point!r}")


def from_index(index: int, time_uom: str = "day") -> dt.date | dt.datetime:
    """The first instant of unit `index`: a date for days, a naive UTC datetime for hours and minutes."""
    _check_uom(time_uom)
    if time_uom == "day":
        return _EPOCH_DAY + dt.timedelta(days=index)
    return _EPOCH + dt.timedelta(seconds=index * _UNIT_SECONDS[time_uom])


def parse_point(value: str | dt.date | dt.datetime, field: str, time_uom: str = "day") -> int:
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


@dataclass(frozen=True)
class Window:
    """An inclusive output window [start, end] in unit indexes."""

    start: int
    end: int
    time_uom: str = "day"

    def __post_init__(self) -> None:
        if self.start > self.end:
            raise ConfigError(f"output window: start {self.label(self.start)} is after end {self.label(self.end)}")

    @property
    def units(self) -> int:
        """How many units the window spans."""
        return self.end - self.start + 1

    def label(self, index: int) -> str:
        return from_index(index, self.time_uom).isoformat()

    def __str__(self) -> str:
        if self.start == self.end:
            return self.label(self.start)
        return f"{self.label(self.start)}..{self.label(self.end)}"


@dataclass(frozen=True)
class ReadBounds:
    """The inclusive ranges of RecDate a run for one window needs from A and from B (DESIGN.md 3)."""

    a_start: int
    a_end: int
    b_start: int
    b_end: int


def read_bounds(window: Window, look_back_time: int, max_waiting_time: int) -> ReadBounds:
    """A in [s - mw, e], B in [s - lb - mw, e]; never after e."""
    if look_back_time < 0 or max_waiting_time < 0:
        raise ConfigError("look_back_time and max_waiting_time must be >= 0")
    return ReadBounds(
        a_start=window.start - max_waiting_time,
        a_end=window.end,
        b_start=window.start - look_back_time - max_waiting_time,
        b_end=window.end,
    )


def next_window(
    watermark: int | None,
    start: int,
    latest_available: int | None,
    until: int | None = None,
    max_window: int = 0,
    time_uom: str = "day",
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
    watermark: int | None,
    start: int,
    latest_available: int | None,
    until: int | None = None,
    max_window: int = 0,
    time_uom: str = "day",
) -> Pending | None:
    """The pending range after `watermark` (None when nothing is pending), for status and validate."""
    first = next_window(watermark, start, latest_available, until, max_window, time_uom)
    whole = next_window(watermark, start, latest_available, until, 0, time_uom)
    if first is None or whole is None:
        return None
    windows = -(-whole.units // max_window) if max_window else 1
    return Pending(whole, windows, first)


def _month_start(day: dt.date) -> dt.date:
    return day.replace(day=1)


def chunk_windows(window: Window, chunk: str) -> list[Window]:
    """Split a window into consecutive chunks aligned on calendar days, months or years ('all' = one)."""
    if chunk not in ("day", "month", "year", "all"):
        raise ConfigError(f"chunk: expected one of day, month, year, all, got {chunk!r}")
    if chunk == "all":
        return [window]
    per_day = 1 if window.time_uom == "day" else 24
    chunks: list[Window] = []
    cursor = window.start
    while cursor <= window.end:
        first_day = dt.date(1970, 1, 1) + dt.timedelta(days=cursor // per_day)
        if chunk == "day":
            next_day = first_day + dt.timedelta(days=1)
        elif chunk == "month":
            next_day = (_month_start(first_day) + dt.timedelta(days=32)).replace(day=1)
        else:
            next_day = dt.date(first_day.year + 1, 1, 1)
        boundary = (next_day - dt.date(1970, 1, 1)).days * per_day
        last = min(boundary - 1, window.end)
        chunks.append(Window(cursor, last, window.time_uom))
        cursor = last + 1
    return chunks
