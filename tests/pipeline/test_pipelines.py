"""A chain of two jobs (docs/concepts/pipelines.md): transactions joined with their payments, then the final rows of
that target joined with fees (left) and risk scores (as-of, nearest) in a feature job. Run unit by unit (a day job
and an hour job), in windows of random sizes, and reloaded in one run per job, the downstream targets are identical
and equal to the rules in plain Python (tests/feature_model.py) applied to the final rows the upstream rules give."""

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

from deltainc.pipeline.controller import run
from deltainc.pipeline.job.job_config import load_job

pytestmark = pytest.mark.windows  # each example runs both jobs over many windows, three times

DAY0 = dt.date(2025, 1, 1)
# Each unit's first point, its length and the RecDate type of its sources: a day job and an hour job (`time_uom`).
UNITS = {
    "day": (DAY0, dt.timedelta(days=1), "date"),
    "hour": (dt.datetime(2025, 1, 1), dt.timedelta(hours=1), "timestamp"),
}
LAST = 4  # the runs end on day 4; the sources reach day 5
FILLER = 99  # a key on the last day of every source, so that each has reached it; it matches nothing final
OUT = ["TrxId", "RecDate", "fees_FeeId", "fees_JoinType", "scores_ScoreId", "scores_JoinType", "WaitingTime",
       "JoinType"]  # fmt: skip

Days = list[tuple[int, int]]  # (key, day offset)


def upstream_finals(a: dict[int, int], pay: dict[int, int], lb: int, mw: int) -> list[tuple[int, int, int]]:
    """The upstream left join's final rows as of LAST, as spine rows (TrxId, TrxId, the day each became final): a
    transaction matched on the later of its day and its payment's (a payment at most lb days early, mw late),
    else timed out mw days after its own; one still waiting is not final."""
    finals = []
    for k, ta in a.items():
        tb = pay.get(k)
        if tb is not None and ta - lb <= tb <= ta + mw and max(ta, tb) <= LAST:
            finals.append((k, k, max(ta, tb)))
        elif (tb is None or not ta - lb <= tb <= ta + mw) and ta + mw <= LAST:
            finals.append((k, k, ta + mw))
    return finals


def job_files(root: Path, suffix: str, uom: str, lb: int, mw: int, lbs: tuple[int, int], mws: tuple[int, int]) -> None:
    """trx<suffix> (payments) and risk<suffix> (fees and scores on trx<suffix>'s target) in root/jobs."""
    jobs = root / "jobs"
    jobs.mkdir(exist_ok=True)
    common = f'start_date = {DAY0}\nmax_window = 0\n[state]\npath = "{root / "state"}"\n'
    (jobs / f"trx{suffix}.toml").write_text(
        f'name = "trx{suffix}"\n{common}[source_a]\npath = "{root / "a"}"\n[source_b]\npath = "{root / "pay"}"\n'
        f'[join]\nhow = "left"\njoin_cols = ["TrxId"]\nlook_back_time = {lb}\nmax_waiting_time = {mw}\n'
        f'time_uom = "{uom}"\n'
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
        f'[join]\nalias_a = "T"\ntime_uom = "{uom}"\n{sections}'
        f'[target]\npath = "{root / f"target_risk{suffix}"}"\nkeys = ["TrxId"]\n'
    )


def downstream(root: Path, suffix: str, uom: str) -> Counter[tuple[Any, ...]]:
    """The downstream target's rows, RecDates as unit offsets."""
    first, unit, _ = UNITS[uom]
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
@pytest.mark.parametrize("uom", ["day", "hour"])
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
