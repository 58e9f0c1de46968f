"""A chain of two jobs (docs/concepts/pipelines.md): transactions joined with their payments, then the final rows of
that target joined with fees (left) and risk scores (as-of, nearest) in a feature job. Run unit by unit (a day job
and an hour job), in windows of random sizes, and reloaded in one run per job, the downstream targets are identical
and equal to the rules in plain Python (tests/support/feature_model.py) applied to the final rows the upstream rules
give.
So is an hour upstream feeding a day downstream ("hour-day"): the hour job run hour by hour, the day job as its days
complete, the spine's TIMESTAMP RecDate read by its day."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from delta_rows import read_rows, write_rows
from feature_model import model
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.job.job_config import load_job

pytestmark = pytest.mark.windows  # each example runs both jobs over many windows, three times

DAY0 = dt.date(2025, 1, 1)
# Each unit's first point, its length and the RecDate type of its sources: a day job and an hour job (`time_uom`).
UNITS = {
    "day": (DAY0, dt.timedelta(days=1), "date"),
    "hour": (dt.datetime(2025, 1, 1), dt.timedelta(hours=1), "timestamp"),
}
LAST = 4  # the runs end on day 4; the sources reach day 5
HOUR0 = dt.datetime(2025, 1, 1, 20)  # "hour-day": the upstream's unit 0, four hours before day 0 ends
UP_LAST = 27  # "hour-day": the upstream's runs end on its unit 27, hour 23 of day 1, the downstream's last day
FILLER = 99  # a key on the last day of every source, so that each has reached it; it matches nothing final
OUT = ["TrxId", "RecDate", "fees_FeeId", "fees_JoinType", "scores_ScoreId", "scores_JoinType", "WaitingTime",
       "JoinType"]  # fmt: skip

Days = list[tuple[int, int]]  # (key, day offset)


def upstream_finals(
    a: dict[int, int], pay: dict[int, int], lb: int, mw: int, last: int = LAST
) -> list[tuple[int, int, int]]:
    """The upstream left join's final rows as of `last`, as spine rows (TrxId, TrxId, the day each became final): a
    transaction matched on the later of its day and its payment's (a payment at most lb days early, mw late),
    else timed out mw days after its own; one still waiting is not final."""
    finals = []
    for k, ta in a.items():
        tb = pay.get(k)
        if tb is not None and ta - lb <= tb <= ta + mw and max(ta, tb) <= last:
            finals.append((k, k, max(ta, tb)))
        elif (tb is None or not ta - lb <= tb <= ta + mw) and ta + mw <= last:
            finals.append((k, k, ta + mw))
    return finals


def job_files(root: Path, suffix: str, uom: str, lb: int, mw: int, lbs: tuple[int, int], mws: tuple[int, int]) -> None:
    """trx<suffix> (payments) and risk<suffix> (fees and scores on trx<suffix>'s target) in root/jobs; `uom`
    "hour-day" makes trx an hour job and risk a day job."""
    up_uom, down_uom = ("hour", "day") if uom == "hour-day" else (uom, uom)
    jobs = root / "jobs"
    jobs.mkdir(exist_ok=True)
    common = f'start_date = {DAY0}\nmax_window = 0\n[state]\npath = "{root / "state"}"\n'
    (jobs / f"trx{suffix}.toml").write_text(
        f'name = "trx{suffix}"\n{common}[source_a]\npath = "{root / "a"}"\n[source_b]\npath = "{root / "pay"}"\n'
        f'[join]\nhow = "left"\njoin_cols = ["TrxId"]\nlook_back_time = {lb}\nmax_waiting_time = {mw}\n'
        f'time_uom = "{up_uom}"\n'
        f'[target]\npath = "{root / f"target_trx{suffix}"}"\nkeys = ["TrxId"]\nb_keys = ["PayId"]\n'
    )
    features = [
        ("fees", "left", lbs[0], mws[0], 'keys = ["FeeId"]\ncolumns = ["FeeId"]'),
        ("scores", "asof", lbs[1], mws[1], 'asof_strategy = "nearest"\ncolumns = ["ScoreId"]'),
    ]
    sections = "".join(
        f'[[features]]\nname = "{name}"\npath = "{root / name}"\nhow = "{how}"\njoin_cols = ["TrxId"]\n'
        f"look_back_time = {f_lb}\nmax_waiting_time = {f_mw}\n{extra}\n"
        for name, how, f_lb, f_mw, extra in features
    )
    (jobs / f"risk{suffix}.toml").write_text(
        f'name = "risk{suffix}"\n{common}[source_a]\njob = "trx{suffix}"\n'
        f'[join]\nalias_a = "T"\ntime_uom = "{down_uom}"\n{sections}'
        f'[target]\npath = "{root / f"target_risk{suffix}"}"\nkeys = ["TrxId"]\n'
    )


def downstream(root: Path, suffix: str, uom: str) -> Counter[tuple[Any, ...]]:
    """The downstream target's rows, RecDates as unit offsets."""
    first, unit, _ = UNITS["day" if uom == "hour-day" else uom]
    rows = read_rows(root / f"target_risk{suffix}", OUT)
    return Counter(tuple((v - first) // unit if isinstance(v, dt.date) else v for v in row) for row in rows)


@settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    a_days=st.lists(st.integers(0, LAST), min_size=3, max_size=6),
    delays=st.lists(st.one_of(st.none(), st.integers(-2, 4)), min_size=6, max_size=6),
    fees=st.lists(st.tuples(st.integers(0, 5), st.integers(0, LAST + 1)), max_size=8),
    scores=st.sets(st.tuples(st.integers(0, 5), st.integers(0, LAST + 1)), max_size=8),
    lb=st.integers(0, 2),
    mw=st.integers(1, 2),  # rows wait upstream: a downstream job that read them would hold rows the rules do not
    lbs=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    mws=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    cuts=st.sets(st.integers(0, LAST - 1), max_size=3),
)
@example(  # every outcome upstream (on time, early, late, waiting, timed out) and downstream, besides a drawn one
    a_days=[0, 1, 2, 3, 4, 2],
    delays=[0, 1, None, -1, 3, 2],
    fees=[(0, 0), (1, 2), (1, 3), (3, 3), (5, 4)],
    scores={(0, 1), (1, 0), (2, 3), (3, 2), (4, 4)},
    lb=1,
    mw=2,
    lbs=(1, 0),
    mws=(1, 2),
    cuts={1, 3},
)
@pytest.mark.parametrize("uom", ["day", "hour", "hour-day"])
def test_a_chain_run_day_by_day_in_any_windows_or_at_once_gives_the_rules_applied_to_the_final_rows(
    spark: SparkSession,
    tmp_path_factory: pytest.TempPathFactory,
    uom: str,
    a_days: list[int],
    delays: list[int | None],
    fees: Days,
    scores: set[tuple[int, int]],
    lb: int,
    mw: int,
    lbs: tuple[int, int],
    mws: tuple[int, int],
    cuts: set[int],
) -> None:
    root = tmp_path_factory.mktemp("chain")
    if uom == "hour-day":
        hour_day(spark, root, a_days, delays, fees, scores, lb, mw, lbs, mws, cuts)
        return
    first, unit, rec_type = UNITS[uom]

    def day(n: int) -> dt.date:  # unit n: a day, or an hour
        return first + n * unit

    a = dict(enumerate(a_days))
    pay = {k: ta + delay for (k, ta), delay in zip(a.items(), delays, strict=False) if delay is not None}
    pay = {k: tb for k, tb in pay.items() if tb >= 0}
    fee_rows = [(k, 100 + n, d) for n, (k, d) in enumerate(fees)]
    score_rows = [(k, 200 + n, d) for n, (k, d) in enumerate(sorted(scores))]
    write_rows(root / "a", [*((k, float(k), day(t)) for k, t in a.items()), (FILLER, 0.0, day(LAST + 1))],
               f"TrxId long, Amount double, RecDate {rec_type}")  # fmt: skip
    write_rows(root / "pay", [*((500 + k, k, day(t)) for k, t in pay.items()), (599, FILLER, day(LAST + 1))],
               f"PayId long, TrxId long, RecDate {rec_type}")  # fmt: skip
    for name, rows, schema in (("fees", fee_rows, "FeeId long"), ("scores", score_rows, "ScoreId long")):
        write_rows(root / name, [*((i, k, day(d)) for k, i, d in rows), (999, FILLER, day(LAST + 1))],
                   f"{schema}, TrxId long, RecDate {rec_type}")  # fmt: skip
    schedules = {"_daily": range(LAST + 1), "_cut": [*sorted(cuts), LAST], "_once": [LAST]}
    for suffix, ends in schedules.items():
        job_files(root, suffix, uom, lb, mw, lbs, mws)
        trx, risk = (load_job(root / "jobs" / f"{name}{suffix}.toml") for name in ("trx", "risk"))
        for end in ends:  # the upstream to `end`, then the job that reads it
            run(trx, until=day(end), spark=spark)
            run(risk, until=day(end), spark=spark)
    expected = model(upstream_finals(a, pay, lb, mw), fee_rows, score_rows, lbs, mws, 0, LAST)
    got = [downstream(root, suffix, uom) for suffix in schedules]
    assert got[0] == got[1] == got[2] == expected


def hour_day(
    spark: SparkSession,
    root: Path,
    a_days: list[int],
    delays: list[int | None],
    fees: Days,
    scores: set[tuple[int, int]],
    lb: int,
    mw: int,
    lbs: tuple[int, int],
    mws: tuple[int, int],
    cuts: set[int],
) -> None:
    """The chain with trx an hour job (A and payments in hours from HOUR0, around the end of day 0) and risk a day
    job (fees and scores on days 0 to 2, DATEs): trx run hour by hour and risk after it as its days complete, in
    cuts, and once; risk's rows are the rules applied to trx's final rows, each on the day of the hour it became
    final."""

    def hour(n: int) -> dt.datetime:
        return HOUR0 + dt.timedelta(hours=n)

    def day(n: int) -> dt.date:
        return DAY0 + dt.timedelta(days=n)

    a = dict(enumerate(a_days))
    pay = {k: ta + delay for (k, ta), delay in zip(a.items(), delays, strict=False) if delay is not None}
    fee_rows = [(k, 100 + n, d // 2) for n, (k, d) in enumerate(fees)]
    score_rows = [(k, 200 + n, d // 2) for n, (k, d) in enumerate(sorted(scores))]
    write_rows(root / "a", [*((k, float(k), hour(t)) for k, t in a.items()), (FILLER, 0.0, hour(UP_LAST + 1))],
               "TrxId long, Amount double, RecDate timestamp")  # fmt: skip
    write_rows(root / "pay", [*((500 + k, k, hour(t)) for k, t in pay.items()), (599, FILLER, hour(UP_LAST + 1))],
               "PayId long, TrxId long, RecDate timestamp")  # fmt: skip
    for name, rows, schema in (("fees", fee_rows, "FeeId long"), ("scores", score_rows, "ScoreId long")):
        write_rows(root / name, [*((i, k, day(d)) for k, i, d in rows), (999, FILLER, day(2))],
                   f"{schema}, TrxId long, RecDate date")  # fmt: skip
    # (trx's last unit, whether risk runs after it): unit 3 is hour 23, which completes day 0 for risk
    hourly = [(n, n in (2, 3, 6)) for n in range(-2, 10)] + [(UP_LAST, True)]
    schedules = {"_daily": hourly, "_cut": [*((2 * c, True) for c in sorted(cuts)), (UP_LAST, True)],
                 "_once": [(UP_LAST, True)]}  # fmt: skip
    for suffix, ends in schedules.items():
        job_files(root, suffix, "hour-day", lb, mw, lbs, mws)
        trx, risk = (load_job(root / "jobs" / f"{name}{suffix}.toml") for name in ("trx", "risk"))
        for end, downstream_too in ends:
            run(trx, until=hour(end), spark=spark)
            if downstream_too:  # until the day of trx's hour: risk runs only the days trx has completed
                run(risk, until=hour(end).date(), spark=spark)
    spine = [(k, i, (HOUR0.hour + t) // 24) for k, i, t in upstream_finals(a, pay, lb, mw, UP_LAST)]
    expected = model(spine, fee_rows, score_rows, lbs, mws, 0, 1)
    got = [downstream(root, suffix, "hour-day") for suffix in schedules]
    assert got[0] == got[1] == got[2] == expected
