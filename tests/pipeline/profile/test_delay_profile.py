"""The delay profile: exact histograms on tiny Delta sources whose delays are stated by hand."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from delta_rows import write_rows
from pyspark.sql import SparkSession

from deltainc.errors import ConfigError, SchemaError
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.profile.delays import format_profile, plot_profile, profile_job
from deltainc.pipeline.profile.histogram import COVERAGES, PERCENTILES, DelayProfile, profile_from_histogram

pytestmark = pytest.mark.pure

D0 = dt.date(2025, 3, 10)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def day(offset: int) -> dt.date:
    return D0 + dt.timedelta(days=offset)


def make_job(tmp_path: Path, own: tuple[str | None, str | None] = (None, None), **join: Any) -> JobConfig:
    """The job over tmp_path/a and tmp_path/b; `own`: each source's own inc_col, when it names one."""
    sources = {role: {"path": str(tmp_path / name)} | ({"inc_col": inc} if inc else {})
               for role, name, inc in (("source_a", "a", own[0]), ("source_b", "b", own[1]))}  # fmt: skip
    settings: dict[str, Any] = {"how": "left", "join_cols": ["TrxId"], "look_back_time": 1, "max_waiting_time": 3}
    settings.update(join)
    return JobConfig.model_validate(
        {
            "name": "trx",
            "start_date": D0,
            **sources,
            "join": settings,
            "target": {"path": str(tmp_path / "target"), "keys": ["TrxId"]},
        }
    )


def write(spark: SparkSession, rows: list[tuple[Any, ...]], schema: str, path: Path) -> None:
    """A source written with delta-rs: the profile is Spark's reading of it, not how Spark writes it."""
    write_rows(path, rows, schema, mode="overwrite")


@pytest.fixture()
def by_hand(spark: SparkSession, tmp_path: Path) -> JobConfig:
    """Seven pairs with delays -2, -1, 0, 0, 0, 3, 11, plus rows that must not count as pairs."""
    delays = {1: -2, 2: -1, 3: 0, 4: 0, 5: 0, 6: 3, 7: 11}
    a_rows = [(trx, "NL", day(trx)) for trx in delays]
    a_rows += [
        (8, "NL", day(1)),  # no B at all: unmatched
        (None, "NL", day(2)),  # NULL key: never matches the NULL-keyed B below, so unmatched too
        (9, "NL", None),  # NULL RecDate: left out
    ]
    b_rows = [(trx, "NL", day(trx + d)) for trx, d in delays.items()]
    b_rows += [(100, "DE", day(0)), (None, "NL", day(2)), (9, "NL", day(3))]
    write(spark, a_rows, "TrxId long, Country string, RecDate date", tmp_path / "a")
    write(spark, b_rows, "TrxId long, Land string, RecDate date", tmp_path / "b")
    return make_job(tmp_path)


@pytest.mark.spark
def test_seven_pairs_stated_by_hand(spark: SparkSession, by_hand: JobConfig) -> None:
    profile = profile_job(spark, by_hand)
    assert profile.histogram == ((-2, 1), (-1, 1), (0, 3), (3, 1), (11, 1))
    assert (profile.pairs, profile.unmatched_a) == (7, 2)
    assert profile.percentiles == {"50": 0, "90": 11, "99": 11, "99.9": 11, "100": 11}
    full = profile.suggestion("100")
    assert (full.look_back_time, full.max_waiting_time, full.matched_share) == (2, 11, 1.0)
    assert [s.coverage for s in profile.suggestions] == list(COVERAGES)
    assert (profile.look_back_time, profile.max_waiting_time) == (1, 3)
    assert profile.current_share == pytest.approx(5 / 7)
    assert profile.share_matched(2, 10) == pytest.approx(6 / 7)


@pytest.mark.spark
def test_a_window_on_a_restricts_the_a_rows(spark: SparkSession, by_hand: JobConfig) -> None:
    profile = profile_job(spark, by_hand, start=day(2), end=day(5))
    assert profile.histogram == ((-1, 1), (0, 3))
    assert (profile.start, profile.end, profile.unmatched_a) == (day(2), day(5), 1)
    only_end = profile_job(spark, by_hand, end=day(1))
    assert only_end.histogram == ((-2, 1),) and only_end.unmatched_a == 1


@pytest.mark.spark
def test_join_cond_counts_only_pairs_it_accepts(spark: SparkSession, tmp_path: Path) -> None:
    write(spark, [(1, "NL", day(0)), (2, "NL", day(0))], "TrxId long, Country string, RecDate date", tmp_path / "a")
    write(
        spark,
        [(1, "NL", day(2)), (1, "DE", day(5)), (2, "DE", day(1))],
        "TrxId long, Land string, RecDate date",
        tmp_path / "b",
    )
    keyed = profile_job(spark, make_job(tmp_path, join_cond="A.Country = B.Land"))
    assert (keyed.histogram, keyed.unmatched_a) == (((2, 1),), 1)
    cond_only = profile_job(spark, make_job(tmp_path, join_cols=[], join_cond="A.TrxId = B.TrxId"))
    assert cond_only.histogram == ((1, 1), (2, 1), (5, 1))


