"""Spark's side of a table in S3: S3A's configuration and jars (hadoop-aws and the AWS SDK's S3 client, by the
Hadoop version pyspark ships) for the session that reaches it, and what `validate` says of Spark's commits there.
Where a table lives, as each library names it, is deltainc.settings' (`is_s3`, `storage_options`).

docs/production/object-storage.md says what makes the lock and the commits safe there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from deltainc.settings import StorageSettings, allows_http, uses_s3

__all__ = ["spark_conf", "s3_packages", "slim_s3_jars", "hadoop_version", "commit_warnings"]

# hadoop-aws's AWS SDK, by the Hadoop version pyspark ships: the S3 client alone instead of the whole SDK bundle
# (18 MB instead of 690 MB). Other Hadoop versions take hadoop-aws's own dependencies.
_SDK = {"3.5.0": "2.35.4"}


def spark_conf(storage: StorageSettings) -> dict[str, str]:
    """Spark's S3A configuration for `storage` (the default credential chain when it names no keys)."""
    prefix = "spark.hadoop.fs.s3a."
    conf: dict[str, str] = {}
    if storage.endpoint_url:
        conf[f"{prefix}endpoint"] = storage.endpoint_url
        conf[f"{prefix}connection.ssl.enabled"] = str(not allows_http(storage)).lower()
    if storage.region:
        conf[f"{prefix}endpoint.region"] = storage.region
    path_style = storage.path_style if storage.path_style is not None else storage.endpoint_url is not None
    conf[f"{prefix}path.style.access"] = str(path_style).lower()
    if storage.access_key_id and storage.secret_access_key is not None:
        conf[f"{prefix}access.key"] = storage.access_key_id
        conf[f"{prefix}secret.key"] = storage.secret_access_key.get_secret_value()
        if storage.session_token is not None:
            conf[f"{prefix}session.token"] = storage.session_token.get_secret_value()
            conf[f"{prefix}aws.credentials.provider"] = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
    return conf


def hadoop_version() -> str:
    """The Hadoop version pyspark ships (its hadoop-client-api jar), which hadoop-aws must match."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    for jar in sorted(jars.glob("hadoop-client-api-*.jar")):
        return jar.name.removeprefix("hadoop-client-api-").removesuffix(".jar")
    raise RuntimeError(f"no hadoop-client-api jar in {jars}: cannot tell which hadoop-aws to use")


def slim_s3_jars(version: str | None = None) -> bool:
    """Whether S3A's jars for this Hadoop come without the whole AWS SDK bundle (the tested line: about 18 MB)."""
    return (version or hadoop_version()) in _SDK


def s3_packages(version: str | None = None) -> tuple[list[str], list[str]]:
    """The Maven coordinates S3A needs beside Delta's, and those to leave out of the resolution."""
    version = version or hadoop_version()
    packages = [f"org.apache.hadoop:hadoop-aws:{version}"]
    excludes: list[str] = []
    sdk = _SDK.get(version)
    if sdk is not None:
        packages += [f"software.amazon.awssdk:s3:{sdk}", f"software.amazon.awssdk:s3-transfer-manager:{sdk}"]
        excludes = [
            "software.amazon.awssdk:bundle",
            "org.apache.hadoop:hadoop-client-api",
            "org.apache.hadoop:hadoop-client-runtime",
        ]
    return packages, excludes


_MULTI_WRITER_STORES = ("S3DynamoDBLogStore",)


def commit_warnings(target_locations: Iterable[str | None], conf: Mapping[str, str]) -> list[str]:
    """What `validate` says of a target in S3 when Spark's commits there are atomic for one driver only: Delta's
    default S3 log store (S3SingleDriverLogStore) writes a commit without a conditional write."""
    store = conf.get("spark.delta.logStore.s3a.impl") or conf.get("spark.delta.logStore.s3.impl") or ""
    if not uses_s3(target_locations) or store.endswith(_MULTI_WRITER_STORES):
        return []
    return [
        "target.path is in S3, where Delta's commits from Spark are atomic for one driver only (its default "
        "S3SingleDriverLogStore). deltainc's lock, a conditional write to S3, lets one run of this job write at "
        "a time; nothing else may write the target while a run holds it, unless [spark.conf] sets "
        "spark.delta.logStore.s3a.impl = io.delta.storage.S3DynamoDBLogStore (with io.delta:delta-storage-s3-"
        "dynamodb's jar and a DynamoDB table; docs/production/object-storage.md)"
    ]
