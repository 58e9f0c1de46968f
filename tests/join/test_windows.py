"""Window arithmetic: tables of input -> expected output, every expected value worked out by hand."""

from __future__ import annotations

import datetime as dt

import pytest

from deltainc.errors import ConfigError
from deltainc.join.windows import ReadBounds, Window, chunk_windows, next_window, read_bounds
from deltainc.time_units import from_index, parse_point, to_index

pytestmark = pytest.mark.pure

# Anchors, counted by hand from 1970-01-01 (= day 0):
#   2000-01-01 = 30 * 365 + 7 leap days (72, 76, 80, 84, 88, 92, 96)       = 10957
#   2025-01-01 = 10957 + 25 * 365 + 7 leap days (2000, 04, 08, 12, 16, 20, 24) = 20089
#   2025-03-01 = 20089 + 31 (Jan) + 28 (Feb)                                = 20148, hour 20148 * 24 = 483552
#   2024-02-29 = 20089 - 366 (2024) + 31 (Jan) + 28                          = 19782
#   9999-12-31 = ordinal 3652059 - ordinal of 1970-01-01 (719163)            = 2932896, hour 70389504
MAR_1_2025 = 20148
MAR_1_2025_H = 483552
FEB_29_2024 = 19782
DEC_31_9999 = 2932896
UTC_PLUS_2 = dt.timezone(dt.timedelta(hours=2))


def day(text: str) -> int:
    """Day index of an ISO date, straight from the definition (days since 1970-01-01)."""
    return (dt.date.fromisoformat(text) - dt.date(1970, 1, 1)).days


def hour(text: str) -> int:
    """Hour index of a naive ISO datetime, straight from the definition (hours since 1970-01-01T00)."""
    return (dt.datetime.fromisoformat(text) - dt.datetime(1970, 1, 1)) // dt.timedelta(hours=1)


def test_the_helpers_agree_with_the_hand_counted_anchors() -> None:
    assert day("2025-03-01") == MAR_1_2025
    assert day("2024-02-29") == FEB_29_2024
    assert hour("2025-03-01T00:00") == MAR_1_2025_H


# --- to_index / from_index ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("point", "time_uom", "expected"),
    [
        (dt.date(1970, 1, 1), "day", 0),
        (dt.date(1970, 1, 2), "day", 1),
        (dt.date(1969, 12, 31), "day", -1),
        (dt.date(2000, 1, 1), "day", 10957),
        (dt.date(2025, 3, 1), "day", MAR_1_2025),
        (dt.date(2024, 2, 29), "day", FEB_29_2024),
        (dt.datetime(2025, 3, 1, 0, 0), "day", MAR_1_2025),
        (dt.datetime(2025, 3, 1, 23, 59, 59, 999999), "day", MAR_1_2025),
        (dt.datetime(1969, 12, 31, 23, 0), "day", -1),
        # the last microsecond of a unit stays in it, even far from 1970 (float seconds rounded up)
        (dt.datetime(9999, 12, 31, 23, 59, 59, 999999), "day", DEC_31_9999),
        (dt.date(1970, 1, 1), "hour", 0),
        (dt.date(1970, 1, 2), "hour", 24),
        (dt.date(2025, 3, 1), "hour", MAR_1_2025_H),
        (dt.datetime(1970, 1, 1, 23, 59, 59), "hour", 23),
        (dt.datetime(2025, 3, 1, 10, 30), "hour", MAR_1_2025_H + 10),
        (dt.datetime(1969, 12, 31, 23, 30), "hour", -1),
        (dt.datetime(9999, 12, 31, 23, 59, 59, 999999), "hour", DEC_31_9999 * 24 + 23),
        (dt.date(2025, 3, 1), "minute", MAR_1_2025_H * 60),
        (dt.datetime(2025, 3, 1, 10, 42, 59), "minute", MAR_1_2025_H * 60 + 10 * 60 + 42),
        (dt.datetime(1969, 12, 31, 23, 59, 30), "minute", -1),
    ],
)
def test_to_index_counts_whole_units_since_1970(point: dt.date, time_uom: str, expected: int) -> None:
    assert to_index(point, time_uom) == expected


