"""rstreams.spark against a real local Spark (one shared session)."""

from __future__ import annotations

import operator
import time
from pathlib import Path
from typing import Any

import pytest

from rstreams import Flowable
from rstreams.spark import from_dataframe, from_stream, run_on_spark, to_spark
from rstreams.testing import TestSubscriber

pytestmark = pytest.mark.spark


def _df(spark: Any, n: int = 20_000, parts: int = 4) -> Any:
    return spark.range(0, n, numPartitions=parts).selectExpr("id", "cast(id as double) * 0.5 as x", "cast(id as string) as name")


def test_session_has_arrow_enabled(spark: Any) -> None:
    assert spark.conf.get("spark.sql.execution.arrow.pyspark.enabled") == "true"


def test_from_dataframe_rows_exact_content_and_order(spark: Any) -> None:
    ts = from_dataframe(_df(spark), as_="rows").test()
    ts.await_done(120).assert_complete().assert_no_violations()
    assert ts.values == [(i, i * 0.5, str(i)) for i in range(20_000)]


def test_from_dataframe_arrow_and_pandas(spark: Any) -> None:
    ts = from_dataframe(_df(spark, 1000, 2)).test()
    ts.await_done(120).assert_complete().assert_no_violations()
    assert sum(b.num_rows for b in ts.values) == 1000
    assert ts.values[0].schema.names == ["id", "x", "name"]
    tsp = from_dataframe(_df(spark, 1000, 2), as_="pandas").test()
    tsp.await_done(120).assert_complete().assert_no_violations()
    assert sum(len(p) for p in tsp.values) == 1000


def test_from_dataframe_fetches_only_on_demand(spark: Any) -> None:
    from rstreams.spark import _source

    fetches: list[Any] = []
    orig = _source._Fetch.__init__

    def spy(self: Any, *a: Any) -> None:
        orig(self, *a)
        fetches.append(self)

    _source._Fetch.__init__ = spy  # type: ignore[method-assign]
    try:
        ts: TestSubscriber[Any] = TestSubscriber(1)
        from_dataframe(_df(spark, 40_000, 4)).subscribe(ts)
        ts.await_count(1, 120)
        time.sleep(1.0)
        assert len(ts.values) == 1
        assert fetches[0].partitions_fetched == 1  # one IPC blob of the first partition, nothing more
        ts.cancel()
    finally:
        _source._Fetch.__init__ = orig  # type: ignore[method-assign]
    ts.assert_no_violations()


def test_cancel_mid_stream_leaves_no_running_job(spark: Any) -> None:
    ts: TestSubscriber[Any] = TestSubscriber(2)
    from_dataframe(_df(spark, 200_000, 8), as_="rows").subscribe(ts)
    ts.await_count(2, 120)
    ts.cancel()
    tracker = spark.sparkContext.statusTracker()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and tracker.getActiveJobsIds():
        time.sleep(0.2)
    assert tracker.getActiveJobsIds() == []
    ts.assert_no_violations()


def test_to_spark_then_read_back(spark: Any, tmp_path: Path) -> None:
    out = str(tmp_path / "out")
    r = to_spark(Flowable.range(0, 30_000).map(lambda i: {"id": i, "v": i * 2}), path=out, batch_rows=10_000, spark=spark)
    assert r.rows == 30_000 and r.batches == 3
    back = from_dataframe(spark.read.parquet(out), as_="rows").map(lambda row: row[0]).to_list().blocking_first(timeout=120)
    assert sorted(back) == list(range(30_000))


def test_to_spark_table(spark: Any) -> None:
    r = to_spark(Flowable.range(0, 500).map(lambda i: (i, str(i))), table="rs_tbl", mode="overwrite", batch_rows=200, spark=spark)
    assert r.rows == 500
    assert spark.table("rs_tbl").count() == 500


def test_run_on_spark_equals_local_pipeline(spark: Any) -> None:
    def pipeline(f: Flowable[Any]) -> Flowable[Any]:
        return f.filter(lambda r: r[0] % 3 == 0).map(lambda r: (r[0], r[1] * 2, r[2].upper()))

    df = _df(spark, 5000, 3)
    remote = sorted(tuple(r) for r in run_on_spark(df, pipeline).collect())
    local = pipeline(Flowable.from_iterable([(i, i * 0.5, str(i)) for i in range(5000)])).to_list().blocking_first()
    assert remote == sorted(local)


