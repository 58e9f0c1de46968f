"""A real S3-compatible server for the tests: MinIO, built from its Go module (the Go module proxy) once per machine
and cached, started on a free loopback port with a data folder of the test's own, stopped at the end.

A machine without Go cannot build it: the S3 tests are then skipped with that reason
(docs/production/object-storage.md). Nothing here is a mock: deltainc, Spark (S3A) and delta-rs talk HTTP to the server.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

# The newest MinIO the Go module proxy serves as a module (its release tags are refused there): a pseudo-version.
MINIO_MODULE = "github.com/minio/minio"
MINIO_VERSION = "v0.0.0-20260212201848-7aac2a2c5b7c"
ACCESS_KEY, SECRET_KEY = "deltainc-test", "deltainc-test-secret"
BUCKET = "deltainc"


@dataclass(frozen=True)
class S3Server:
    """A running server: its endpoint, the credentials it takes and its bucket."""

    endpoint: str
    process: subprocess.Popen[bytes]

    def environment(self) -> dict[str, str]:
        """The AWS_* variables that point deltainc (Spark's S3A and delta-rs) at this server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": "us-east-1",
        }


def minio_binary() -> Path:
    """The MinIO server, built with `go install` into the user's cache on first use (minutes once, then cached)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "deltainc" / f"minio-{MINIO_VERSION}"
    binary = cache / "minio"
    if binary.is_file():
        return binary
    go = shutil.which("go")
    if go is None:
        pytest.skip("the S3 tests need Go to build their MinIO server (go install from the Go module proxy)")
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / "build.lock", "w") as lock:  # two test workers: one builds, the other waits for it
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.is_file():
            built = subprocess.run(
                [go, "install", f"{MINIO_MODULE}@{MINIO_VERSION}"],
                env={**os.environ, "GOBIN": str(cache), "CGO_ENABLED": "0"},
                capture_output=True,
                text=True,
                timeout=1800,
                check=False,
            )
            if built.returncode != 0:
                raise RuntimeError(f"go install {MINIO_MODULE}@{MINIO_VERSION} failed:\n{built.stderr[-3000:]}")
    return binary


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(root: Path) -> S3Server:
    """Start MinIO on loopback with its data in `root`, wait until it is live, and create the test bucket."""
    import boto3

    port = _free_port()
    environment = {**os.environ, "MINIO_ROOT_USER": ACCESS_KEY, "MINIO_ROOT_PASSWORD": SECRET_KEY}
    process = subprocess.Popen(
        [
            str(minio_binary()),
            "server",
            str(root / "data"),
            "--quiet",
            "--address",
            f"127.0.0.1:{port}",
            "--console-address",
            f"127.0.0.1:{_free_port()}",
        ],  # fmt: skip
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=open(root / "minio.log", "wb"),  # noqa: SIM115 - the server's whole life
    )
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{endpoint}/minio/health/live", timeout=2) as answer:
                if answer.status == 200:
                    break
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"MinIO did not start: {(root / 'minio.log').read_text()[-2000:]}")
        time.sleep(0.2)
    server = S3Server(endpoint, process)
    client = boto3.client(
        "s3", endpoint_url=endpoint, aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
        region_name="us-east-1",
    )  # fmt: skip
    client.create_bucket(Bucket=BUCKET)
    return server


def stop(server: S3Server) -> None:
    """Stop the server and wait for it."""
    server.process.terminate()
    try:
        server.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.process.kill()