@pytest.mark.spark
def test_hours_count_whole_hours_between_timestamps(spark: SparkSession, tmp_path: Path) -> None:
    def at(text: str) -> dt.datetime:
        return dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc)

    write(
        spark,
        [(1, at("2025-03-10 10:30:00")), (2, at("2025-03-10 23:10:00"))],
        "TrxId long, RecDate timestamp",
        tmp_path / "a",
    )
    write(
        spark,
        [(1, at("2025-03-10 09:59:00")), (2, at("2025-03-11 02:00:00"))],
        "TrxId long, RecDate timestamp",
        tmp_path / "b",
    )
    profile = profile_job(spark, make_job(tmp_path, time_uom="hour"))
    assert profile.time_uom == "hour"
    assert profile.histogram == ((-1, 1), (3, 1))
    late_only = profile_job(spark, make_job(tmp_path, time_uom="hour"), start=day(0), end=day(0))
    assert late_only.pairs == 2  # both A rows lie on day(0), whatever the hour


@pytest.mark.spark
def test_each_source_is_profiled_by_its_own_inc_col(spark: SparkSession, tmp_path: Path) -> None:
    """A dated by a DATE `LoadDay`, B by a TIMESTAMP `RecTs` in a day job: B's day is the timestamp's date."""
    write(spark, [(1, day(0)), (2, day(1))], "TrxId long, LoadDay date", tmp_path / "a")
    b_rows = [(1, dt.datetime(2025, 3, 12, 23, 30)), (2, dt.datetime(2025, 3, 11, 0, 5))]  # days 2 and 1
    write(spark, b_rows, "TrxId long, RecTs timestamp", tmp_path / "b")
    profile = profile_job(spark, make_job(tmp_path, own=("LoadDay", "RecTs")))
    assert profile.histogram == ((0, 1), (2, 1))


@pytest.mark.spark
def test_suggestions_differ_by_coverage(spark: SparkSession, tmp_path: Path) -> None:
    """2,600 pairs: 100 negative (99 at -1, 1 at -4), 500 at 0, 2,000 positive (1990 at 2, 8 at 5, 9, 30)."""
    delays = [-1] * 99 + [-4] + [0] * 500 + [2] * 1990 + [5] * 8 + [9] + [30]
    write(spark, [(i, day(0)) for i in range(len(delays))], "TrxId long, RecDate date", tmp_path / "a")
    write(spark, [(i, day(d)) for i, d in enumerate(delays)], "TrxId long, RecDate date", tmp_path / "b")
    profile = profile_job(spark, make_job(tmp_path))
    assert profile.pairs == 2600
    assert profile.percentiles == {"50": 2, "90": 2, "99": 2, "99.9": 5, "100": 30}
    got = {s.coverage: (s.look_back_time, s.max_waiting_time) for s in profile.suggestions}
    assert got == {"99": (1, 2), "99.9": (4, 5), "100": (4, 30)}
    assert profile.suggestion("99").matched_share == pytest.approx((99 + 500 + 1990) / 2600)
    assert profile.suggestion("99.9").matched_share == pytest.approx(2598 / 2600)
    assert all(s.matched_share >= float(s.coverage) / 100 for s in profile.suggestions)


@pytest.mark.parametrize(
    ("histogram", "percentiles", "look_back_100", "wait_100"),
    [
        ({0: 5}, {"50": 0, "90": 0, "99": 0, "99.9": 0, "100": 0}, 0, 0),
        ({3: 1, 4: 1}, {"50": 3, "90": 4, "99": 4, "99.9": 4, "100": 4}, 0, 4),
        ({-5: 1, -3: 3}, {"50": -3, "90": -3, "99": -3, "99.9": -3, "100": -3}, 5, 0),
        ({-2: 1, -1: 1, 0: 3, 3: 1, 11: 1}, {"50": 0, "90": 11, "99": 11, "99.9": 11, "100": 11}, 2, 11),
        ({-1: 10, 1: 80, 7: 10}, {"50": 1, "90": 1, "99": 7, "99.9": 7, "100": 7}, 1, 7),
    ],
)
def test_percentiles_and_full_coverage_from_a_histogram(
    tmp_path: Path, histogram: dict[int, int], percentiles: dict[str, int], look_back_100: int, wait_100: int
) -> None:
    profile = profile_from_histogram(make_job(tmp_path), histogram)
    assert list(profile.percentiles) == list(PERCENTILES)
    assert profile.percentiles == percentiles
    full = profile.suggestion("100")
    assert (full.look_back_time, full.max_waiting_time, full.matched_share) == (look_back_100, wait_100, 1.0)


