"""The seed example in a clean virtualenv that holds only the built wheel and its declared dependencies.

`make wheel-check` (tests/tools/wheel_check.py, which `make test` runs beside the suite) runs this file with that
virtualenv's Python, from a folder outside the checkout, so `deltainc` is the installed wheel's. Every module of the
package is imported (a module left out of the wheel, or an import of a package deltainc does not declare, fails
here), then the seven transactions are joined in a local Spark with Delta and must give the outcomes of the seed
specification. Last, they are written as the two Delta sources of a small job, `conf/jobs/seed.toml` in the working
folder, which the wheel check then validates, runs, and asks the status and the report of as `deltainc` commands.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

import deltainc

EXPECTED = {1: "A_LATE", 2: "A_LATE", 3: "SAME_TIME", 4: "SAME_TIME", 5: "B_LATE", 6: "B_LATE", 7: "A_LATE"}

# The seed example as a job: the ledger (A) joined with the payment engine (B), look back 2, wait 11.
JOB = """\
name = "seed"
start_date = 2025-03-04

[source_a]
path = "data/ledger"

[source_b]
path = "data/payments"

[join]
how = "left"
join_cols = ["TrxId"]
look_back_time = 2
max_waiting_time = 11

[target]
path = "data/seed_joined"
keys = ["TrxId"]
"""


def main() -> int:
    if Path(sys.prefix).resolve() not in Path(deltainc.__file__).resolve().parents:
        print(f"deltainc was imported from {deltainc.__file__}, not from this virtualenv's installed wheel")
        return 1
    for module in pkgutil.walk_packages(deltainc.__path__, "deltainc."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)

    from deltainc import IncJoinSettings, JoinType, inc_join
    from deltainc.demo.seed_example import seed_example
    from deltainc.spark import get_spark

    spark = get_spark()
    df_a, df_b = seed_example(spark)
    out = inc_join(df_a, df_b, "left", ["TrxId"], None, 2, 11, "2025-03-06", "2025-03-18",
                   IncJoinSettings(include_waiting=True))  # fmt: skip
    kinds = {row.TrxId: JoinType(row.JoinType).name for row in out.collect()}
    if kinds != EXPECTED:
        spark.stop()
        print(f"the seed example gave {kinds}, expected {EXPECTED}")
        return 1
    df_a.write.format("delta").partitionBy("RecDate").save("data/ledger")
    df_b.write.format("delta").partitionBy("RecDate").save("data/payments")
    spark.stop()
    Path("conf/jobs").mkdir(parents=True)
    Path("conf/jobs/seed.toml").write_text(JOB)
    print(f"deltainc {deltainc.__version__} from the wheel: every module imports; the seed example gives its outcomes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
