"""``run_on_spark`` over a streaming DataFrame: Structured Streaming runs the pipeline's
``mapInArrow`` on the executors for every micro-batch, so each micro-batch's partitions are
partitions of the pipeline (state starts afresh in each), and the result is a streaming DataFrame
for any sink: ``foreachBatch``, or the driver through ``from_stream``."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from rstreams import Flowable
from rstreams.spark import from_stream, run_on_spark
from rstreams.testing import TestSubscriber

pytestmark = pytest.mark.spark

ROWS_PER_FILE = 9_000  # one file, one micro-batch, one partition of more than 8,192 rows


def _double_pipeline() -> Any:
    """A pipeline function made here (a closure: shipped by value; executors cannot import a test
    module). hide(): not fused, so the task drains it through blocking_iterable in chunks."""

    def double(fl: Flowable[tuple[Any, ...]]) -> Flowable[tuple[Any, ...]]:
        return fl.hide().map(lambda r: (r[0], r[1] * 2.0))

    return double


def _files(spark: Any, tmp_path: Path, n_files: int) -> Path:
    src = tmp_path / "in"
    for k in range(n_files):
        lo = k * ROWS_PER_FILE
        (
            spark.range(lo, lo + ROWS_PER_FILE, numPartitions=1)
            .selectExpr("id", "cast(id as double) / 4 as x")
            .write.parquet(str(src / f"f{k}"))
        )
        for p in (src / f"f{k}").glob("part-*"):
            os.replace(p, src / f"part-{k}.parquet")
            os.utime(src / f"part-{k}.parquet", (1_700_000_000 + k, 1_700_000_000 + k))  # oldest first
    return src


def test_run_on_spark_over_a_file_stream_runs_per_micro_batch_and_equals_the_local_pipeline(spark: Any, tmp_path: Path) -> None:
    src = _files(spark, tmp_path, 3)
    stream = spark.readStream.schema("id long, x double").option("maxFilesPerTrigger", 1).parquet(str(src))
    double = _double_pipeline()
    out = run_on_spark(stream, double, schema="id long, x double")
    assert out.isStreaming

    batches: dict[int, list[tuple[Any, ...]]] = {}
    lock = threading.Lock()

    def collect(df: Any, batch_id: int) -> None:
        rows = [tuple(r) for r in df.collect()]
        with lock:
            batches[batch_id] = rows

    q = (
        out.writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(tmp_path / "ckpt"))
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination(240)
    assert q.exception() is None
    assert sorted(batches) == [0, 1, 2]  # one micro-batch per file
    for k, rows in batches.items():
        assert all(k * ROWS_PER_FILE <= r[0] < (k + 1) * ROWS_PER_FILE for r in rows)

    ts: TestSubscriber[tuple[Any, ...]] = TestSubscriber()
    double(Flowable.from_iterable([(i, i / 4) for i in range(3 * ROWS_PER_FILE)])).subscribe(ts)
    ts.await_done(30).assert_complete().assert_no_violations()
    assert sorted(r for rows in batches.values() for r in rows) == ts.values
    assert len(ts.values) == 3 * ROWS_PER_FILE  # more than one chunk of output per partition


def test_pipeline_state_starts_afresh_in_each_micro_batch(spark: Any, tmp_path: Path) -> None:
    src = _files(spark, tmp_path, 2)
    stream = spark.readStream.schema("id long, x double").option("maxFilesPerTrigger", 1).parquet(str(src))

    def numbered(fl: Flowable[tuple[Any, ...]]) -> Flowable[tuple[Any, ...]]:
        return fl.scan(lambda acc, r: (r[0], acc[1] + 1), (-1, 0)).skip(1)  # position within the partition

    out = run_on_spark(stream, numbered, schema="id long, n long")
    counts: dict[int, tuple[int, int]] = {}

    def collect(df: Any, batch_id: int) -> None:
        r = df.selectExpr("min(n)", "max(n)").first()
        counts[batch_id] = (r[0], r[1])

    q = out.writeStream.foreachBatch(collect).option("checkpointLocation", str(tmp_path / "ckpt")).trigger(availableNow=True).start()
    q.awaitTermination(240)
    assert q.exception() is None
    assert counts == {0: (1, ROWS_PER_FILE), 1: (1, ROWS_PER_FILE)}


def test_run_on_spark_over_a_rate_stream_consumed_through_from_stream(spark: Any) -> None:
    rate = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 1000).option("numPartitions", 1).load()
    out = run_on_spark(rate.selectExpr("value"), lambda fl: fl.map(lambda r: (r[0], r[0] * r[0])), schema="value long, square long")

    ts: TestSubscriber[tuple[Any, ...]] = TestSubscriber(initial_request=0)
    from_stream(out, as_="rows").take(2_500).subscribe(ts)
    ts.request(1_200)  # demand paces the micro-batches: more is never emitted than requested
    ts.await_count(1_200, timeout=120)
    assert len(ts.values) == 1_200
    ts.request(1_300)
    ts.await_done(120).assert_complete().assert_no_errors().assert_no_violations()
    assert ts.values == [(i, i * i) for i in range(2_500)]
