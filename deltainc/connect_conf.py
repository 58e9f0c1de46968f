"""Which Spark settings a Spark Connect client sends: session settings only. No Spark here.

A Connect server fixes its static settings when its JVM starts (master, memory, jars, UI, SQL extensions, catalog
implementation, warehouse); a client that sets one gets CANNOT_MODIFY_STATIC_CONFIG and the command fails. So a
client leaves those to the server and says which, and a setting the server refuses all the same is left to it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["ClientConf", "server_only", "client_conf", "refused_by_server", "left_message"]

# Settings the server's JVM reads once, at its start: Spark's own (not SQL) settings and its static SQL settings.
_SERVER_PREFIXES = (
    "spark.master",
    "spark.jars",
    "spark.driver.",
    "spark.executor.",
    "spark.ui.",
    "spark.plugins",
    "spark.eventLog.",
    "spark.local.dir",
    "spark.connect.",
    "spark.sql.hive.metastore.",
    "spark.sql.streaming.ui.",
)
_STATIC_SQL = frozenset(
    {
        "spark.sql.catalogImplementation",
        "spark.sql.warehouse.dir",
        "spark.sql.extensions",
        "spark.sql.globalTempDatabase",
        "spark.sql.codegen.cache.maxEntries",
        "spark.sql.codegen.comments",
        "spark.sql.debug",
        "spark.sql.queryExecutionListeners",
        "spark.sql.streaming.streamingQueryListeners",
        "spark.sql.ui.retainedExecutions",
        "spark.sql.cache.serializer",
        "spark.sql.filesourceTableRelationCacheSize",
        "spark.sql.sources.schemaStringLengthThreshold",
        "spark.sql.broadcastExchange.maxThreadThreshold",
        "spark.sql.subquery.maxThreadThreshold",
        "spark.sql.metadataCacheTTLSeconds",
        "spark.sql.event.truncate.length",
        "spark.sql.hive.thriftServer.singleSession",
        "spark.sql.defaultUrlStreamHandlerFactory.enabled",
        "spark.sql.legacy.sessionInitWithConfigDefaults",
    }
)
# The error conditions of a server that will not take a setting from a client: a static SQL setting, a Spark one.
_REFUSALS = frozenset({"CANNOT_MODIFY_STATIC_CONFIG", "CANNOT_MODIFY_CONFIG"})


@dataclass(frozen=True)
class ClientConf:
    """The settings a client sends (session settings), and the ones it leaves to the server, in the given order."""

    sent: Mapping[str, str]
    left: tuple[str, ...]


def server_only(key: str) -> bool:
    """Whether `key` is fixed when the server starts, so a client cannot set it (e.g. `spark.driver.memory`)."""
    return key in _STATIC_SQL or key.startswith(_SERVER_PREFIXES)


def client_conf(conf: Mapping[str, str]) -> ClientConf:
    """Split `conf` into what a Spark Connect client sends and what it leaves to the server.

    Args:
        conf: the session's settings, as a local session would get them (`[spark] conf`, `--conf`).

    Example:
        ```python
        split = client_conf({"spark.sql.shuffle.partitions": "8", "spark.sql.catalogImplementation": "hive"})
        assert dict(split.sent) == {"spark.sql.shuffle.partitions": "8"}
        assert split.left == ("spark.sql.catalogImplementation",)
        ```
    """
    sent = {key: value for key, value in conf.items() if not server_only(key)}
    return ClientConf(sent, tuple(key for key in conf if server_only(key)))


def refused_by_server(exc: BaseException) -> bool:
    """Whether `exc` is a server's refusal to change a setting fixed at its start (pyspark's error condition)."""
    condition = getattr(exc, "getCondition", None) or getattr(exc, "getErrorClass", None)
    return callable(condition) and condition() in _REFUSALS


def left_message(left: tuple[str, ...]) -> str:
    """The one line that tells a user which settings the Connect server keeps as it started."""
    them = "it" if len(left) == 1 else "them"
    return (
        f"Spark Connect: {', '.join(left)} left to the server (a client sends session settings only; "
        f"set {them} where the server starts, e.g. `deltainc serve --conf`)"
    )
