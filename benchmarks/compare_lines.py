"""Side by side: the same `python -m benchmarks.run` on two Spark lines, from their RESULTS json files.

    python -m benchmarks.compare_lines benchmarks/results/LINE_spark35.json benchmarks/results/LINE_spark4.json \
        [--out benchmarks/results/SPARK_LINES.md]

Each file is one run's raw samples (`--out X.md` writes X.json beside it); the runs must have the same options.
Medians in seconds, Spark jobs as counted by the run (the median of its repetitions), Delta commits per daily run.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
from pathlib import Path
from typing import Any

_SKIP_OPTIONS = ("out", "data")


def _cell(measure: dict[str, Any] | None) -> str:
    """`median s (jobs)` of one measurement, or a dash when it was not run."""
    if not measure:
        return "-"
    counts = measure.get("counts") or []
    jobs = f" ({statistics.median(counts):.0f} jobs)" if counts else ""
    return f"{measure['median_s']:.2f}{jobs}"


def _rows(results: list[dict[str, Any]]) -> list[str]:
    rows = []
    for i, entry in enumerate(results[0]["daily"]):
        days = entry["days"]
        others = [r["daily"][i] for r in results]
        for key, label in (
            ("daily", "daily run"),
            ("nothing_pending", "run with nothing pending"),
            ("rerun", "rerun of the day"),
            ("floor_append", "floor: join the window and append"),
            ("naive", "naive full recompute"),
        ):
            rows.append(f"| D = {days}: {label} | " + " | ".join(_cell(o.get(key)) for o in others) + " |")
        commits = " | ".join("/".join(str(c) for c in o.get("commits") or []) or "-" for o in others)
        rows.append(f"| D = {days}: Delta commits (target / run log / lock) | {commits} |")
        ratio = " | ".join(
            f"{o['naive']['median_s'] / o['daily']['median_s']:.1f}x" if o.get("naive") and o.get("daily") else "-"
            for o in others
        )
        rows.append(f"| D = {days}: naive / daily | {ratio} |")
    if all(r.get("reload") for r in results):
        reloads = [r["reload"] for r in results]
        rows.append(
            f"| reload of {reloads[0]['days']} days in one run | "
            + " | ".join(_cell(x["reload"]) for x in reloads)
            + " |"
        )
        rows.append("| the same days as daily runs | " + " | ".join(_cell(x["daily"]) for x in reloads) + " |")
    return rows


def _options(result: dict[str, Any]) -> dict[str, Any]:
    """A run's options as compared across runs: no paths, the scenarios by name (older runs give numbers)."""
    options = {k: v for k, v in result["options"].items() if k not in _SKIP_OPTIONS}
    if "scenarios" in options:
        from benchmarks.harness.registry import select

        options["scenarios"] = list(select(",".join(map(str, options["scenarios"]))))
    return options


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path, nargs="+", help="RESULTS json files, one per line")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    results = [json.loads(path.read_text()) for path in args.results]
    options = [_options(r) for r in results]
    if any(o != options[0] for o in options):
        parser.error("the runs were made with different options; compare like with like")
    names = [f"Spark {r['versions']['Spark (JVM)']} / Delta {r['versions']['delta-spark']}" for r in results]
    words = shlex.split(results[0]["command"])
    shown = " ".join(
        w for i, w in enumerate(words) if w not in ("--out", "--data") and words[i - 1] not in ("--out", "--data")
    )
    lines = [
        "# The benchmark on the Spark lines, side by side",
        "",
        f"Each column is one run of `{shown}` (each line with its own `--data` and `--out`), one after the other on "
        "this machine; load average at each start: "
        + ", ".join(
            f"{n}: {r['machine'].get('load average at start (1/5/15 min)', '?')}"
            for n, r in zip(names, results, strict=True)
        )
        + ".",
        "",
        "| measurement | " + " | ".join(names) + " |",
        "|---|" + "---:|" * len(names),
        *_rows(results),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
