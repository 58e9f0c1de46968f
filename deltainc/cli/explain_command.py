"""`deltainc explain JOB KEY=VALUE ...`: one key of the job's target, its A and B rows, its rows in the target and
why each A row came out as it did. Exit 0 when the key was found in A, B or the target, 1 when nowhere."""

from __future__ import annotations

from typing import Any

from deltainc.cli.context import Context
from deltainc.cli.output import EXIT_FAILURE, EXIT_OK, emit_json
from deltainc.errors import ConfigError

__all__ = ["explain", "key_values"]


def key_values(pairs: list[str]) -> dict[str, str]:
    """`["TrxId=6"]` as `{"TrxId": "6"}`; a pair without `=` is a ConfigError naming it."""
    found: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ConfigError(f"{pair}: give each key as KEY=VALUE, e.g. TrxId=6")
        found[name] = value
    return found


def _line(row: dict[str, Any], columns: list[str]) -> str:
    return ", ".join(f"{c} {row[c]}" for c in columns if c in row)


def explain(ctx: Context) -> int:
    """`deltainc explain JOB KEY=VALUE [KEY=VALUE ...] [--json]`."""
    from deltainc.pipeline import explain_key, history_line

    job, _ = ctx.job(ctx.args.job)
    given = key_values(ctx.args.keys)
    found = explain_key(job, given, ctx.spark(), ctx.settings)
    code = EXIT_OK if found.found else EXIT_FAILURE
    if ctx.json:
        emit_json(found.document())
        return code
    join, inc = job.join, job.join.inc_col
    ctx.print(f"{job.name}: {' '.join(f'{k}={v}' for k, v in found.keys.items())} (watermark {found.watermark})")
    for row in found.a_rows:
        ctx.print(f"  A       {_line(row, [*job.target.keys, inc])}")
    for row in found.b_rows:
        ctx.print(f"  B       {_line(row, [*join.join_cols, *job.target.b_keys, inc])}")
    for row in found.target_rows:
        ctx.print(f"  target  {_line(row, ['JoinType', inc, 'IsFinal', 'WaitingTime', f'{inc}_{found.suffixes[1]}'])}")
    for reason in found.reasons:
        ctx.print(f"  why     {reason}")
    if found.history_read:
        ctx.print(f"  history {found.history_read}")
    if found.history:
        ctx.print(f"          {history_line(found.history, inc)}")
    for entry in found.history:
        run = (
            f"run {entry['run_id']}, window {entry['window']} ({entry['command']})"
            if entry["run_id"]
            else "no run-log row"
        )
        ctx.print(f"    version {entry['version']} ({entry['time']}): {entry['outcome']}, {inc} {entry[inc]} ({run})")
    counted = ", ".join(f"{table} {'not counted' if n is None else n}" for table, n in found.files.items())
    ctx.print(f"  files   read: {counted}")
    return code
