"""How a window's queries are planned: a small window statically, a large one adaptively.

Spark's adaptive query execution re-plans a query at each shuffle and runs every shuffle stage as a Spark job of
its own. On a window that reads a few megabytes those jobs cost more than the re-planning gains (a daily window at
2,000 rows a day: 12 Spark jobs planned statically against 22-25 adaptively; benchmarks/results/WINDOW_PROFILE.md),
so a window whose sources' reads total less than `[spark] adaptive_min_mb` runs with it off; a larger one (a
reload, a catch-up) keeps Spark's default. A `spark.sql.adaptive.enabled` in `[spark] conf` is left as given.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pyspark.sql import SparkSession

from deltainc.settings import SparkSettings
from deltainc.spark_compat import session_conf

__all__ = ["ADAPTIVE", "planned_for"]

ADAPTIVE = "spark.sql.adaptive.enabled"


def adaptive(settings: SparkSettings, read_bytes: int) -> bool | None:
    """Whether a window reading `read_bytes` is planned adaptively; None when `[spark] conf` decides.

    >>> adaptive(SparkSettings(), 3 * 2**20), adaptive(SparkSettings(), 2**30)
    (False, True)
    """
    if ADAPTIVE in settings.conf:
        return None
    return read_bytes >= settings.adaptive_min_mb * 2**20


@contextmanager
def planned_for(spark: SparkSession, settings: SparkSettings, read_bytes: int) -> Iterator[None]:
    """Inside the block, the session plans queries as a window reading `read_bytes` should be (`adaptive`); the
    session's own setting is put back after it.

    >>> with planned_for(spark, settings.spark, 3 * 2**20):  # doctest: +SKIP
    ...     output.count()  # planned statically
    """
    if adaptive(settings, read_bytes) in (None, True):
        yield
        return
    with session_conf(spark, ADAPTIVE, "false"):
        yield
