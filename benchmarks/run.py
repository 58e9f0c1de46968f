"""`python -m benchmarks.run`: generate (or reuse) the sources, run the scenarios, write RESULTS.md.

    python -m benchmarks.run --rows-per-day 100000 --days 365 --reload-days 90 --repeat 3 \
        [--large] [--scenarios daily,growth,reload] [--out benchmarks/results/RESULTS.md] [--data bench-data]

The scenarios, with what each measures and its goal, are benchmarks.harness.SCENARIOS (`--help` lists them);
benchmarks/README.md describes them at length.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import logging
import shlex
import shutil
import sys
import time
import traceback
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.data import ensure_sources
from benchmarks.harness import NAMES, SCENARIOS, START, Context, describe, plan, select
from benchmarks.report import Results, load_average, machine_info, render, spark_conf, versions
from benchmarks.scenarios import Bench
from benchmarks.timing import Measurement
from deltainc.demo.sample_data import SampleSpec
from deltainc.settings import Settings, SparkSettings
from deltainc.spark import get_spark

DEFAULT_SIZES = (30, 180, 365)
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"


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


def _echo_factory(started: float) -> Callable[[str], None]:
    def echo(message: str) -> None:
        print(f"[{time.perf_counter() - started:7.1f} s] {message}", file=sys.stderr, flush=True)

    return echo


def _raw(results: Results) -> dict[str, Any]:
    """The raw samples, for RESULTS.json."""

    def convert(value: Any) -> Any:
        if isinstance(value, Measurement):
            return value.as_dict()
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {f.name: convert(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, dict):
            return {str(k): convert(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [convert(v) for v in value]
        if isinstance(value, (dt.date, dt.datetime, Path)):
            return str(value)
        return value

    converted: dict[str, Any] = convert(results)
    return converted


def _write(results: Results, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(results, SCENARIOS))
    out.with_suffix(".json").write_text(json.dumps(_raw(results), indent=1, default=str))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    echo = _echo_factory(started)
    logging.getLogger("deltainc").setLevel(logging.WARNING)
    data = args.data.absolute()
    work = data / "work"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)

    settings = Settings(
        spark=SparkSettings(
            master=args.master,
            app_name="deltainc-bench",
            shuffle_partitions=args.shuffle_partitions,
            ui_enabled=False,
            log_level="ERROR",
            conf={
                "spark.driver.memory": args.driver_memory,
                "spark.sql.streaming.stateStore.providerClass": ROCKSDB,
            },
        ),
        warehouse_dir=work / "warehouse",
        state_dir=work / "_deltainc",
    )
    machine = machine_info()
    echo(f"starting Spark ({args.master}, driver memory {args.driver_memory})")
    spark = get_spark(settings)
    command = "python -m benchmarks.run " + shlex.join(sys.argv[1:] if argv is None else argv)
    results = Results(
        command=command.strip(),
        options={k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        started=dt.datetime.now(dt.timezone.utc),
        machine=machine,
        versions=versions(spark),
        conf=spark_conf(spark),
        sizes=args.sizes,
    )

    def phase(name: str, body: Callable[[], None]) -> None:
        echo(f"{name}")
        began = time.perf_counter()
        try:
            body()
        except Exception as exc:  # one failed scenario must not lose the others' numbers
            results.errors[name] = (
                f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
            )
            echo(f"  FAILED: {results.errors[name]}")
            traceback.print_exc()
        results.phases.append((name, time.perf_counter() - began))
        _write(results, args.out)

    chosen = frozenset(args.scenarios)
    bench = None
    if any(s.sources for s in SCENARIOS if s.name in chosen):
        spec = SampleSpec(start=START, days=args.days, rows_per_day=args.rows_per_day)

        def sources() -> None:
            results.sources = ensure_sources(spark, data, spec, regenerate=args.regenerate)

        phase(f"sources: {args.days} days x {args.rows_per_day} rows per day", sources)
        if results.sources is None:
            echo("no sources, nothing to measure")
            return 1
        bench = Bench(
            spark=spark,
            settings=settings,
            sources=results.sources,
            work=work,
            repeat=args.repeat,
            budget_s=args.max_seconds,
            look_back=args.look_back,
            max_wait=args.max_wait,
            partition_by=None if args.partition_by is None else tuple(args.partition_by),
            echo=echo,
        )
    for run, group in plan(args.scenarios):
        context = Context(spark, settings, args, chosen, results, group[0].name, echo, bench)
        phase(f"{', '.join(s.name for s in group)}: {group[0].measures}", partial(run, context))

    results.total_s = time.perf_counter() - started
    results.load_end = load_average()
    _write(results, args.out)
    spark.stop()
    echo(f"wrote {args.out} and {args.out.with_suffix('.json')} in {results.total_s / 60:.1f} min")
    print(render(results, SCENARIOS))
    return 1 if results.errors else 0


if __name__ == "__main__":
    sys.exit(main())
