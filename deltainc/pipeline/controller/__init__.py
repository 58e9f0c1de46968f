"""The controller: `run`, `rerun`, `backfill` and `migrate`, the commands that write (`commands.py`,
`migrate.py`); what a run asks of the Delta logs before Spark starts and the lock it takes (`before_spark.py`),
its plan (`plan.py`, pure), the job opened in Spark (`prepared_job.py`), one window's run (`window.py`), its
commit (`commit.py`), a stop during it (`stop.py`), its too-late rows (`too_late_search.py`,
`too_late_from_logs.py`) and a failed window's run-log row (`failure_row.py`). Above the layers `job/`,
`delta/`, `state/`, `target/` (docs/design.md#where-the-code-is)."""
