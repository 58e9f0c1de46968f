"""An hourly job's sources as a scheduler's loader writes them: shipments and carrier scans, Delta tables written
with delta-rs (no JVM), one append per source and hour; the job over them, and the environment its processes run
in. Shared by the warm-path tests (a Connect server's clients, the `run --every` loop)."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import write_deltalake
from jvm_options import server_options

__all__ = ["ZERO", "at", "shipments", "scans", "land", "job_file", "env"]

ZERO = dt.datetime(2025, 3, 1, tzinfo=dt.timezone.utc)
A_SCHEMA = pa.schema([("ShipmentId", pa.string()), ("RecDate", pa.timestamp("us", "UTC"))])
B_SCHEMA = pa.schema([("ScanId", pa.string()), ("ShipmentId", pa.string()), ("RecDate", pa.timestamp("us", "UTC"))])


def at(hour: int, minute: int) -> dt.datetime:
    """The instant `minute` past hour `hour` of the sources' first day, in UTC."""
    return ZERO + dt.timedelta(hours=hour, minutes=minute)


def shipments(hour: int) -> list[dict[str, Any]]:
    """Hour `hour`'s shipments: two, and at hour 0 a third that is never scanned (it times out)."""
    rows = [{"ShipmentId": f"S{hour}-{n}", "RecDate": at(hour, 10 + n)} for n in range(2)]
    return rows + ([{"ShipmentId": "S0-lost", "RecDate": at(0, 50)}] if hour == 0 else [])


def scans(hour: int) -> list[dict[str, Any]]:
    """Hour `hour`'s scans: its first shipment's, and the previous hour's second shipment's (an hour late)."""
    rows = [{"ScanId": f"S{hour}-0-scan", "ShipmentId": f"S{hour}-0", "RecDate": at(hour, 30)}]
    if hour:
        rows.append({"ScanId": f"S{hour - 1}-1-scan", "ShipmentId": f"S{hour - 1}-1", "RecDate": at(hour, 40)})
    return rows


def land(root: Path, hour: int) -> None:
    """Both sources get hour `hour`'s rows, one append each."""
    write_deltalake(str(root / "shipments"), pa.Table.from_pylist(shipments(hour), schema=A_SCHEMA), mode="append")
    write_deltalake(str(root / "scans"), pa.Table.from_pylist(scans(hour), schema=B_SCHEMA), mode="append")


def job_file(root: Path, name: str, max_window: int) -> Path:
    """The hourly job: shipments left join scans on ShipmentId, waiting 2 hours, looking back 1."""
    path = root / f"{name}.toml"
    path.write_text(
        "\n".join(
            [
                f'name = "{name}"', f"start_date = {ZERO.date()}", f"max_window = {max_window}",
                f'[source_a]\npath = "{root}/shipments"', f'[source_b]\npath = "{root}/scans"',
                '[join]\nhow = "left"\njoin_cols = ["ShipmentId"]\ntime_uom = "hour"',
                "look_back_time = 1\nmax_waiting_time = 2",
                f'[target]\npath = "{root}/{name}_target"\nkeys = ["ShipmentId"]\nb_keys = ["ScanId"]',
            ]
        )
        + "\n"
    )  # fmt: skip
    return path


def env(root: Path) -> dict[str, str]:
    """The environment of a deltainc process under `root`: its settings there, none of the caller's, one core."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DELTAINC_", "SPARK_REMOTE"))}
    return {
        **clean,
        "DELTAINC_SETTINGS_FILE": str(root / "no-settings-file.toml"),
        "DELTAINC_WAREHOUSE_DIR": str(root / "warehouse"),
        "DELTAINC_STATE_DIR": str(root / "state"),
        "DELTAINC_SPARK__MASTER": "local[1]",
        "DELTAINC_SPARK__SHUFFLE_PARTITIONS": "2",
        "SPARK_SUBMIT_OPTS": server_options(),
    }