@pytest.mark.parametrize(
    ("point", "time_uom", "expected"),
    [
        # 2025-03-01 01:30 at UTC+2 is 2025-02-28 23:30 UTC: the previous day, hour 23 of it.
        (dt.datetime(2025, 3, 1, 1, 30, tzinfo=UTC_PLUS_2), "day", MAR_1_2025 - 1),
        (dt.datetime(2025, 3, 1, 1, 30, tzinfo=UTC_PLUS_2), "hour", MAR_1_2025_H - 1),
        (dt.datetime(2025, 3, 1, 10, 0, tzinfo=dt.timezone.utc), "hour", MAR_1_2025_H + 10),
        # 2025-03-01 22:00 at UTC-5 is 2025-03-02 03:00 UTC.
        (dt.datetime(2025, 3, 1, 22, 0, tzinfo=dt.timezone(dt.timedelta(hours=-5))), "day", MAR_1_2025 + 1),
    ],
)
def test_to_index_converts_an_aware_datetime_to_utc(point: dt.datetime, time_uom: str, expected: int) -> None:
    assert to_index(point, time_uom) == expected


def test_to_index_rejects_an_unknown_time_uom() -> None:
    with pytest.raises(ConfigError, match=r"time_uom: expected one of day, hour, minute, got 'week'"):
        to_index(dt.date(2025, 3, 1), "week")


@pytest.mark.parametrize("point", ["2025-03-01", 20148, None])
def test_to_index_rejects_what_is_not_a_date(point: object) -> None:
    with pytest.raises(ConfigError, match=r"expected a date or datetime, got "):
        to_index(point, "day")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("index", "time_uom", "expected"),
    [
        (0, "day", dt.date(1970, 1, 1)),
        (-1, "day", dt.date(1969, 12, 31)),
        (MAR_1_2025, "day", dt.date(2025, 3, 1)),
        (FEB_29_2024, "day", dt.date(2024, 2, 29)),
        (FEB_29_2024 + 1, "day", dt.date(2024, 3, 1)),
        (0, "hour", dt.datetime(1970, 1, 1, 0)),
        (24, "hour", dt.datetime(1970, 1, 2, 0)),
        (-1, "hour", dt.datetime(1969, 12, 31, 23)),
        (MAR_1_2025_H + 10, "hour", dt.datetime(2025, 3, 1, 10)),
        (0, "minute", dt.datetime(1970, 1, 1, 0, 0)),
        (-1, "minute", dt.datetime(1969, 12, 31, 23, 59)),
        (MAR_1_2025_H * 60 + 10 * 60 + 42, "minute", dt.datetime(2025, 3, 1, 10, 42)),
    ],
)
def test_from_index_gives_the_first_instant_of_the_unit(index: int, time_uom: str, expected: dt.date) -> None:
    result = from_index(index, time_uom)
    assert result == expected
    assert type(result) is type(expected)


def test_from_index_rejects_an_unknown_time_uom() -> None:
    with pytest.raises(ConfigError, match=r"time_uom: expected one of day, hour, minute, got 'second'"):
        from_index(0, "second")


# --- parse_point ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "time_uom", "expected"),
    [
        ("2025-03-01", "day", MAR_1_2025),
        ("2025-03-01", "hour", MAR_1_2025_H),
        ("2025-03-01T10:30", "day", MAR_1_2025),
        ("2025-03-01T10:30", "hour", MAR_1_2025_H + 10),
        ("2025-03-01T10:30", "minute", (MAR_1_2025_H + 10) * 60 + 30),
        ("2025-03-01T01:30+02:00", "minute", (MAR_1_2025_H - 1) * 60 + 30),
        ("2025-03-01 10:30:00", "hour", MAR_1_2025_H + 10),
        ("2025-03-01T01:30+02:00", "hour", MAR_1_2025_H - 1),
        (dt.date(2025, 3, 1), "day", MAR_1_2025),
        (dt.datetime(2025, 3, 1, 10), "hour", MAR_1_2025_H + 10),
    ],
)
def test_parse_point_reads_dates_and_datetimes(value: str | dt.date, time_uom: str, expected: int) -> None:
    assert parse_point(value, "--until", time_uom) == expected


