"""The seed's seven bank transactions (docs/design.md#the-seven-transactions): the documented outcomes, stated
by hand."""

from __future__ import annotations

import datetime as dt

import pytest
from chispa import assert_df_equality
from frames import frame
from pyspark.sql import DataFrame, SparkSession

from deltainc import IncJoinSettings, JoinType, inc_join

# docs/design.md#5-the-seed-example on every Spark line and ANSI setting
pytestmark = [pytest.mark.spark, pytest.mark.smoke]

D = dt.date
OUT = "TrxId, RecDate, RecDate_A, RecDate_B, DiffArrivalTime, JoinType"


@pytest.fixture()
def seed(spark: SparkSession) -> tuple[DataFrame, DataFrame]:
    a = frame(
        spark,
        [
            (dt.datetime(2025, 3, 6, 20, 45, 19), "Credit", 700.30, "Madame Zsa Zsa", 1, D(2025, 3, 6)),
            (dt.datetime(2025, 3, 6, 12, 22, 1), "Debit", 200.00, "Madame Zsa Zsa", 2, D(2025, 3, 6)),
            (dt.datetime(2025, 3, 6, 20, 59, 0), "Debit", 1110.20, "Madame Zsa Zsa", 3, D(2025, 3, 6)),
            (dt.datetime(2025, 3, 6, 23, 50, 0), "Credit", 50.00, "Madame Zsa Zsa", 4, D(2025, 3, 7)),
            (dt.datetime(2025, 3, 6, 8, 0, 0), "Credit", 1500.00, "Mr. X", 5, D(2025, 3, 7)),
            (dt.datetime(2025, 3, 7, 14, 45, 0), "Debit", 300.25, "Mr. X", 6, D(2025, 3, 7)),
            (dt.datetime(2025, 3, 10, 9, 0, 0), "Credit", 99.99, "Mr. X", 7, D(2025, 3, 8)),
        ],
        "TrxDT timestamp, CreditDebit string, AmountEuro double, AccountName string, TrxId long, RecDate date",
    )
    b = frame(
        spark,
        [
            (1, "NL", D(2025, 3, 5)),
            (2, "NL", D(2025, 3, 4)),
            (3, "NL", D(2025, 3, 6)),
            (4, "UK", D(2025, 3, 7)),
            (5, "NL", D(2025, 3, 12)),
            (6, "NL", D(2025, 3, 18)),
            (7, "DE", D(2025, 3, 6)),
        ],
        "TrxId long, CountryCode string, RecDate date",
    )
    return a, b


def _expected(spark: SparkSession, rows: list[tuple]) -> DataFrame:
    return frame(
        spark,
        rows,
        "TrxId long, RecDate date, RecDate_A date, RecDate_B date, DiffArrivalTime int, JoinType int",
    )


def _march(a: DataFrame, b: DataFrame, lb: int, mw: int, **settings: object) -> DataFrame:
    return inc_join(
        a,
        b,
        "left",
        ["TrxId"],
        look_back_time=lb,
        max_waiting_time=mw,
        output_window_start="2025-03-01",
        output_window_end="2025-03-31",
        other_settings=IncJoinSettings(output_select=OUT, **settings),  # type: ignore[arg-type]
    )


def test_look_back_2_wait_11_matches_all_seven(spark: SparkSession, seed: tuple[DataFrame, DataFrame]) -> None:
    a, b = seed
    expected = _expected(
        spark,
        [
            (1, D(2025, 3, 6), D(2025, 3, 6), D(2025, 3, 5), -1, int(JoinType.A_LATE)),
            (2, D(2025, 3, 6), D(2025, 3, 6), D(2025, 3, 4), -2, int(JoinType.A_LATE)),
            (3, D(2025, 3, 6), D(2025, 3, 6), D(2025, 3, 6), 0, int(JoinType.SAME_TIME)),
            (4, D(2025, 3, 7), D(2025, 3, 7), D(2025, 3, 7), 0, int(JoinType.SAME_TIME)),
            (5, D(2025, 3, 12), D(2025, 3, 7), D(2025, 3, 12), 5, int(JoinType.B_LATE)),
            (6, D(2025, 3, 18), D(2025, 3, 7), D(2025, 3, 18), 11, int(JoinType.B_LATE)),
            (7, D(2025, 3, 8), D(2025, 3, 8), D(2025, 3, 6), -2, int(JoinType.A_LATE)),
        ],
    )
    assert_df_equality(_march(a, b, 2, 11), expected, ignore_row_order=True, ignore_nullable=True)


