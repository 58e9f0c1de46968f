"""One key's history in a job's target (`explain`): each commit that wrote a row of the key (its version, time,
outcome and RecDate) with the run and window whose run-log row names that commit.

Bounded either way: only the commits of the runs whose windows reach the key's units are read: their log entries
(one Spark read of their JSON files). Where the target keeps a change data feed and the files its changes of those
versions are read from are all still there, those changes filtered on the key; else, of the files those commits
added, those whose partition values and statistics may hold the key (`key_files.may_hold`), read as Parquet
filtered on it. What was read is said in `KeyHistory.read`.

An old commit's files outlive it only until a `VACUUM` (7 days' retention by default): the history reads the files
still there (`present_files`) and says which commits' files are gone, as it says which commit files the log's
retention removed. The rows of those commits are not known any more; the key's current rows are read elsewhere.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from pyspark.errors import AnalysisException
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from deltainc.join.options import JoinType
from deltainc.pipeline.delta.key_files import may_hold
from deltainc.pipeline.delta.present_files import present_files
from deltainc.pipeline.delta.sql import detail
from deltainc.pipeline.job.job_config import JobConfig
from deltainc.time_units import TimeUnit, parse_point

__all__ = ["KeyHistory", "key_history", "key_equal", "runs_reaching"]


@dataclass(frozen=True)
class KeyHistory:
    """The commits that wrote the key's rows, oldest first (dicts: version, time, outcome, inc_col, run_id,
    command, window), what was read to find them, how many data files were read, and the versions whose files that
    may hold the key VACUUM removed (their rows are not in `entries`)."""

    entries: tuple[dict[str, Any], ...]
    read: str
    files_read: int = 0
    vacuumed: tuple[int, ...] = ()


def key_equal(values: Mapping[str, Any]) -> Column:
    """The rows whose columns hold `values` (column -> value): one key, as a filter."""
    return functools.reduce(operator.and_, [F.col(f"`{name}`") == F.lit(value) for name, value in values.items()])


def runs_reaching(
    runs: Sequence[Mapping[str, Any]], first: int, last: int, uom: TimeUnit
) -> dict[int, Mapping[str, Any]]:
    """The run-log rows (by the target version they committed) whose window reaches units [first, last]; a row
    that names a version but no window (a migration) is kept too.

    Example: a daily run of 2025-03-09 reaches the units of 2025-03-07 .. 2025-03-17.
    """
    chosen: dict[int, Mapping[str, Any]] = {}
    for run in runs:
        version = run.get("target_version")
        if version is None:
            continue
        start, end = run.get("window_start"), run.get("window_end")
        if (
            start is None
            or end is None
            or (
                parse_point(str(start), "window_start", uom) <= last
                and first <= parse_point(str(end), "window_end", uom)
            )
        ):
            chosen[int(version)] = run
    return chosen


def _entry(version: int, when: Any, code: Any, day: Any, inc: str, run: Mapping[str, Any] | None) -> dict[str, Any]:
    window = f"{run.get('window_start')}..{run.get('window_end')}" if run else None
    return {"version": version, "time": when, "outcome": JoinType(int(code)).outcome, inc: day,
            "run_id": (run or {}).get("run_id"), "command": (run or {}).get("command"), "window": window}  # fmt: skip


def _ranges(versions: Sequence[int]) -> list[tuple[int, int]]:
    """`versions` (sorted) as runs of consecutive versions, first and last: ``[3, 4, 5, 9]`` -> ``[(3, 5), (9, 9)]``."""
    found: list[tuple[int, int]] = []
    for version in versions:
        if found and found[-1][1] == version - 1:
            found[-1] = (found[-1][0], version)
        else:
            found.append((version, version))
    return found


def _feed_files(actions: Sequence[Mapping[str, Any]]) -> list[str]:
    """The files a commit's changes are read from: its change data (`cdc`) when it wrote some, else the data files
    it added and removed."""
    cdc = [a["cdc"]["path"] for a in actions if "cdc" in a]
    if cdc:
        return [unquote(path) for path in cdc]
    return [unquote(a[kind]["path"]) for a in actions for kind in ("add", "remove")
            if kind in a and a[kind].get("dataChange", True)]  # fmt: skip


def _from_change_feed(spark: SparkSession, path: str, job: JobConfig, keys: Mapping[str, Any],
                      runs: Mapping[int, Mapping[str, Any]]) -> KeyHistory:  # fmt: skip
    """The feed of the versions of `runs` (each run of consecutive versions one read, all in one Spark job)."""
    inc, versions = job.join.inc_col, sorted(runs)
    feed = spark.read.format("delta").option("readChangeFeed", "true")
    reads = [feed.option("startingVersion", s).option("endingVersion", e).load(path) for s, e in _ranges(versions)]
    changes = functools.reduce(lambda one, other: one.unionByName(other), reads)
    written = changes.where(key_equal(keys) & F.col("_change_type").isin("insert", "update_postimage"))
    rows = written.select("_commit_version", "_commit_timestamp", "JoinType", inc)
    entries = [_entry(v, when, code, day, inc, runs.get(v)) for v, when, code, day in rows.collect()]
    read = f"the change data feed of {len(versions)} commit(s) (versions {versions[0]}..{versions[-1]}), on the key"
    return KeyHistory(tuple(sorted(entries, key=operator.itemgetter("version"))), read)


def _lines(spark: SparkSession, paths: list[str]) -> list[Any]:
    """The lines of the text files `paths` (globs allowed), each with its file's name."""
    return spark.read.text(paths).select("value", F.col("_metadata.file_name")).collect()