@pytest.mark.parametrize("value", ["yesterday", "", "2025-3-1", "2025-02-30", "2025-03-01T25:00", "01/03/2025"])
def test_parse_point_error_names_the_field_and_the_value(value: str) -> None:
    with pytest.raises(ConfigError, match=rf"^--until: expected a date like 2025-03-07, got '{value}'$"):
        parse_point(value, "--until")


def test_parse_point_rejects_a_number() -> None:
    with pytest.raises(ConfigError, match=r"^start: expected a date like 2025-03-07, got 20250301$"):
        parse_point(20250301, "start")  # type: ignore[arg-type]


# --- Window ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "time_uom", "units", "text"),
    [
        (MAR_1_2025, MAR_1_2025, "day", 1, "2025-03-01"),
        (MAR_1_2025, MAR_1_2025 + 2, "day", 3, "2025-03-01..2025-03-03"),
        (FEB_29_2024 - 1, FEB_29_2024 + 1, "day", 3, "2024-02-28..2024-03-01"),
        (MAR_1_2025_H + 10, MAR_1_2025_H + 10, "hour", 1, "2025-03-01T10:00:00"),
        (MAR_1_2025_H - 1, MAR_1_2025_H, "hour", 2, "2025-02-28T23:00:00..2025-03-01T00:00:00"),
    ],
)
def test_window_spans_inclusive_units_and_prints_its_dates(
    start: int, end: int, time_uom: str, units: int, text: str
) -> None:
    window = Window(start, end, time_uom)
    assert window.units == units
    assert str(window) == text
    assert repr(window) == f"Window({text}, {units} {time_uom}{'s' if units > 1 else ''})"  # no unit numbers
    assert (window.first.isoformat(), window.last.isoformat()) == (text.split("..")[0], text.split("..")[-1])


@pytest.mark.parametrize(
    ("start", "end", "time_uom", "message"),
    [
        (MAR_1_2025, MAR_1_2025 - 1, "day", "start 2025-03-01 is after end 2025-02-28"),
        (5, 3, "day", "start 1970-01-06 is after end 1970-01-04"),
        (
            MAR_1_2025_H + 10,
            MAR_1_2025_H + 9,
            "hour",
            "start 2025-03-01T10:00:00 is after end 2025-03-01T09:00:00",
        ),
    ],
)
def test_window_rejects_start_after_end_naming_both(start: int, end: int, time_uom: str, message: str) -> None:
    with pytest.raises(ConfigError, match=rf"^output window: {message}$"):
        Window(start, end, time_uom)


def test_window_is_frozen() -> None:
    window = Window(1, 2)
    with pytest.raises(AttributeError):
        window.start = 0  # type: ignore[misc]


# --- read_bounds ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "lb", "mw", "expected"),
    [
        # A in [s - mw, e], B in [s - lb - mw, e]
        (10, 10, 0, 0, ReadBounds(a_start=10, a_end=10, b_start=10, b_end=10)),
        (10, 12, 2, 11, ReadBounds(a_start=-1, a_end=12, b_start=-3, b_end=12)),
        (100, 130, 3, 0, ReadBounds(a_start=100, a_end=130, b_start=97, b_end=130)),
        (20, 20, 0, 5, ReadBounds(a_start=15, a_end=20, b_start=15, b_end=20)),
        (MAR_1_2025, MAR_1_2025, 2, 11, ReadBounds(MAR_1_2025 - 11, MAR_1_2025, MAR_1_2025 - 13, MAR_1_2025)),
    ],
)
def test_read_bounds_reach_back_by_lb_and_mw_and_never_past_the_end(
    start: int, end: int, lb: int, mw: int, expected: ReadBounds
) -> None:
    assert read_bounds(Window(start, end), lb, mw) == expected


