"""A Spark Connect server with Delta configured: one long-running Spark that `deltainc --remote` commands are
thin clients of, so that a command pays no JVM start and finds a warm JIT.

It is an ordinary local (or cluster) Spark application, built by `deltainc.spark.get_spark` like any other,
with Spark's own Connect plugin loaded: pyspark ships the plugin's jar, so nothing more is fetched.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from deltainc.settings import Settings

__all__ = ["DEFAULT_PORT", "DEFAULT_HOST", "server_conf", "serve", "wait_for_port", "free_port", "start_server"]

DEFAULT_PORT = 15002  # Spark Connect's own default
DEFAULT_HOST = "127.0.0.1"  # this machine only: Spark Connect has no authentication of its own
_PLUGIN = "org.apache.spark.sql.connect.SparkConnectPlugin"


def server_conf(port: int, host: str = DEFAULT_HOST) -> dict[str, str]:
    """The Spark configuration that makes a session a Spark Connect server listening on `host`:`port`."""
    return {
        "spark.plugins": _PLUGIN,
        "spark.connect.grpc.binding.address": host,
        "spark.connect.grpc.binding.port": str(port),
    }


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


def _reach(host: str) -> str:
    """Where this machine reaches a server bound to `host` (all interfaces: through loopback)."""
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host


def listening(host: str, port: int) -> str:
    """The line `serve` says once the server listens: where, and who can reach it."""
    url = f"sc://{_reach(host)}:{port}"
    if host in ("127.0.0.1", "localhost", "::1"):
        return f"serves Spark Connect on {url}, to this machine only (--host ADDRESS to serve others)"
    return (
        f"serves Spark Connect on {host}:{port} ({url} from here), to whoever reaches this address: Spark Connect "
        "has no authentication of its own, so anyone who can connect can read and write every table this server "
        "can; put it behind an authenticating proxy or a firewall"
    )


def serve(
    settings: Settings,
    port: int,
    echo: Callable[[str], None],
    host: str = DEFAULT_HOST,
    extra_conf: Mapping[str, str] | None = None,
) -> None:
    """Start the server on `host`:`port` (this machine only by default) and keep it up until SIGTERM or SIGINT;
    then stop Spark cleanly. `extra_conf` (--conf) reaches the server, e.g. spark.connect.authenticate.token."""
    from deltainc.spark import get_spark

    os.environ.pop("SPARK_REMOTE", None)  # the server is never itself a client
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    local = settings.model_copy(update={"spark": settings.spark.model_copy(update={"remote": None})})
    spark = get_spark(local, {**(extra_conf or {}), **server_conf(port, host)})
    try:
        if not wait_for_port(_reach(host), port, 60):
            raise RuntimeError(f"--port: the Spark Connect server did not listen on {host}:{port} within 60 s")
        echo(f"Spark {spark.version} with Delta {listening(host, port)} (Ctrl-C stops it)")
        while not stop.wait(1):
            pass
    finally:
        spark.stop()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(
    cwd: Path,
    env: Mapping[str, str],
    port: int | None = None,
    timeout_seconds: float = 300,
    conf: Mapping[str, str] | None = None,
) -> tuple[subprocess.Popen[bytes], str]:
    """`deltainc serve` as a process of its own (its output in cwd/server.log), once it listens: the process
    and its URL. `conf` goes to the server as --conf (e.g. its Spark event log). For tests and benchmarks; the
    caller terminates it."""
    port = port or free_port()
    settings = [part for key, value in (conf or {}).items() for part in ("--conf", f"{key}={value}")]
    with (cwd / "server.log").open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "deltainc", "serve", "--port", str(port), *settings],
            cwd=cwd,
            env=dict(env),
            stdout=log,
            stderr=log,
        )
    if not wait_for_port("127.0.0.1", port, timeout_seconds, alive=lambda: process.poll() is None):
        process.terminate()
        process.wait(timeout=60)
        tail = (cwd / "server.log").read_text(errors="replace")[-3000:]
        raise RuntimeError(f"the Spark Connect server did not listen on port {port}: {tail}")
    return process, f"sc://127.0.0.1:{port}"
