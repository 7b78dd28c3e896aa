"""to_spark(table=...): a file-format table of the session catalog is landed like a path (batches
staged and committed into the table's own location, then the catalog refreshed), so a crash and a
re-run give exactly the input rows, and a later process with a fresh in-memory catalog appends to the
same table instead of failing on its existing location."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rstreams import Flowable
from rstreams.spark import to_spark

pytestmark = pytest.mark.spark

_SCRIPT = """
import sys
from rstreams import Flowable
from rstreams.spark import session, to_spark
s = session("local[1]", spark_sql_warehouse_dir={warehouse!r}, spark_ui_enabled=False,
            spark_sql_shuffle_partitions=1, spark_driver_extraJavaOptions="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
r = to_spark(Flowable.range(0, 500).map(lambda i: {{"id": i}}), table="events", name="events-load", batch_rows=100, spark=s, progress=False)
print("rows", r.rows, "skipped", r.skipped_rows, "table", s.table("events").count())
"""


def _run(warehouse: Path, **env_extra: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, **env_extra)
    script = _SCRIPT.format(warehouse=str(warehouse))
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=240)


def test_table_crash_between_write_and_commit_then_rerun_in_a_new_process_is_exactly_once(
    spark: Any, tmp_path: Path
) -> None:
    crashed = _run(tmp_path, RSTREAMS_SINK_FAULT="commit:2")
    assert crashed.returncode == 70, crashed.stderr[-2000:]
    location = tmp_path / "events"
    # batch 2 is staged, not visible: the table's files hold exactly batches 0 and 1
    ids = [r[0] for r in spark.read.parquet(str(location)).collect()]
    assert sorted(ids) == list(range(200))
    # the re-run is a new process whose in-memory catalog does not know the table: it resumes the
    # commit log in the table's location and registers the table over it
    rerun = _run(tmp_path)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "rows 300 skipped 200 table 500" in rerun.stdout
    ids = [r[0] for r in spark.read.parquet(str(location)).collect()]
    assert sorted(ids) == list(range(500)) and len(ids) == len(set(ids))
    assert not os.listdir(location / "_rstreams" / "landings" / "events-load" / "staging")


def test_table_overwrite_replaces_rows_and_schema(spark: Any) -> None:
    to_spark(Flowable.range(0, 50).map(lambda i: {"x": i}), table="rs_over", mode="overwrite", spark=spark, progress=False)
    r = to_spark(Flowable.range(0, 7).map(lambda i: {"y": str(i)}), table="rs_over", mode="overwrite", spark=spark, progress=False)
    assert r.rows == 7
    t = spark.table("rs_over")
    assert t.columns == ["y"]
    assert sorted(row[0] for row in t.collect()) == [str(i) for i in range(7)]


def test_table_append_in_another_database_refreshes_the_catalog(spark: Any) -> None:
    spark.sql("CREATE DATABASE IF NOT EXISTS rs_db")
    to_spark(Flowable.range(0, 5).map(lambda i: {"x": i}), table="rs_db.tt", spark=spark, progress=False)
    assert spark.table("rs_db.tt").count() == 5  # read once: the listing is cached until refreshed
    to_spark(Flowable.range(5, 5).map(lambda i: {"x": i}), table="rs_db.tt", spark=spark, progress=False)
    assert sorted(r[0] for r in spark.table("rs_db.tt").collect()) == list(range(10))


def test_partitioned_table_falls_back_to_spark_append_with_its_partitioning(spark: Any) -> None:
    spark.sql("CREATE TABLE IF NOT EXISTS rs_part (a BIGINT, p BIGINT) USING parquet PARTITIONED BY (p)")
    r = to_spark(Flowable.range(0, 6).map(lambda i: {"a": i, "p": i % 2}), table="rs_part", spark=spark, progress=False)
    assert r.rows == 6
    got = sorted((row["a"], row["p"]) for row in spark.table("rs_part").collect())
    assert got == [(i, i % 2) for i in range(6)]


def test_to_spark_leaves_the_sessions_arrow_settings_as_they_were(spark: Any, tmp_path: Path) -> None:
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    before = spark.conf.get(key)
    to_spark(Flowable.range(0, 1000).map(lambda i: {"id": i}), path=str(tmp_path / "o"), batch_rows=300, spark=spark, progress=False)
    assert spark.conf.get(key) == before


def test_from_dataframe_of_a_streaming_dataframe_points_to_from_stream(spark: Any) -> None:
    from rstreams.spark import from_dataframe

    streaming = spark.readStream.format("rate").load()
    with pytest.raises(TypeError, match="from_stream"):
        from_dataframe(streaming)
