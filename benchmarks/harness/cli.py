"""The command line of `python -m benchmarks.run`: its options, checked and derived (sizes, reload days, stream day),
with the scenarios and their goals in `--help`."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.harness.registry import NAMES, describe, select

__all__ = ["DEFAULT_SIZES", "parse_args"]

DEFAULT_SIZES = (30, 180, 365)


def _int_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got {text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError("expected at least one number")
    return values


def _scenarios(text: str) -> tuple[str, ...]:
    try:
        return select(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line's options, checked, with the values derived from them."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run",
        description="Benchmark deltainc's daily run against a naive full recompute, a historic reload,\n"
        "Structured Streaming and a read-only floor; write the results as Markdown.",
        epilog=describe(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    size = parser.add_argument_group("sizes")
    size.add_argument("--rows-per-day", type=int, default=100_000, help="R: rows per day per source (default 100000)")
    size.add_argument("--days", type=int, default=365, help="days of history generated (default 365)")
    size.add_argument(
        "--sizes",
        type=_int_list,
        default=list(DEFAULT_SIZES),
        help="history sizes D for daily, growth and floor (default 30,180,365); sizes above --days are dropped "
        "and --days itself is always the largest",
    )
    size.add_argument("--reload-days", type=int, default=90, help="days reloaded by reload (default 90)")
    size.add_argument("--large", action="store_true", help="reload reloads 365 days (capped at --days)")
    size.add_argument(
        "--stream-day", type=int, default=None, help="the day stream processes (default: the smallest size)"
    )
    run = parser.add_argument_group("measuring")
    run.add_argument("--repeat", type=int, default=3, help="repetitions of every timing (default 3)")
    run.add_argument(
        "--max-seconds",
        type=float,
        default=180.0,
        help="time budget per measurement: no repetition is started that would take it past this many seconds "
        "(estimated from the ones before; at least one always runs; 0 = no budget; default 180)",
    )
    run.add_argument(
        "--scenarios",
        type=_scenarios,
        default=NAMES,
        metavar="NAME,...",
        help="which scenarios, comma-separated: names (listed below) or their old numbers (default: all; "
        "connect needs Spark 4)",
    )
    run.add_argument("--look-back", type=int, default=2, help="look_back_time of the job, days (default 2)")
    run.add_argument("--max-wait", type=int, default=11, help="max_waiting_time of the job, days (default 11)")
    run.add_argument(
        "--partition-by",
        default="default",
        help="target partition columns, comma-separated; '' = unpartitioned; default: the job's default layout "
        "(partitioned by the output RecDate)",
    )
    where = parser.add_argument_group("where")
    where.add_argument("--data", type=Path, default=Path("bench-data"), help="bench data folder (default bench-data)")
    where.add_argument(
        "--out",
        type=Path,
        default=Path("benchmarks/results/RESULTS.md"),
        help="results file; the raw samples go beside it as .json (default benchmarks/results/RESULTS.md)",
    )
    where.add_argument("--regenerate", action="store_true", help="write the sources again even if they match")
    spark = parser.add_argument_group("spark")
    spark.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    spark.add_argument("--shuffle-partitions", type=int, default=8, help="spark.sql.shuffle.partitions (default 8)")
    spark.add_argument("--driver-memory", default="4g", help="spark.driver.memory (default 4g)")
    args = parser.parse_args(argv)
    _check(parser, args)
    return args


def _check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Validate and derive: sizes, reload days, stream day."""
    if args.rows_per_day < 1 or args.days < 2:
        parser.error(f"--rows-per-day must be >= 1 and --days >= 2 (got {args.rows_per_day}, {args.days})")
    if args.repeat < 1:
        parser.error(f"--repeat: expected >= 1, got {args.repeat}")
    small = [s for s in args.sizes if s < 2]
    if small:
        parser.error(f"--sizes: every size must be >= 2 (a daily run needs a day before it), got {small}")
    args.sizes = sorted({s for s in args.sizes if s <= args.days} | {args.days})
    if args.large:
        args.reload_days = 365
    if args.reload_days < 1:
        parser.error(f"--reload-days: expected >= 1, got {args.reload_days}")
    args.reload_days = min(args.reload_days, args.days)
    if args.stream_day is None:
        args.stream_day = args.sizes[0]
    if not 2 <= args.stream_day <= args.days:
        parser.error(f"--stream-day: expected 2..{args.days}, got {args.stream_day}")
    args.partition_by = (
        None if args.partition_by == "default" else [c.strip() for c in args.partition_by.split(",") if c.strip()]
    )
