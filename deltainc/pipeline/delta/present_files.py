"""Which of a Delta table's files are still on its storage. An old commit's data files and change data stay in its
log after the table stopped using them, until `VACUUM` deletes them; a reader of old commits (`explain`'s history)
asks first which are left, so that it reads those and can say which are gone.

Listed, not opened: one listing through Spark's file sources (`DataFrame.inputFiles`, no Spark job), the same on a
local disk, HDFS or S3 and through Spark Connect. Each folder's files are one glob, `folder/{name,name}`; a glob that
matches none of its files fails the listing alone, so on such a failure each folder is listed by itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import unquote

from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

__all__ = ["present_files"]

_GLOB = "\\{}[]*?,"  # what Hadoop's glob reads as a pattern (partition values may hold some of it)


def _escaped(text: str) -> str:
    return "".join(f"\\{char}" if char in _GLOB else char for char in text)


def _listed(spark: SparkSession, globs: list[str]) -> set[str]:
    """The names of the files `globs` match; AnalysisException when one matches none."""
    # Never a single path: with one, Spark looks for a streaming sink's metadata in it and logs what it did not find.
    reader = spark.read.format("binaryFile").option("recursiveFileLookup", "true")  # no partition discovery
    return {
        unquote(uri.rsplit("/", 1)[-1]) for uri in reader.load(globs * 2 if len(globs) == 1 else globs).inputFiles()
    }


def present_files(spark: SparkSession, root: str, paths: Iterable[str]) -> set[str]:
    """Those of `paths` that are still there: each relative to the table's folder `root` (as its log gives it,
    unquoted) or an absolute URI.

    Args:
        spark: the session whose file systems list them.
        root: the table's folder, e.g. ``s3a://lake/cdr_rated``.
        paths: the files, e.g. ``["IsFinal=false/part-00000-....parquet"]``.

    Example: after a ``VACUUM ... RETAIN 0 HOURS``, ``present_files(spark, root, [removed, live]) == {live}``.
    """
    folders: dict[str, dict[str, str]] = {}  # folder -> file name -> the path as given
    for path in paths:
        full = path if "://" in path or path.startswith("/") else f"{root.rstrip('/')}/{path}"
        folder, _, name = full.rpartition("/")
        folders.setdefault(folder, {})[name] = path
    if not folders:
        return set()
    globs = {
        folder: f"{_escaped(folder)}/{{{','.join(_escaped(n) for n in names)}}}" for folder, names in folders.items()
    }
    try:
        listed = _listed(spark, list(globs.values()))
    except AnalysisException:  # some folder has none of its files left: each folder alone
        listed = set()
        for glob in globs.values():
            try:
                listed |= _listed(spark, [glob])
            except AnalysisException:
                continue
    return {path for names in folders.values() for name, path in names.items() if name in listed}
