"""Which files may hold one key's rows (`pipeline/delta/key_files.py`): a file is ruled out only by a partition
value or a statistic that excludes the key's value; a bound that is missing or does not compare rules nothing out.
And which runs' commits a key's history reads (`key_history.runs_reaching`). Pure."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from deltainc.pipeline.delta.key_files import as_type_of, may_hold, overlaps
from deltainc.pipeline.explain.key_history import runs_reaching
from deltainc.time_units import TimeUnit, to_index

pytestmark = pytest.mark.pure


def test_a_file_whose_statistics_exclude_the_value_is_ruled_out() -> None:
    assert may_hold(6, low=1, high=5) is False and may_hold(0, low=1, high=5) is False
    assert may_hold(5, low=1, high=5) is True


def test_a_partition_value_other_than_the_key_s_rules_the_file_out() -> None:
    assert may_hold(dt.date(2025, 3, 7), equal="2025-03-08") is False
    assert may_hold(dt.date(2025, 3, 7), equal="2025-03-07") is True


def test_a_bound_that_is_missing_or_does_not_convert_rules_nothing_out() -> None:
    assert may_hold(6) is True
    assert may_hold(6, low="abc", high=None) is True


def test_statistics_are_read_as_the_key_s_type() -> None:
    assert as_type_of("2025-03-07", dt.date(2025, 1, 1)) == dt.date(2025, 3, 7)
    assert as_type_of(1.5, Decimal("2.0")) == Decimal("1.5")
    assert as_type_of("2025-03-07T10:00:00.000Z", dt.datetime(2025, 1, 1)) is None  # truncated: not compared


def test_a_file_is_read_for_a_range_of_days_only_when_its_partition_or_statistics_meet_it() -> None:
    first, last = dt.date(2025, 3, 5), dt.date(2025, 3, 9)
    assert overlaps(first, last, equal="2025-03-10") is False and overlaps(first, last, equal="2025-03-09") is True
    assert overlaps(first, last, dt.date(2025, 3, 10), dt.date(2025, 3, 12)) is False
    assert overlaps(first, last, dt.date(2025, 3, 1), dt.date(2025, 3, 5)) is True
    assert overlaps(first, last) is True  # no statistics: read


def run(version: int | None, start: str | None, end: str | None) -> dict[str, object]:
    return {"target_version": version, "window_start": start, "window_end": end}


def test_a_key_s_history_reads_the_commits_of_the_runs_whose_windows_reach_its_days() -> None:
    runs = [run(1, "2025-03-06", "2025-03-06"), run(2, "2025-03-07", "2025-03-07"), run(3, "2025-03-18", "2025-03-18"),
            run(None, "2025-03-08", "2025-03-08"), run(4, None, None)]  # fmt: skip
    first, last = to_index(dt.date(2025, 3, 7)), to_index(dt.date(2025, 3, 17))
    # the failed run wrote nothing; a commit without a window (a migration) may have rewritten the key's rows
    assert sorted(runs_reaching(runs, first, last, TimeUnit.DAY)) == [2, 4]
