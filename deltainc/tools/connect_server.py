"""A Spark Connect server with Delta configured: one long-running Spark that `deltainc --remote` commands are
thin clients of, so that a command pays no JVM start and finds a warm JIT.

It is an ordinary local (or cluster) Spark application, built by `deltainc.spark.get_spark` like any other,
with Spark's own Connect plugin loaded: pyspark ships the plugin's jar, so nothing more is fetched.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Callable

from deltainc.settings import Settings

__all__ = ["DEFAULT_PORT", "server_conf", "serve", "wait_for_port"]

DEFAULT_PORT = 15002  # Spark Connect's own default
_PLUGIN = "org.apache.spark.sql.connect.SparkConnectPlugin"


def server_conf(port: int) -> dict[str, str]:
    """The Spark configuration that makes a session a Spark Connect server listening on `port`."""
    return {"spark.plugins": _PLUGIN, "spark.connect.grpc.binding.port": str(port)}


def wait_for_port(host: str, port: int, timeout_seconds: float, alive: Callable[[], bool] = lambda: True) -> bool:
    """Whether something accepts TCP connections on host:port within the timeout (False early if not `alive`)."""
    deadline = time.monotonic() + timeout_seconds
    while time.monotonic() < deadline and alive():
        try:
            with socket.create_connection((host, port), timeout=1):
                return True
        except OSError:
            time.sleep(0.2)
    return False


def serve(settings: Settings, port: int, echo: Callable[[str], None]) -> None:
    """Start the server and keep it up until SIGTERM or SIGINT; then stop Spark cleanly."""
    from deltainc.spark import get_spark

    os.environ.pop("SPARK_REMOTE", None)  # the server is never itself a client
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    local = settings.model_copy(update={"spark": settings.spark.model_copy(update={"remote": None})})
    spark = get_spark(local, server_conf(port))
    try:
        if not wait_for_port("127.0.0.1", port, 60):
            raise RuntimeError(f"--port: the Spark Connect server did not listen on port {port} within 60 s")
        echo(f"Spark {spark.version} with Delta serves Spark Connect on sc://localhost:{port} (Ctrl-C stops it)")
        while not stop.wait(1):
            pass
    finally:
        spark.stop()
