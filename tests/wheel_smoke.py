"""The seed example in a clean virtualenv that holds only the built wheel and its declared dependencies.

`make wheel-check` (which `make test` runs beside the suite) runs this file with that virtualenv's Python, from a
folder outside the checkout, so `deltainc` is the installed wheel's. Every module of the package is imported (a
module left out of the wheel, or an import of a package deltainc does not declare, fails here), then the seven
transactions are joined in a local Spark with Delta and must give the outcomes of the seed specification.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

import deltainc

EXPECTED = {1: "A_LATE", 2: "A_LATE", 3: "SAME_TIME", 4: "SAME_TIME", 5: "B_LATE", 6: "B_LATE", 7: "A_LATE"}


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
    spark.stop()
    if kinds != EXPECTED:
        print(f"the seed example gave {kinds}, expected {EXPECTED}")
        return 1
    print(f"deltainc {deltainc.__version__} from the wheel: every module imports; the seed example gives its outcomes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
