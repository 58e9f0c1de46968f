"""What a session holds, read through Spark's public monitoring endpoints (the UI's REST API and its metrics
servlet), for the memory benchmark and the tests that check a run releases what it persisted (issue 80).

A session must be started with the UI on (`spark.ui.enabled`) and, for the heap, Spark's JVM metrics source
(`JVM_SOURCE`); `probe_conf` gives both, on a free port so that several sessions of a machine do not meet.
"""

from __future__ import annotations

import json
import socket
import urllib.request
from typing import Any

from pyspark.sql import SparkSession

__all__ = ["JVM_SOURCE", "UI_RETAINED", "probe_conf", "persisted_rdds", "heap", "retained_heap", "broadcasts"]

JVM_SOURCE = {"spark.metrics.conf.driver.source.jvm.class": "org.apache.spark.metrics.source.JvmSource"}
# What Spark's status store keeps of finished jobs, stages and SQL executions (defaults 1,000 each): with Spark's
# defaults, a session's retained heap grows with every query until it keeps 1,000, whatever deltainc releases; bounded
# here (a window's queries fit), so that the heap after a window shows what the windows themselves leave behind.
UI_RETAINED = {
    "spark.ui.retainedJobs": "200",
    "spark.ui.retainedStages": "200",
    "spark.sql.ui.retainedExecutions": "200",
}


def probe_conf() -> dict[str, str]:
    """Spark settings for a session these probes can read: the UI on a free port and the JVM metrics source."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    return {"spark.ui.enabled": "true", "spark.ui.port": str(port), **JVM_SOURCE, **UI_RETAINED}


def _get(spark: SparkSession, path: str) -> Any:
    url = spark.sparkContext.uiWebUrl
    if url is None:
        raise RuntimeError("the session's UI is off: start it with probe_conf()")
    with urllib.request.urlopen(f"{url}{path}", timeout=30) as answer:
        return json.loads(answer.read())


def persisted_rdds(spark: SparkSession) -> list[str]:
    """The names of the session's persisted RDDs (a cached DataFrame's is its plan's text), sorted: the UI's
    `/api/v1/applications/<id>/storage/rdd`, which lists those with blocks stored."""
    rdds = _get(spark, f"/api/v1/applications/{spark.sparkContext.applicationId}/storage/rdd")
    return sorted(str(rdd.get("name", rdd.get("id"))) for rdd in rdds)


def heap(spark: SparkSession) -> dict[str, int]:
    """The driver JVM's heap now, in bytes: `used`, `committed`, `max`, and `old` (the old generation's used part,
    what survived collections), from the metrics servlet's JVM gauges."""
    gauges: dict[str, dict[str, Any]] = _get(spark, "/metrics/json")["gauges"]

    def gauge(suffix: str) -> int:
        found = [int(g["value"]) for name, g in gauges.items() if name.endswith(suffix)]
        return found[0] if found else -1

    old = next((int(g["value"]) for n, g in gauges.items() if n.endswith("-Gen.used") and "Old" in n or
                n.endswith("Tenured-Gen.used")), -1)  # fmt: skip
    return {"used": gauge("jvm.heap.used"), "committed": gauge("jvm.heap.committed"), "max": gauge("jvm.heap.max"),
            "old": old}  # fmt: skip


def retained_heap(spark: SparkSession) -> int:
    """The driver JVM's used heap in bytes just after a full collection (`System.gc()`, which G1, Java 17's default,
    runs as a full one): what the session still holds, without the garbage of the used heap's sawtooth. A classic
    session's own JVM only (Py4J); it costs a collection, so read it after a window's seconds are taken."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None, "a classic session's JVM"
    jvm.java.lang.System.gc()
    return int(jvm.java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed())


def broadcasts(spark: SparkSession, after: int) -> tuple[int, list[dict[str, str]]]:
    """The broadcasts Spark built in the SQL executions after the one numbered `after` (-1: all), with the size
    each sent (`data size`), from the UI's `/api/v1/applications/<id>/sql`; and the last execution's number, the
    `after` of the next call. Adaptive execution's final plans are what the UI shows."""
    app = spark.sparkContext.applicationId
    found: list[dict[str, str]] = []
    last, offset = after, 0
    while True:
        page = _get(
            spark, f"/api/v1/applications/{app}/sql?details=true&planDescription=false&offset={offset}&length=200"
        )
        for execution in page:
            number = int(execution["id"])
            last = max(last, number)
            if number <= after:
                continue
            for node in execution.get("nodes", []):
                if node.get("nodeName") == "BroadcastExchange":
                    sizes = [m["value"] for m in node.get("metrics", []) if m.get("name") == "data size"]
                    found.append({"query": str(execution.get("description", ""))[:80], "size": " ".join(sizes)})
        if len(page) < 200:
            return last, found
        offset += 200
