"""The daily path in a few modules (issue 62): a daily one-window run enters few of the package's modules, so that
following it from `run` to the write reads a few files, not half the package."""

from __future__ import annotations

import datetime as dt
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from frames import frame
from pyspark.sql import SparkSession

import deltainc
from deltainc.pipeline import PipelineResult, run
from jobs import days_from, job_config

pytestmark = pytest.mark.windows  # its first day, then the daily run it counts

START = dt.date(2025, 4, 1)
ORDERS = "Id long, OrderId long, EventTime timestamp, RecDate date"
PAYMENTS = "PayId long, OrderId long, EventTime timestamp, RecDate date"
# A ratchet at the modules of deltainc/ a daily one-window run entered when this test was written (56 before issue
# 62's controller rework, which added state/window_row.py and window/source_facts.py; 58 with the tables' one look,
# pipeline/delta/snapshot.py; 54 after the first folds). 36 once each layer's modules that hold one concept became one
# module (job, join, state, delta, target, window, the pipeline's top). Issue 62's goal is 25: these 36 modules hold
# ~7,650 lines, more than 25 modules of at most 300 lines can, so it needs less code on the daily path, not more folds.
# 31 once the daily modules' code moved where a daily run already goes, or out of its way: where a table lives to
# settings.py, `kind_of` to job/kinds/two_source.py, a table's reads to delta/sources.py, the sources' facts to
# prepared_job.py (a run in a session it is given no longer enters spark.py). These 31 hold 7,216 lines; 25 modules
# of at most 300 lines hold 7,500, so 25 is in reach only if each holds close to 300 of one concept: the pairs
# of one layer that sum to 300 or less (state/from_delta_log.py + state/processes.py, the only one) hold two concepts.
MOST_MODULES = 31

day, at = days_from(START)


def _append(spark: SparkSession, root: Path, n: int) -> None:
    """Day n's order and its payment, appended to root/orders and root/payments."""
    rows = (("orders", (n, n, at(n, 9), day(n)), ORDERS), ("payments", (n, n, at(n, 10), day(n)), PAYMENTS))
    for name, row, schema in rows:
        frame(spark, [row], schema).write.format("delta").mode("append").partitionBy("RecDate").save(str(root / name))


def _modules_entered(call: Any) -> set[str]:
    """The modules of deltainc/ whose functions run while `call()` does, in any thread."""
    home, seen = str(Path(deltainc.__file__).parent), set()

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(home):
            seen.add(str(frame.f_globals.get("__name__")))

    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return seen


def test_a_daily_one_window_run_enters_few_of_the_packages_modules(spark: SparkSession, tmp_path: Path) -> None:
    config = job_config(
        tmp_path, "orders", START, {"how": "left", "join_cols": ["OrderId"]}, keys=["Id"], b_keys=["PayId"],
        sources=("orders", "payments"),
    )  # fmt: skip
    _append(spark, tmp_path, 0)
    run(config, spark=spark)  # the first run: the state and the target exist from here on
    _append(spark, tmp_path, 1)
    results: list[PipelineResult] = []
    entered = _modules_entered(lambda: results.append(run(config, spark=spark)))
    assert [str(report.window) for report in results[0].windows] == [day(1).isoformat()]  # one daily window
    assert len(entered) <= MOST_MODULES, "\n".join(sorted(entered))
