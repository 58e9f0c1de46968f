"""Windows over time units (`deltainc.time_units`), pure Python (no Spark): output windows, read bounds, the
next window, chunks. The Spark expressions of the same arithmetic are in `deltainc.join.columns`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Generic, TypeVar

from deltainc.errors import ConfigError
from deltainc.time_units import TimeUnit, day_of, day_units, from_index, unit_label

__all__ = [
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
        return unit_label(index, self.time_uom)

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