@pytest.mark.parametrize(
    ("histogram", "coverage", "look_back", "wait"),
    [
        # 99 % of 5,250 pairs leaves 52 to miss: the 30 at +13 and +20 go, the 750 before A must stay
        (
            {-2: 300, -1: 450, 0: 3600, 1: 200, 2: 180, 3: 150, 4: 120, 5: 100, 6: 50, 8: 40, 11: 30, 13: 20, 20: 10},
            "99",
            2,
            11,
        ),
        (
            {-2: 300, -1: 450, 0: 3600, 1: 200, 2: 180, 3: 150, 4: 120, 5: 100, 6: 50, 8: 40, 11: 30, 13: 20, 20: 10},
            "99.9",
            2,
            20,
        ),
        ({-3: 1, 0: 98, 3: 1}, "99", 3, 0),  # as narrow either way: the shorter wait wins
        ({-30: 1, 0: 97, 1: 1, 2: 1}, "99", 0, 2),  # miss the far look back rather than widen to 30
        ({0: 1000, 1: 1}, "99.9", 0, 0),
        ({0: 998, 1: 2}, "99.9", 0, 1),
    ],
)
def test_suggestion_is_the_narrowest_window_holding_the_coverage(
    tmp_path: Path, histogram: dict[int, int], coverage: str, look_back: int, wait: int
) -> None:
    profile = profile_from_histogram(make_job(tmp_path), histogram)
    chosen = profile.suggestion(coverage)
    assert (chosen.look_back_time, chosen.max_waiting_time) == (look_back, wait)
    assert chosen.matched_share == profile.share_matched(look_back, wait) >= float(coverage) / 100


def test_no_pairs_gives_an_empty_profile(tmp_path: Path) -> None:
    profile = profile_from_histogram(make_job(tmp_path), {}, unmatched_a=3)
    assert (profile.pairs, profile.unmatched_a, profile.percentiles, profile.suggestions) == (0, 3, {}, ())
    assert profile.current_share is None and profile.share_matched(1, 1) is None
    with pytest.raises(ConfigError, match="coverage: expected one of 99, 99.9, 100"):
        profile.suggestion("99")
    assert "no pairs to measure" in format_profile(profile, make_job(tmp_path))


@pytest.mark.spark
def test_format_profile_summarises(spark: SparkSession, by_hand: JobConfig) -> None:
    text = format_profile(profile_job(spark, by_hand), by_hand)
    assert "Delay profile of job trx: B.RecDate - A.RecDate in days, all A rows" in text
    assert "7 pair(s) of rows with matching keys; 2 A row(s) with no B row at all" in text
    assert "p50 +0, p90 +11, p99 +11, p99.9 +11, p100 +11" in text
    assert any(line.split() == ["+11", "1", "14.29%", "100.00%"] for line in text.splitlines())
    assert any(line.split() == ["100%", "2", "11", "100.00%"] for line in text.splitlines())
    assert any(line.split() == ["current", "1", "3", "71.43%"] for line in text.splitlines())


@pytest.mark.spark
def test_plot_profile_writes_a_png(spark: SparkSession, by_hand: JobConfig, tmp_path: Path) -> None:
    written = plot_profile(profile_job(spark, by_hand), tmp_path / "charts" / "delays.png", by_hand)
    assert written == tmp_path / "charts" / "delays.png"
    data = written.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 10_000
    empty = plot_profile(profile_from_histogram(by_hand, {}), tmp_path / "empty.png", by_hand)
    assert empty.read_bytes()[:8] == PNG_MAGIC


@pytest.mark.spark
def test_bad_input_is_rejected_naming_the_field(spark: SparkSession, by_hand: JobConfig, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="profile window: start 2025-03-12 is after end 2025-03-11"):
        profile_job(spark, by_hand, start=day(2), end=day(1))
    with pytest.raises(SchemaError, match="join_cols: column 'Nope' missing from source_a"):
        profile_job(spark, make_job(tmp_path, join_cols=["Nope"]))
    missing = by_hand.model_copy(update={"source_b": by_hand.source_b.model_copy(update={"path": str(tmp_path / "x")})})
    with pytest.raises(ConfigError, match="source_b: no Delta table at path"):
        profile_job(spark, missing)
    with pytest.raises(ConfigError, match="histogram: counts must be >= 0"):
        profile_from_histogram(by_hand, {1: -1})


def test_profile_is_frozen(tmp_path: Path) -> None:
    profile = profile_from_histogram(make_job(tmp_path), {0: 1})
    assert isinstance(profile, DelayProfile)
    with pytest.raises(AttributeError):
        profile.pairs = 2  # type: ignore[misc]