@pytest.mark.parametrize(("lb", "mw"), [(-1, 0), (0, -1), (-2, -3)])
def test_read_bounds_rejects_negative_tolerances(lb: int, mw: int) -> None:
    with pytest.raises(ConfigError, match=r"look_back_time and max_waiting_time must be >= 0"):
        read_bounds(Window(10, 12), lb, mw)


# --- next_window ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("watermark", "start", "latest", "until", "max_window", "expected"),
    [
        # first run: from start to the latest data
        (None, 10, 15, None, 0, (10, 15)),
        (None, 10, 10, None, 0, (10, 10)),
        (None, 10, 9, None, 0, None),
        # later runs: the unit after the watermark
        (12, 10, 15, None, 0, (13, 15)),
        (14, 10, 15, None, 0, (15, 15)),
        (15, 10, 15, None, 0, None),
        (16, 10, 15, None, 0, None),
        # a watermark before start (start_date moved later): start wins
        (5, 10, 15, None, 0, (10, 15)),
        # no data in one of the sources
        (None, 10, None, None, 0, None),
        (12, 10, None, None, 0, None),
        # capped by until
        (12, 10, 20, 16, 0, (13, 16)),
        (12, 10, 20, 13, 0, (13, 13)),
        (12, 10, 20, 12, 0, None),
        (12, 10, 20, 30, 0, (13, 20)),
        (None, 10, 20, 9, 0, None),
        # capped by max_window units
        (12, 10, 20, None, 3, (13, 15)),
        (12, 10, 14, None, 5, (13, 14)),
        (None, 10, 20, None, 1, (10, 10)),
        # both caps: the tighter wins
        (12, 10, 20, 14, 5, (13, 14)),
        (12, 10, 20, 19, 2, (13, 14)),
    ],
)
def test_next_window(
    watermark: int | None,
    start: int,
    latest: int | None,
    until: int | None,
    max_window: int,
    expected: tuple[int, int] | None,
) -> None:
    window = next_window(watermark, start, latest, until=until, max_window=max_window)
    if expected is None:
        assert window is None
    else:
        assert window == Window(expected[0], expected[1], "day")


def test_next_window_keeps_the_time_uom() -> None:
    window = next_window(MAR_1_2025_H + 9, MAR_1_2025_H, MAR_1_2025_H + 12, time_uom="hour")
    assert window == Window(MAR_1_2025_H + 10, MAR_1_2025_H + 12, "hour")
    assert str(window) == "2025-03-01T10:00:00..2025-03-01T12:00:00"


def test_next_window_rejects_a_negative_max_window() -> None:
    with pytest.raises(ConfigError, match=r"^max_window: expected >= 0, got -1$"):
        next_window(None, 10, 15, max_window=-1)


# --- chunk_windows --------------------------------------------------------------------------------


def days(*pairs: tuple[str, str]) -> list[Window]:
    return [Window(day(first), day(last)) for first, last in pairs]


def hours(*pairs: tuple[str, str]) -> list[Window]:
    return [Window(hour(first), hour(last), "hour") for first, last in pairs]


