"""A job processed by the released deltainc on Spark 3.5 / Delta 3.3 is continued on the main line without a rebuild.

tests/fixtures/spark35_job holds its sources, target and state as that release wrote them (made by
tests/fixtures/make_spark35_job.py): five days of sources, processed daily.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest
from expected import engine_output, same_rows
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from test_contract import make_job, target

from deltainc.demo.sample_data import SampleSpec, generate
from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.delta.sources import latest_commit
from deltainc.pipeline.delta.sql import path_ref
from deltainc.pipeline.inspect.status import status

pytestmark = pytest.mark.windows

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "spark35_job"
START, FIXTURE_LAST = dt.date(2025, 3, 27), dt.date(2025, 3, 31)
SPEC = SampleSpec(start=START, days=8, rows_per_day=6, seed=11, p_no_b=0.15, p_orphan_b=0.2, p_two_b=0.15)
LAST = START + dt.timedelta(days=SPEC.days - 1)


def test_a_job_written_by_the_spark_3_5_release_runs_on_with_its_state_and_target(
    spark: SparkSession, tmp_path: Path
) -> None:
    shutil.copytree(FIXTURE, tmp_path, dirs_exist_ok=True)
    written_by = latest_commit(spark, path_ref(str(tmp_path / "target_trx")))
    assert written_by is not None and "Apache-Spark/3.5" in written_by["engineInfo"]
    job = make_job(tmp_path, str(tmp_path / "a"), str(tmp_path / "b"), max_window=1)
    assert status(job, spark=spark).watermark == FIXTURE_LAST.isoformat()
    for frame, name in zip(generate(spark, SPEC), ("a", "b"), strict=True):  # the next days, on this line
        later = frame.where(F.col("RecDate") > F.lit(FIXTURE_LAST))
        later.write.format("delta").mode("append").partitionBy("RecDate").save(str(tmp_path / name))

    result = run(job, spark=spark)

    assert (len(result.windows), result.watermark) == ((LAST - FIXTURE_LAST).days, LAST.isoformat())
    same_rows(target(spark, job), engine_output(spark, job, LAST))
