"""The job file of a left join over sources shaped like the sample data (A keyed by TrxId, B by SepaId).

One template for every job file tests, benchmarks and examples write as TOML text (a job run as a process reads a
file): the values that differ between them are parameters, the rest is the sample data's shape.
"""

from __future__ import annotations

import datetime as dt
import json

__all__ = ["left_job_toml"]


def left_job_toml(
    name: str,
    a: str,
    b: str,
    target: str,
    *,
    start: dt.date,
    look_back_time: int,
    max_waiting_time: int,
    max_window: int | None = None,
    state: str | None = None,
) -> str:
    """A left join of A and B on TrxId, its target keyed by TrxId and SepaId; `state` set puts the job's state
    there rather than under the settings' state_dir."""
    lines = [f"name = {_text(name)}", f"start_date = {start.isoformat()}"]
    if max_window is not None:
        lines.append(f"max_window = {max_window}")
    lines += ["[source_a]", f"path = {_text(a)}", "[source_b]", f"path = {_text(b)}"]
    lines += ["[join]", 'how = "left"', 'join_cols = ["TrxId"]']
    lines += [f"look_back_time = {look_back_time}", f"max_waiting_time = {max_waiting_time}"]
    lines += ["[target]", f"path = {_text(target)}", 'keys = ["TrxId"]', 'b_keys = ["SepaId"]']
    if state is not None:
        lines += ["[state]", f"path = {_text(state)}"]
    return "\n".join(lines) + "\n"


def _text(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(value)