def _log_lines(spark: SparkSession, root: str, versions: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
    """Each commit's actions, by version, read in one Spark job from the log's JSON files (a commit whose file the
    log's retention removed is left out)."""
    names = [f"{version:020d}" for version in versions]
    # One file by its name; more as two globs (a single glob makes Spark look for a streaming sink's metadata in it
    # and log the file it did not find). A glob whose commits the log's retention removed fails alone.
    parts = [f"{root}/_delta_log/{names[0]}.json"] if len(names) == 1 else [
        f"{root}/_delta_log/{{{','.join(half)}}}.json" for half in (names[: len(names) // 2], names[len(names) // 2 :])
    ]  # fmt: skip
    found: list[Any] = []
    try:
        found = _lines(spark, parts)
    except AnalysisException:  # a commit file not there any more: what is left, part by part
        for part in parts:
            try:
                found += _lines(spark, [part])
            except AnalysisException:
                continue
    commits: dict[int, list[dict[str, Any]]] = {}
    for text, name in found:
        if text.strip():
            commits.setdefault(int(name.split(".")[0]), []).append(json.loads(text))
    return commits


def _may_hold_key(
    add: Mapping[str, Any], keys: Mapping[str, Any], inc: str, first: int, last: int, uom: TimeUnit
) -> bool:
    """Whether a file a commit added may hold a row of the key in units [first, last]."""
    if not add.get("dataChange", True) or add.get("deletionVector"):
        return False  # a compaction's copy, or a file re-added with rows deleted: no row written
    partitions = add.get("partitionValues") or {}
    stats = json.loads(add.get("stats") or "{}")
    low, high = stats.get("minValues") or {}, stats.get("maxValues") or {}
    for name, value in keys.items():
        if not may_hold(value, low.get(name), high.get(name), partitions.get(name)):
            return False
    bounds = [partitions.get(inc)] if partitions.get(inc) is not None else [low.get(inc), high.get(inc)]
    try:
        units = [
            parse_point(str(bound)[:10] if uom == TimeUnit.DAY else str(bound), inc, uom) for bound in bounds if bound
        ]
    except Exception:  # a value parse_point does not read (e.g. a zone suffix): not ruled out
        return True
    return not units or (min(units) <= last and first <= max(units))


def _versions(numbers: Sequence[int]) -> str:
    return ", ".join(str(n) for n in sorted(numbers))


def _from_commits(spark: SparkSession, root: str, job: JobConfig, keys: Mapping[str, Any], first: int, last: int,
                  runs: Mapping[int, Mapping[str, Any]], commits: Mapping[int, Sequence[Mapping[str, Any]]],
                  why: str = "") -> KeyHistory:  # fmt: skip
    """The rows of the key in the files that the commits of `runs` (their log entries: `commits`) added and that
    are still there; `why` says why the change data feed was not read."""
    inc, uom, versions = job.join.inc_col, TimeUnit(job.join.time_uom), sorted(runs)
    when: dict[int, Any] = {}
    added: dict[str, tuple[int, Mapping[str, str], str]] = {}  # file name -> version, partition values, path
    for version, actions in commits.items():
        for action in actions:
            if "commitInfo" in action and action["commitInfo"].get("timestamp") is not None:
                stamp = int(action["commitInfo"]["timestamp"]) / 1000
                when[version] = dt.datetime.fromtimestamp(stamp, dt.timezone.utc)
            add = action.get("add")
            if add and _may_hold_key(add, keys, inc, first, last, uom):
                path = unquote(add["path"])
                added[path.rsplit("/", 1)[-1]] = (version, add.get("partitionValues") or {}, path)
    gone = len(versions) - len(commits)
    read = f"{why}the log entries of {len(commits)} commit(s) of the runs whose windows reach the key"
    read += f" ({gone} removed by the log's retention)" if gone else ""
    read += f", and {len(added)} file(s) they added that may hold it"
    there = present_files(spark, root, [path for _, _, path in added.values()])
    vacuumed = sorted({version for version, _, path in added.values() if path not in there})
    if vacuumed:
        missing = len(added) - len(there)
        read += f"; {missing} of them, of {len(vacuumed)} commit(s), removed by VACUUM (versions {_versions(vacuumed)})"
        read += ": what those commits wrote of the key is not known any more"
    added = {name: found for name, found in added.items() if found[2] in there}
    if not added:
        return KeyHistory((), read, 0, tuple(vacuumed))
    paths = [path if "://" in path else f"{root}/{path}" for _, _, path in added.values()]
    frame = spark.read.parquet(*paths)
    in_files = [name for name in keys if name in frame.columns]
    if in_files:
        frame = frame.where(key_equal({name: keys[name] for name in in_files}))
    columns = ["JoinType", *([inc] if inc in frame.columns else [])]
    rows = frame.select(*columns, F.col("_metadata.file_name").alias("__file")).collect()
    entries = []
    for row in (found.asDict() for found in rows):
        version, partitions, _ = added[row["__file"]]
        day = row[inc] if inc in row else partitions.get(inc)
        entries.append(_entry(version, when.get(version), row["JoinType"], day, inc, runs.get(version)))
    entries.sort(key=operator.itemgetter("version"))
    return KeyHistory(tuple(entries), read, len(paths), tuple(vacuumed))


def _history(spark: SparkSession, root: str, job: JobConfig, keys: Mapping[str, Any], first: int, last: int,
             runs: Mapping[int, Mapping[str, Any]]) -> KeyHistory:  # fmt: skip
    """The change data feed of the versions of `runs` when the target keeps one and every file it is read from is
    still there; else the files those commits added."""
    versions = sorted(runs)
    commits = _log_lines(spark, root, versions)
    if not job.target.change_data_feed:
        return _from_commits(spark, root, job, keys, first, last, runs, commits)
    needed = {version: _feed_files(actions) for version, actions in commits.items()}
    there = present_files(spark, root, {path for paths in needed.values() for path in paths})
    lost = sorted(version for version, paths in needed.items() if any(path not in there for path in paths))
    gone = sorted(set(versions) - set(commits))
    if not lost and not gone:
        return _from_change_feed(spark, root, job, keys, runs)
    cause = " and ".join([*([f"VACUUM removed files of versions {_versions(lost)}"] if lost else []),
                          *([f"the log's retention removed versions {_versions(gone)}"] if gone else [])])  # fmt: skip
    why = f"not the change data feed ({cause}): "
    return _from_commits(spark, root, job, keys, first, last, runs, commits, why)


def key_history(spark: SparkSession, job: JobConfig, keys: Mapping[str, Any], first: int, last: int,
                runs: Sequence[Mapping[str, Any]]) -> KeyHistory:  # fmt: skip
    """The commits that wrote a row of the key `keys` in `job`'s target, for rows in units [first, last].

    Args:
        spark: the session that reads the target.
        job: the job whose target is read.
        keys: the key's columns and values, typed.
        first: the first unit a row of the key can have (its A row's).
        last: the last (its A row's unit plus max_waiting_time).
        runs: the job's run-log rows (any order).

    Example: ``key_history(spark, job, {"TrxId": 6}, d7, d17, runs).entries[-1]["outcome"]`` -> "a_timed_out".
    """
    chosen = runs_reaching(runs, first, last, TimeUnit(job.join.time_uom))
    if not chosen:
        return KeyHistory((), "not read: no run's window reaches the key's days")
    location = job.target.path
    if location is None:
        found = detail(spark, job.target)
        location = None if found is None else str(found["location"])
    if location is None:
        return KeyHistory((), "not read: the target's location is not known")
    return _history(spark, location.rstrip("/"), job, keys, first, last, chosen)
