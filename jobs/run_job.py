"""spark-submit entry point: the `deltainc` commands on any cluster.

    spark-submit --master yarn --packages io.delta:delta-spark_2.13:4.4.0 \\
        jobs/run_job.py run bank_trx --until 2025-03-31

The master is left to spark-submit: spark.master of the settings file (e.g. local[*] in conf/deltainc.toml)
is ignored here, unless `--master URL` is given after the command. Under spark-submit the JVM is already
running when this script starts, so the Delta jars must come from spark-submit (`--packages` or `--jars`),
not from the settings. Exits with the command's exit code (0 done, 1 failure, 2 invalid input, 3 locked).
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping, Sequence
from pathlib import Path

MASTER_ENV = "DELTAINC_SPARK__MASTER"


def leave_master_to_spark_submit(environ: MutableMapping[str, str]) -> None:
    """An empty spark.master: get_spark then sets none, and the master given to spark-submit applies."""
    environ[MASTER_ENV] = ""


def run(argv: Sequence[str]) -> int:
    leave_master_to_spark_submit(os.environ)
    try:
        from deltainc.cli.app import main
    except ImportError:  # run from a checkout without `pip install`: the package sits next to jobs/
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from deltainc.cli.app import main
    return main(list(argv))


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
