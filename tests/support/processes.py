"""Jobs run in a real Python process of their own, with a clean environment: for the tests that kill it (`kill -9`)
or stop it, and then let the next run, in the test's own process, recover."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

# Runs the job (a job file, or a `.json` file of a JobConfig) and kills its own process at the step named by
# argv[2] of its first window: `at` the step, or `during` (0.3 s after it began). The tests commit a window first in
# their own process, whose JVM is warm, so the killed run is never the job's first.
KILLER = textwrap.dedent(
    """
    import os, signal, sys, threading
    from pathlib import Path
    from deltainc import pipeline
    from deltainc.pipeline.job.job_config import JobConfig
    from deltainc.settings import load_settings

    path, point, how = sys.argv[1], sys.argv[2], sys.argv[3]
    job = JobConfig.model_validate_json(Path(path).read_text()) if path.endswith(".json") else path
    seen = []

    def on_step(name):
        seen.append(name)
        if name != point or seen.count(name) != 1:
            return
        if how == "during":  # the commit is under way when the signal lands
            threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGKILL)).start()
        else:
            os.kill(os.getpid(), signal.SIGKILL)

    pipeline.run(job, settings=load_settings(), on_step=on_step)
    sys.exit(0)
    """
)


def env(root: Path) -> dict[str, str]:
    """This process's environment without deltainc's settings, and a one-core Spark with its warehouse in `root`."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DELTAINC_")}
    return {
        **clean,
        "DELTAINC_SETTINGS_FILE": str(root / "no-settings-file.toml"),
        "DELTAINC_WAREHOUSE_DIR": str(root / "warehouse"),
        "DELTAINC_SPARK__MASTER": "local[1]",
        "DELTAINC_SPARK__SHUFFLE_PARTITIONS": "2",
    }


def python(root: Path, *args: str, new_session: bool = False) -> subprocess.CompletedProcess[str]:
    """`python *args` in `root`; `new_session`: in a process group of its own, which it may signal as a whole."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=root,
        env=env(root),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        start_new_session=new_session,
    )


def commits_of(target: str, run_id: str) -> list[tuple[int, float]]:
    """The target's commits made by run `run_id` (its userMetadata names it): (version, commit time in epoch
    seconds), read from the Delta log with delta-rs (a local path or S3)."""
    from deltainc.pipeline.delta.delta_log import open_table

    table = open_table(target)
    assert table is not None, target
    return [
        (int(entry["version"]), int(entry["timestamp"]) / 1000)
        for entry in table.history()
        if json.loads(entry.get("userMetadata") or "{}").get("run_id") == run_id
    ]


def lock_taken_at(locks: str, job: str) -> float:
    """When the job's lock was last taken (its row's acquired_at), in epoch seconds."""
    from deltainc.pipeline.delta.delta_log import job_rows, open_table

    table = open_table(locks)
    assert table is not None, locks
    [row] = job_rows(table, locks, job, ["acquired_at"])
    return float(row["acquired_at"].timestamp())
