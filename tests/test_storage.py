"""deltainc.settings and deltainc.storage turn a table's location and the [storage] settings into what Spark
(S3A) and delta-rs each need. Pure functions: no Spark, no server."""

from __future__ import annotations

from pathlib import Path

import pytest

from deltainc.pipeline.job.job_config import load_job
from deltainc.settings import StorageSettings, load_settings, resolved, rs_location, rs_options, spark_location, uses_s3
from deltainc.storage import commit_warnings, s3_packages, spark_conf

pytestmark = pytest.mark.pure

MINIO = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_ACCESS_KEY_ID": "key", "AWS_SECRET_ACCESS_KEY": "s3cret"}


@pytest.mark.parametrize("location", ["s3://b/t", "s3a://b/t", "s3n://b/t", "S3A://b/t"])
def test_spark_names_s3_through_s3a_and_delta_rs_as_s3(location: str) -> None:
    assert spark_location(location) == "s3a://b/t" and rs_location(location) == "s3://b/t"


def test_a_local_path_is_left_as_it_is_and_needs_no_s3a() -> None:
    assert spark_location("/data/t") == rs_location("/data/t") == "/data/t"
    assert not uses_s3(["/data/a", "file:/data/b", None]) and uses_s3(["/data/a", "s3a://b/t"])


def test_unset_settings_are_taken_from_the_aws_variables_and_given_ones_win() -> None:
    given = StorageSettings(endpoint_url="http://other:9000")
    storage = resolved(given, MINIO)
    assert storage.endpoint_url == "http://other:9000" and storage.access_key_id == "key"
    assert storage.secret_access_key is not None and storage.secret_access_key.get_secret_value() == "s3cret"


def test_delta_rs_and_spark_get_the_same_endpoint_and_keys_and_plain_http_only_for_an_http_endpoint() -> None:
    storage = resolved(StorageSettings(), MINIO)
    assert rs_options(storage) == {**MINIO, "AWS_ALLOW_HTTP": "true"}
    conf = spark_conf(storage)
    assert conf["spark.hadoop.fs.s3a.endpoint"] == MINIO["AWS_ENDPOINT_URL"]
    assert conf["spark.hadoop.fs.s3a.connection.ssl.enabled"] == "false"
    assert conf["spark.hadoop.fs.s3a.path.style.access"] == "true"  # a custom endpoint: bucket in the path
    assert (conf["spark.hadoop.fs.s3a.access.key"], conf["spark.hadoop.fs.s3a.secret.key"]) == ("key", "s3cret")
    aws = resolved(StorageSettings(), {"AWS_REGION": "eu-west-1"})
    assert "AWS_ALLOW_HTTP" not in rs_options(aws) and "spark.hadoop.fs.s3a.access.key" not in spark_conf(aws)


def test_no_secret_is_printed_with_the_settings() -> None:
    settings = load_settings(storage={"access_key_id": "key", "secret_access_key": "s3cret", "session_token": "t0k"})
    shown = f"{settings} {settings!r} {settings.model_dump()} {settings.model_dump_json()}"
    assert "s3cret" not in shown and "t0k" not in shown


def test_the_tested_hadoop_takes_the_s3_client_alone_not_the_whole_sdk_bundle() -> None:
    packages, excludes = s3_packages("3.5.0")
    assert packages[0] == "org.apache.hadoop:hadoop-aws:3.5.0" and "software.amazon.awssdk:bundle" in excludes
    assert s3_packages("3.3.4") == (["org.apache.hadoop:hadoop-aws:3.3.4"], [])


def test_validate_warns_of_a_target_in_s3_unless_a_multi_writer_log_store_is_set() -> None:
    (warning,) = commit_warnings(["s3a://b/target"], {})
    assert "S3SingleDriverLogStore" in warning and "spark.delta.logStore.s3a.impl" in warning
    dynamo = {"spark.delta.logStore.s3a.impl": "io.delta.storage.S3DynamoDBLogStore"}
    assert commit_warnings(["s3a://b/target"], dynamo) == [] and commit_warnings(["/local/target"], {}) == []


def test_a_job_file_may_name_s3_as_s3_and_spark_reads_it_as_s3a(tmp_path: Path) -> None:
    path = tmp_path / "j.toml"
    path.write_text(
        'name = "j"\nstart_date = 2025-01-01\n[source_a]\npath = "s3://b/a"\n[source_b]\npath = "s3n://b/b"\n'
        '[join]\nhow = "left"\njoin_cols = ["k"]\n[target]\npath = "s3a://b/t"\nkeys = ["k"]\n'
        '[state]\npath = "s3://b/state"\n'
    )
    job = load_job(path)
    assert job.locations == ("s3a://b/a", "s3a://b/b", "s3a://b/t", "s3a://b/state") and job.on_s3