@pytest.mark.parametrize(
    ("first", "last", "chunk", "expected"),
    [
        ("2025-01-15", "2025-03-10", "all", days(("2025-01-15", "2025-03-10"))),
        ("2025-03-01", "2025-03-01", "day", days(("2025-03-01", "2025-03-01"))),
        (
            "2025-02-27",
            "2025-03-02",
            "day",
            days(
                ("2025-02-27", "2025-02-27"),
                ("2025-02-28", "2025-02-28"),
                ("2025-03-01", "2025-03-01"),
                ("2025-03-02", "2025-03-02"),
            ),
        ),
        (
            "2024-02-28",
            "2024-03-01",
            "day",
            days(("2024-02-28", "2024-02-28"), ("2024-02-29", "2024-02-29"), ("2024-03-01", "2024-03-01")),
        ),
        ("2025-04-03", "2025-04-20", "month", days(("2025-04-03", "2025-04-20"))),
        (
            "2025-01-15",
            "2025-03-10",
            "month",
            days(("2025-01-15", "2025-01-31"), ("2025-02-01", "2025-02-28"), ("2025-03-01", "2025-03-10")),
        ),
        (
            "2025-04-01",
            "2025-07-31",
            "month",
            days(
                ("2025-04-01", "2025-04-30"),
                ("2025-05-01", "2025-05-31"),
                ("2025-06-01", "2025-06-30"),
                ("2025-07-01", "2025-07-31"),
            ),
        ),
        # leap year: February has 29 days in 2024 and in 2000, 28 in 2100
        ("2024-02-10", "2024-03-05", "month", days(("2024-02-10", "2024-02-29"), ("2024-03-01", "2024-03-05"))),
        ("2000-02-01", "2000-03-01", "month", days(("2000-02-01", "2000-02-29"), ("2000-03-01", "2000-03-01"))),
        ("2100-02-01", "2100-03-01", "month", days(("2100-02-01", "2100-02-28"), ("2100-03-01", "2100-03-01"))),
        # a window crossing a year
        ("2024-12-20", "2025-01-10", "month", days(("2024-12-20", "2024-12-31"), ("2025-01-01", "2025-01-10"))),
        ("2024-12-31", "2025-01-01", "year", days(("2024-12-31", "2024-12-31"), ("2025-01-01", "2025-01-01"))),
        (
            "2023-06-01",
            "2025-02-01",
            "year",
            days(("2023-06-01", "2023-12-31"), ("2024-01-01", "2024-12-31"), ("2025-01-01", "2025-02-01")),
        ),
        ("2025-03-01", "2025-11-30", "year", days(("2025-03-01", "2025-11-30"))),
        # before 1970: negative indexes
        ("1969-12-15", "1970-01-15", "month", days(("1969-12-15", "1969-12-31"), ("1970-01-01", "1970-01-15"))),
    ],
)
def test_chunk_windows_in_days(first: str, last: str, chunk: str, expected: list[Window]) -> None:
    assert chunk_windows(Window(day(first), day(last)), chunk) == expected


@pytest.mark.parametrize(
    ("first", "last", "chunk", "expected"),
    [
        ("2025-03-01T22:00", "2025-03-02T01:00", "all", hours(("2025-03-01T22:00", "2025-03-02T01:00"))),
        (
            "2025-03-01T22:00",
            "2025-03-02T01:00",
            "day",
            hours(("2025-03-01T22:00", "2025-03-01T23:00"), ("2025-03-02T00:00", "2025-03-02T01:00")),
        ),
        (
            "2024-02-29T20:00",
            "2024-03-01T03:00",
            "month",
            hours(("2024-02-29T20:00", "2024-02-29T23:00"), ("2024-03-01T00:00", "2024-03-01T03:00")),
        ),
        (
            "2024-12-31T23:00",
            "2025-01-01T00:00",
            "year",
            hours(("2024-12-31T23:00", "2024-12-31T23:00"), ("2025-01-01T00:00", "2025-01-01T00:00")),
        ),
    ],
)
def test_chunk_windows_in_hours(first: str, last: str, chunk: str, expected: list[Window]) -> None:
    assert chunk_windows(Window(hour(first), hour(last), "hour"), chunk) == expected


def test_chunk_windows_by_month_cover_a_leap_year_in_twelve_calendar_months() -> None:
    chunks = chunk_windows(Window(day("2024-01-01"), day("2024-12-31")), "month")
    assert [c.units for c in chunks] == [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def test_chunk_windows_rejects_an_unknown_chunk() -> None:
    with pytest.raises(ConfigError, match=r"^chunk: expected one of day, month, year, all, got 'week'$"):
        chunk_windows(Window(1, 2), "week")