def test_wait_10_times_trx_6_out_at_2025_03_17(spark: SparkSession, seed: tuple[DataFrame, DataFrame]) -> None:
    a, b = seed
    out = _march(a, b, 2, 10, include_waiting=True).where("TrxId = 6").collect()
    assert [(r.RecDate, r.RecDate_B, r.JoinType) for r in out] == [(D(2025, 3, 17), None, JoinType.A_TIMED_OUT)]


def test_look_back_1_leaves_trx_2_and_7_unmatched(spark: SparkSession, seed: tuple[DataFrame, DataFrame]) -> None:
    a, b = seed
    out = {r.TrxId: (r.RecDate, r.JoinType) for r in _march(a, b, 1, 11).collect()}
    assert out[2] == (D(2025, 3, 17), JoinType.A_TIMED_OUT)  # 2025-03-06 + 11
    assert out[7] == (D(2025, 3, 19), JoinType.A_TIMED_OUT)  # 2025-03-08 + 11
    assert out[1][1] == JoinType.A_LATE


@pytest.mark.windows  # the engine over many windows
def test_daily_windows_give_the_monthly_result(spark: SparkSession, seed: tuple[DataFrame, DataFrame]) -> None:
    a, b = seed
    settings = IncJoinSettings(output_select=OUT)
    days = [D(2025, 3, 1) + dt.timedelta(days=i) for i in range(31)]
    daily = None
    for day in days:
        out = inc_join(a, b, "left", ["TrxId"], None, 2, 11, day, day, settings)
        daily = out if daily is None else daily.unionByName(out)
    assert daily is not None
    assert_df_equality(daily, _march(a, b, 2, 11), ignore_row_order=True, ignore_nullable=True)


def test_daily_run_on_2025_03_08_shows_trx_5_and_6_waiting(
    spark: SparkSession, seed: tuple[DataFrame, DataFrame]
) -> None:
    a, b = seed
    out = inc_join(
        a,
        b,
        "left",
        ["TrxId"],
        None,
        2,
        11,
        "2025-03-08",
        "2025-03-08",
        IncJoinSettings(include_waiting=True, output_select="TrxId, RecDate, WaitingTime, JoinType"),
    )
    rows = sorted((r.TrxId, r.RecDate, r.WaitingTime, r.JoinType) for r in out.collect())
    assert rows == [
        (5, D(2025, 3, 8), 1, JoinType.A_WAITING),
        (6, D(2025, 3, 8), 1, JoinType.A_WAITING),
        (7, D(2025, 3, 8), None, JoinType.A_LATE),
    ]


def test_wait_0_times_out_every_late_b_at_once(spark: SparkSession, seed: tuple[DataFrame, DataFrame]) -> None:
    a, b = seed
    out = {r.TrxId: (r.RecDate, r.JoinType) for r in _march(a, b, 2, 0).collect()}
    assert out[5] == (D(2025, 3, 7), JoinType.A_TIMED_OUT)
    assert out[6] == (D(2025, 3, 7), JoinType.A_TIMED_OUT)
    assert out[3] == (D(2025, 3, 6), JoinType.SAME_TIME)
    assert out[7] == (D(2025, 3, 8), JoinType.A_LATE)


