"""One benchmark run: start the session, generate (or reuse) the sources, run the chosen scenarios in the registry's
order, one failure not losing the others' numbers, and write RESULTS.md (and its raw samples) after each."""

from __future__ import annotations

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

from benchmarks.bench import Bench
from benchmarks.data import ensure_sources
from benchmarks.harness.cli import parse_args
from benchmarks.harness.context import START, Context
from benchmarks.harness.registry import SCENARIOS, plan
from benchmarks.machine import load_average, machine_info, spark_conf, versions
from benchmarks.report.render import render
from benchmarks.report.results import Results
from benchmarks.timing import Measurement
from deltainc.demo.sample_data import SampleSpec
from deltainc.settings import Settings, SparkSettings
from deltainc.spark import get_spark

__all__ = ["main"]

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"


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
    """Run the chosen scenarios and write RESULTS.md; 1 when a scenario failed (its error is in the results)."""
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