def test_run_on_spark_hidden_pipeline_and_arrow_mode(spark: Any) -> None:
    import pyarrow.compute as pc

    df = _df(spark, 3000, 2)
    out = run_on_spark(df, lambda f: f.hide().map(lambda r: (r[0] + 1, r[1], r[2])))
    assert sorted(r[0] for r in out.collect()) == list(range(1, 3001))
    out2 = run_on_spark(df, lambda f: f.map(lambda b: b.filter(pc.greater(b.column("id"), 2000))), as_="arrow")
    assert out2.count() == 999


def test_run_on_spark_error_names_the_partition(spark: Any) -> None:
    def bad(f: Flowable[Any]) -> Flowable[Any]:
        return f.map(lambda r: 1 // (r[0] - 1500) and r)

    with pytest.raises(Exception, match="partition"):
        run_on_spark(_df(spark, 3000, 2), bad).collect()


def test_streaming_micro_batches_follow_demand(spark: Any, tmp_path: Path) -> None:
    stream = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 100).load()
    ts: TestSubscriber[Any] = TestSubscriber(0)
    f = from_stream(stream, as_="rows", checkpoint=str(tmp_path / "ckpt"))
    f.subscribe(ts)
    time.sleep(4)
    assert ts.values == []  # no demand: Spark's trigger loop waits
    ts.request(150)
    ts.await_count(150, 120)
    time.sleep(2)
    assert len(ts.values) == 150
    ts.cancel()
    ts.assert_no_violations()
    sub = ts.subscription
    assert sub is not None and getattr(sub, "micro_batches", 2) <= 2


def test_streaming_query_failure_reaches_on_error(spark: Any, tmp_path: Path) -> None:
    from pyspark.sql.functions import col, raise_error, when

    stream = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 10).load()
    bad = stream.select(when(col("value") >= 5, raise_error("boom")).otherwise(col("value")).alias("v"))
    ts = from_stream(bad, checkpoint=str(tmp_path / "ckpt2")).test()
    ts.await_done(120)
    assert len(ts.errors) == 1
    ts.assert_no_violations()


def test_reduce_over_dataframe(spark: Any) -> None:
    total = from_dataframe(_df(spark, 10_000, 2), as_="rows").map(lambda r: r[0]).reduce(operator.add).blocking_first(timeout=120)
    assert total == sum(range(10_000))


def test_landed_stream_reads_committed_batches_as_a_spark_stream(spark: Any, tmp_path: Path) -> None:
    import os

    from rstreams.spark import landed_stream

    out = str(tmp_path / "landed")
    ckpt = str(tmp_path / "ckpt")
    # two runs of two streams: each batch committed, then published, then visible to the file source
    to_spark(Flowable.range(0, 3000).map(lambda i: {"id": i}), path=out, batch_rows=1000, spark=spark, name="a")
    # an uncommitted batch left staged by a crashed writer must stay invisible to the stream
    staged = os.path.join(out, "_rstreams", "landings", "a", "staging", "batch-00000099")
    os.makedirs(staged)
    spark.range(10**6, 10**6 + 50).toDF("id").toPandas().to_parquet(os.path.join(staged, "part-b00000099-00000.parquet"))

    def run_query() -> list[int]:
        got: list[int] = []
        q = (
            landed_stream(out, spark=spark, maxFilesPerTrigger=1)
            .writeStream.foreachBatch(lambda df, _id: got.extend(r[0] for r in df.collect()))
            .option("checkpointLocation", ckpt)
            .trigger(availableNow=True)
            .start()
        )
        q.awaitTermination(120)
        assert q.exception() is None
        return got

    first = run_query()
    assert sorted(first) == list(range(3000))
    to_spark(Flowable.range(3000, 1500).map(lambda i: {"id": i}), path=out, batch_rows=500, spark=spark, name="b")
    second = run_query()  # same checkpoint: only the files landed since
    assert sorted(second) == list(range(3000, 4500))
    assert sorted(r[0] for r in spark.read.parquet(out).collect()) == list(range(4500))  # batch readers too


def test_landed_stream_needs_a_schema_before_anything_landed(spark: Any, tmp_path: Path) -> None:
    from rstreams.spark import landed_stream

    with pytest.raises(ValueError, match="nothing has been landed"):
        landed_stream(str(tmp_path / "empty"), spark=spark)
    df = landed_stream(str(tmp_path / "empty"), spark=spark, schema="id long")
    assert df.isStreaming and df.schema.simpleString() == "struct<id:bigint>"