def test_default_output_columns_follow_the_seed(spark: SparkSession, seed: tuple[DataFrame, DataFrame]) -> None:
    a, b = seed
    out = inc_join(
        a,
        b,
        join_cols=["TrxId"],
        look_back_time=2,
        max_waiting_time=11,
        output_window_start="2025-03-01",
        output_window_end="2025-03-31",
    )
    assert out.columns == [
        "TrxId",
        "RecDate",
        "TrxDT",
        "CreditDebit",
        "AmountEuro",
        "AccountName",
        "RecDate_A",
        "CountryCode",
        "RecDate_B",
        "DiffArrivalTime",
        "JoinType",
    ]


# --- full_outer: the seed extended with two payments the ledger (A) never booked --------------------------------

B_ONLY = [(8, "NL", D(2025, 3, 5)), (9, "BE", D(2025, 3, 30))]  # TrxId 8 and 9 have no A row
FULL_OUT = "TrxId, RecDate, RecDate_A, RecDate_B, DiffArrivalTime, WaitingTime, JoinType"
SEVEN_MATCHED = [  # lb = 2, mw = 11: (TrxId, RecDate, RecDate_A, RecDate_B, DiffArrivalTime, WaitingTime, JoinType)
    (1, D(2025, 3, 6), D(2025, 3, 6), D(2025, 3, 5), -1, None, int(JoinType.A_LATE)),
    (2, D(2025, 3, 6), D(2025, 3, 6), D(2025, 3, 4), -2, None, int(JoinType.A_LATE)),
    (3, D(2025, 3, 6), D(2025, 3, 6), D(2025, 3, 6), 0, None, int(JoinType.SAME_TIME)),
    (4, D(2025, 3, 7), D(2025, 3, 7), D(2025, 3, 7), 0, None, int(JoinType.SAME_TIME)),
    (5, D(2025, 3, 12), D(2025, 3, 7), D(2025, 3, 12), 5, None, int(JoinType.B_LATE)),
    (6, D(2025, 3, 18), D(2025, 3, 7), D(2025, 3, 18), 11, None, int(JoinType.B_LATE)),
    (7, D(2025, 3, 8), D(2025, 3, 8), D(2025, 3, 6), -2, None, int(JoinType.A_LATE)),
]


@pytest.fixture()
def seed_b_only(spark: SparkSession, seed: tuple[DataFrame, DataFrame]) -> tuple[DataFrame, DataFrame]:
    a, b = seed
    return a, b.unionByName(frame(spark, B_ONLY, "TrxId long, CountryCode string, RecDate date"))


def _full(a: DataFrame, b: DataFrame, start: str | dt.date, end: str | dt.date, **settings: object) -> DataFrame:
    """full_outer with lb = 2, mw = 11 and include_waiting, over [start, end]."""
    options = IncJoinSettings(output_select=FULL_OUT, include_waiting=True, **settings)  # type: ignore[arg-type]
    return inc_join(a, b, "full_outer", ["TrxId"], None, 2, 11, start, end, options)


def _full_expected(spark: SparkSession, rows: list[tuple]) -> DataFrame:
    return frame(
        spark,
        rows,
        "TrxId long, RecDate date, RecDate_A date, RecDate_B date, DiffArrivalTime int, WaitingTime int, JoinType int",
    )


