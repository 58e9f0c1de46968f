"""TimeUnit and the pure unit helpers; open read bounds; JoinType outcomes; one table of join kinds. No Spark."""

from __future__ import annotations

import datetime as dt

import pytest

from deltainc.errors import ConfigError
from deltainc.join.options import COUNTED_ORDER, JoinType, canonical_how, normalize_how
from deltainc.join.windows import Bounds, Window, chunk_windows, open_read_bounds, read_bounds
from deltainc.time_units import EPOCH, EPOCH_DAY, TimeUnit, day_of, day_units, to_index, unit_label, unit_seconds

pytestmark = pytest.mark.pure

# 2025-03-01 is day 20148 (tests/join/test_windows.py counts it by hand): hour 483552, minute 29013120.
MAR_1_2025 = 20148


@pytest.mark.parametrize(
    ("unit", "value", "seconds", "per_day"),
    [
        (TimeUnit.DAY, "day", 86400, 1),
        (TimeUnit.HOUR, "hour", 3600, 24),
        (TimeUnit.MINUTE, "minute", 60, 1440),
    ],
)
def test_a_time_unit_is_its_string_with_its_seconds(unit: TimeUnit, value: str, seconds: int, per_day: int) -> None:
    assert unit == value
    assert (str(unit), f"{unit}", f"{unit:>7}") == (value, value, f"{value:>7}")
    assert (unit.seconds, unit.per_day, unit_seconds(value)) == (seconds, per_day, seconds)
    assert TimeUnit.parse(value) is unit
    assert TimeUnit.parse(unit) is unit
    assert {value: 1}[unit] == 1


@pytest.mark.parametrize("value", ["week", "Day", "", None, 1])
def test_parse_rejects_what_names_no_unit(value: object) -> None:
    with pytest.raises(ConfigError, match=rf"^time_uom: expected one of day, hour, minute, got {value!r}$"):
        TimeUnit.parse(value)  # type: ignore[arg-type]


def test_the_epoch_is_unit_zero_of_every_unit() -> None:
    assert EPOCH_DAY == EPOCH.date() == dt.date(1970, 1, 1)
    assert [to_index(EPOCH, unit) for unit in TimeUnit] == [0, 0, 0]


@pytest.mark.parametrize(
    ("index", "unit", "expected"),
    [
        (MAR_1_2025, "day", dt.date(2025, 3, 1)),
        (MAR_1_2025 * 24 + 23, "hour", dt.date(2025, 3, 1)),
        (MAR_1_2025 * 24 + 24, "hour", dt.date(2025, 3, 2)),
        (-1, "hour", dt.date(1969, 12, 31)),
        (MAR_1_2025 * 1440 + 1439, "minute", dt.date(2025, 3, 1)),
        (-1441, "minute", dt.date(1969, 12, 30)),
    ],
)
def test_day_of_gives_the_calendar_day_of_a_unit(index: int, unit: str, expected: dt.date) -> None:
    assert day_of(index, unit) == expected


@pytest.mark.parametrize(
    ("unit", "expected"),
    [
        ("day", (MAR_1_2025, MAR_1_2025)),
        ("hour", (MAR_1_2025 * 24, MAR_1_2025 * 24 + 23)),
        ("minute", (MAR_1_2025 * 1440, MAR_1_2025 * 1440 + 1439)),
    ],
)
def test_day_units_gives_the_first_and_the_last_unit_of_a_day(unit: str, expected: tuple[int, int]) -> None:
    assert day_units(dt.date(2025, 3, 1), unit) == expected


@pytest.mark.parametrize(
    ("index", "unit", "expected"),
    [
        (MAR_1_2025, "day", "2025-03-01"),
        (MAR_1_2025 * 24 + 13, "hour", "2025-03-01T13:00:00"),
        (MAR_1_2025 * 1440 + 61, "minute", "2025-03-01T01:01:00"),
        (None, "day", None),
    ],
)
def test_a_unit_is_written_as_an_iso_date_or_datetime_and_no_unit_as_none(
    index: int | None, unit: str, expected: str | None
) -> None:
    assert unit_label(index, unit) == expected


def test_chunk_windows_in_minutes_cut_at_midnight() -> None:
    first, last = MAR_1_2025 * 1440 + 1438, MAR_1_2025 * 1440 + 1441  # 2025-03-01T23:58 .. 2025-03-02T00:01
    assert chunk_windows(Window(first, last, "minute"), "day") == [
        Window(first, MAR_1_2025 * 1440 + 1439, "minute"),
        Window(MAR_1_2025 * 1440 + 1440, last, "minute"),
    ]


def test_a_window_takes_its_unit_as_a_time_unit() -> None:
    assert Window(1, 2, "hour").time_uom is TimeUnit.HOUR
    with pytest.raises(ConfigError, match=r"^time_uom: expected one of day, hour, minute, got 'week'$"):
        Window(1, 2, "week")


# --- read bounds with open ends and with B waiting (the engine's) -------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "b_waits", "expected"),
    [
        # lb = 2, mw = 3: A in [s - 3, e] ([s - 5, e] when B waits), B in [s - 5, e]; an open end stays open
        (10, 12, False, Bounds(7, 12, 5, 12)),
        (10, 12, True, Bounds(5, 12, 5, 12)),
        (None, 12, False, Bounds(None, 12, None, 12)),
        (10, None, False, Bounds(7, None, 5, None)),
        (10, None, True, Bounds(5, None, 5, None)),
        (None, None, True, Bounds(None, None, None, None)),
    ],
)
def test_open_read_bounds(start: int | None, end: int | None, b_waits: bool, expected: Bounds[int | None]) -> None:
    assert open_read_bounds(start, end, 2, 3, b_waits) == expected


def test_read_bounds_of_a_window_are_its_open_read_bounds() -> None:
    for b_waits in (False, True):
        assert read_bounds(Window(10, 12), 2, 3, b_waits) == open_read_bounds(10, 12, 2, 3, b_waits)


# --- JoinType outcomes and join kinds -------------------------------------------------------------------------------


def test_each_join_type_has_its_outcome_and_outcomes_are_counted_in_order() -> None:
    assert JoinType.SAME_TIME.outcome == "same_time"
    assert JoinType.A_TIMED_OUT.outcome == "a_timed_out"
    assert [code.outcome for code in COUNTED_ORDER] == [
        "same_time",
        "a_late",
        "b_late",
        "a_timed_out",
        "a_waiting",
        "not_matched",
        "b_waiting",
        "provisional",
    ]
    assert sorted(COUNTED_ORDER) == list(JoinType)  # every code is counted


@pytest.mark.parametrize(
    ("how", "expected"),
    [("LEFT_OUTER", "left"), (" full ", "full_outer"), ("anti", "left_anti"), ("As_Of", "asof"), ("right", None)],
)
def test_one_table_of_join_kinds(how: str, expected: str | None) -> None:
    assert canonical_how(how) == expected
    if expected is not None:
        assert normalize_how(how) == expected
