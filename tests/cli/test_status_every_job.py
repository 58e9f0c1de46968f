"""`deltainc status` of every job of the job directory keeps its promise whatever fails in one job's status: that
job is shown with its problem, the others still are, exit 0 (issue 60.3). Run as the process a user starts, with
Spark's Hive catalog on a metastore that cannot be opened, as when another Spark holds the embedded Derby one."""

from __future__ import annotations

import datetime as dt
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from processes import env

from deltainc.demo.jobs import left_job_toml

pytestmark = pytest.mark.processes

D1, D2 = dt.date(2025, 3, 1), dt.date(2025, 3, 2)


def write_sources(root: Path) -> tuple[str, str]:
    """A and B of the sample job's shape, two days each, written with delta-rs (no JVM)."""
    a = pa.table({"TrxId": [1, 2], "Amount": [10.0, 20.0], "RecDate": [D1, D2]})
    b = pa.table({"SepaId": [10, 11], "TrxId": [1, 2], "Country": ["NL", "DE"], "RecDate": [D1, D2]})
    write_deltalake(str(root / "a"), a)
    write_deltalake(str(root / "b"), b)
    return str(root / "a"), str(root / "b")


def test_status_of_every_job_shows_a_job_whose_metastore_cannot_be_opened_with_its_problem_and_exits_0(
    tmp_path: Path,
) -> None:
    a, b = write_sources(tmp_path)
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    for name, source_a in (("catalog", None), ("paths", a)):  # the failing job first: the one after it still shows
        text = left_job_toml(name, a, b, str(tmp_path / f"target_{name}"), start=D1, look_back_time=1,
                             max_waiting_time=2)  # fmt: skip
        if source_a is None:  # source A is a table of Spark's catalog
            text = text.replace(f'[source_a]\npath = "{a}"', '[source_a]\ntable = "lake.ledger"')
        (jobs / f"{name}.toml").write_text(text)
    # Derby cannot create the metastore's database where a file already stands: Spark's Hive catalog cannot open it.
    (tmp_path / "warehouse").mkdir()
    (tmp_path / "warehouse" / "metastore_db").write_text("not a Derby database\n")
    hive = ["--conf", "spark.sql.catalogImplementation=hive", "--conf", "spark.hadoop.hive.hmshandler.retry.attempts=1"]
    variables = {**env(tmp_path), "DELTAINC_JOB_DIR": str(jobs), "DELTAINC_STATE_DIR": str(tmp_path / "state")}

    done = subprocess.run([sys.executable, "-m", "deltainc", *hive, "status"], cwd=tmp_path, env=variables,
                          capture_output=True, text=True, timeout=600, check=False)  # fmt: skip

    assert done.returncode == 0, done.stderr
    catalog, paths = done.stdout.split(f"paths  ({jobs / 'paths.toml'})")
    assert catalog.startswith(f"catalog  ({jobs / 'catalog.toml'})")
    assert re.search(r"^  problem +\w+: .*SessionHiveMetaStoreClient.*embedded Derby metastore", catalog, re.M)
    assert re.search(r"^  watermark +none \(never run\)$", catalog, re.M)  # its state is still read and shown
    assert re.search(r"^  pending +2025-03-01\.\.2025-03-02 ", paths, re.M)
    assert "deltainc: error" not in done.stderr