@pytest.mark.parametrize(
    ("settings", "b_only"),
    [
        pytest.param(
            {},
            [
                (8, D(2025, 3, 5), None, D(2025, 3, 5), None, None, int(JoinType.NOT_MATCHED)),
                (9, D(2025, 3, 30), None, D(2025, 3, 30), None, None, int(JoinType.NOT_MATCHED)),
            ],
            id="seed_rule_outputs_them_at_their_recdate",
        ),
        pytest.param(
            {"b_waits_for_a": True},
            [
                (8, D(2025, 3, 7), None, D(2025, 3, 5), None, 2, int(JoinType.NOT_MATCHED)),  # waited lb = 2: final
                (9, D(2025, 3, 31), None, D(2025, 3, 30), None, 1, int(JoinType.B_WAITING)),  # waited 1 of 2
            ],
            id="b_waits_for_a_finalises_trx_8_at_b_plus_2_and_keeps_trx_9_waiting",
        ),
    ],
)
def test_full_outer_outputs_the_b_only_rows_by_its_rule(
    spark: SparkSession, seed_b_only: tuple[DataFrame, DataFrame], settings: dict[str, object], b_only: list[tuple]
) -> None:
    a, b = seed_b_only
    out = _full(a, b, "2025-03-01", "2025-03-31", **settings)
    assert_df_equality(out, _full_expected(spark, SEVEN_MATCHED + b_only), ignore_row_order=True, ignore_nullable=True)


def test_full_outer_b_waits_for_a_without_include_waiting_drops_the_still_waiting_trx_9(
    seed_b_only: tuple[DataFrame, DataFrame],
) -> None:
    a, b = seed_b_only
    no_waiting = IncJoinSettings(output_select=OUT, b_waits_for_a=True)
    final = inc_join(a, b, "full_outer", ["TrxId"], None, 2, 11, "2025-03-01", "2025-03-31", no_waiting)
    assert sorted(r.TrxId for r in final.collect()) == [1, 2, 3, 4, 5, 6, 7, 8]  # trx 9 still waits: dropped


def test_daily_run_on_2025_03_06_seed_rule_outputs_trx_7s_b_as_not_matched_the_waiting_rule_waits(
    spark: SparkSession, seed_b_only: tuple[DataFrame, DataFrame]
) -> None:
    # Trx 7's B arrives on 03-06, its A on 03-08 (within lb = 2). The seed rule closes it on 03-06 and matches it
    # again on 03-08 (two rows for one payment across daily runs); the waiting rule lets it wait.
    a, b = seed_b_only

    def rows(**settings: object) -> list[tuple]:
        return sorted(
            (r.TrxId, r.RecDate, r.WaitingTime, r.JoinType)
            for r in _full(a, b, "2025-03-06", "2025-03-06", **settings).collect()
        )

    matched = [
        (1, D(2025, 3, 6), None, JoinType.A_LATE),
        (2, D(2025, 3, 6), None, JoinType.A_LATE),
        (3, D(2025, 3, 6), None, JoinType.SAME_TIME),
    ]
    assert rows() == matched + [(7, D(2025, 3, 6), None, JoinType.NOT_MATCHED)]
    assert rows(b_waits_for_a=True) == matched + [
        (7, D(2025, 3, 6), 0, JoinType.B_WAITING),
        (8, D(2025, 3, 6), 1, JoinType.B_WAITING),
    ]


@pytest.mark.windows  # the engine over many windows
def test_daily_windows_give_the_spanning_full_outer_result_when_b_waits_for_a(
    spark: SparkSession, seed_b_only: tuple[DataFrame, DataFrame]
) -> None:
    # Daily final rows, plus the last day's waiting rows, equal one run over 03-01..03-12 (trx 6 waits on 03-12).
    a, b = seed_b_only
    days = [D(2025, 3, 1) + dt.timedelta(days=i) for i in range(12)]
    daily: DataFrame | None = None
    for day in days:
        out = _full(a, b, day, day, b_waits_for_a=True)
        if day != days[-1]:
            out = out.where(f"JoinType NOT IN ({int(JoinType.A_WAITING)}, {int(JoinType.B_WAITING)})")
        daily = out if daily is None else daily.unionByName(out)
    assert daily is not None
    whole = _full(a, b, days[0], days[-1], b_waits_for_a=True)
    assert_df_equality(daily, whole, ignore_row_order=True, ignore_nullable=True)
    assert [r.TrxId for r in whole.where(f"JoinType = {int(JoinType.A_WAITING)}").collect()] == [6]
