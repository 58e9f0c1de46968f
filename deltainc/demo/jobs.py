"""The jobs over the sample data: the demo's, as JobConfig (the ledger, A, joined with a second source under the
demo's folder), and the TOML job file of a left join that tests, benchmarks and examples write (a job run as a
process reads a file), its differing values as parameters.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from deltainc.join.options import JoinType
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.pipeline.job.upstream import reading

__all__ = ["DEMO_START", "LOOK_BACK_TIME", "MAX_WAITING_TIME", "demo_job", "feature_job", "scored_job", "left_job_toml"]

DEMO_START = dt.date(2025, 3, 1)
LOOK_BACK_TIME = 2  # the seed's example: B arrives up to 2 days before A ...
MAX_WAITING_TIME = 11  # ... and up to 11 days after it


def _ledger_job(root: Path, name: str, start: dt.date, parts: dict[str, Any], **target: Any) -> JobConfig:
    """A job of the demo's folder: the ledger as A, `parts` (its B and join, or its features), its own target keyed
    by TrxId (and `target`), the demo's state."""
    ledger, state = {"path": str(root / "ledger")}, {"path": str(root / "_deltainc")}
    target_table = {"path": str(root / f"target_{name}"), "keys": ["TrxId"], **target}
    return JobConfig.model_validate(
        {"name": name, "start_date": start, "source_a": ledger, **parts, "target": target_table, "state": state}
    )


def demo_job(root: Path, name: str, max_window: int, start: dt.date = DEMO_START) -> JobConfig:
    """The demo's job: A = ledger, B = payment engine, a full outer join on TrxId with the seed's tolerances:
    a reconciliation that also keeps the payments the ledger never booked (B rows without an A row)."""
    join = {"how": "full_outer", "join_cols": ["TrxId"], "look_back_time": LOOK_BACK_TIME,
            "max_waiting_time": MAX_WAITING_TIME, "include_waiting": True}  # fmt: skip
    parts = {"max_window": max_window, "source_b": {"path": str(root / "payments")}, "join": join}
    return _ledger_job(root, name, start, parts, b_keys=["SepaId"])


def feature_job(root: Path, name: str, start: dt.date) -> JobConfig:
    """A feature table of the ledger's transactions (the spine) from two sources: the account's latest risk score
    as of TrxDT (asof, a score valid up to 30 days before, delivered up to 2 days late), and the payment engine's
    record of the transaction (left, the seed's tolerances; a transaction may have two records, told apart by
    SepaId). A row is final when both sources are."""
    payment = {"name": "payment", "path": str(root / "payments"), "how": "left", "join_cols": ["TrxId"],
               "look_back_time": LOOK_BACK_TIME, "max_waiting_time": MAX_WAITING_TIME, "keys": ["SepaId"]}  # fmt: skip
    return _ledger_job(root, name, start, {"features": [_risk(root), payment]})


def _risk(root: Path) -> dict[str, Any]:
    """The feature source of the account's latest risk score as of TrxDT: a score valid up to 30 days before,
    delivered up to 2 days late."""
    return {"name": "risk", "path": str(root / "risk_scores"), "how": "asof", "join_cols": ["AccountName"],
            "asof_col": "TrxDT", "asof_col_b": "ValidFrom", "look_back_time": 30, "max_waiting_time": 2,
            "columns": ["ScoreId", "Risk"]}  # fmt: skip


def scored_job(root: Path, name: str, upstream: JobConfig) -> JobConfig:
    """The chain's second job: the payments `upstream` (a `demo_job`) matched for good, each with its account's
    risk score as of the transaction (as in `feature_job`). It reads upstream's final rows, each dated by the day
    it became final, so it runs after upstream and up to upstream's watermark."""
    matched = ", ".join(str(int(code)) for code in (JoinType.SAME_TIME, JoinType.A_LATE, JoinType.B_LATE))
    spine = reading(upstream, f"JoinType IN ({matched})")
    # A matched payment of upstream is its TrxId, SepaId and the ledger record's RecDate (a corrected ledger record
    # is a second row of the same TrxId, which the same payment may match).
    target = {"path": str(root / f"target_{name}"), "keys": ["TrxId", "SepaId", "RecDate_A"]}
    state = {"path": str(root / "_deltainc")}
    return JobConfig.model_validate(
        {"name": name, "start_date": upstream.start_date, "source_a": spine, "join": {"alias_a": "Trx"},
         "features": [_risk(root)], "target": target, "state": state}
    )  # fmt: skip


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
    """A left join of A and B (shaped like the sample data) on TrxId, its target keyed by TrxId and SepaId; `state`
    set puts the job's state there rather than under the settings' state_dir."""
    _text = json.dumps  # a TOML basic string (JSON's escapes are TOML's)
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
