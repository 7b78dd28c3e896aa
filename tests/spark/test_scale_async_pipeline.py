"""run_on_spark's task over an unfused pipeline (an asyncio stage): the rows, cancellation when
Spark stops pulling, errors, and the fused path, tested on the task function directly over
in-memory Arrow batches (no SparkSession), and once on Spark.

(Running the pipeline on an event loop of the task's own thread was measured against the thread
hand-off the task uses, A/B in one Spark session: 0.94-0.95x; the hand-off lets the pipeline work
while the task's thread writes to the JVM.)
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from rstreams import Flowable
from rstreams.testing import TestSubscriber

pa = pytest.importorskip("pyarrow", reason="the spark extra is not installed (pip install '.[spark]')")


def _schema(ddl: str) -> Any:
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    types = {"BIGINT": LongType(), "DOUBLE": DoubleType(), "STRING": StringType()}
    return StructType([StructField(c.split()[0], types[c.split()[1]]) for c in ddl.split(", ")])


def _batches(n: int, size: int = 1000) -> Iterator[Any]:
    for s in range(0, n, size):
        yield pa.RecordBatch.from_arrays([pa.array(range(s, min(n, s + size)), pa.int64())], names=["id"])


def _task(pipeline: Any, ddl: str, as_: str = "rows") -> Any:
    from rstreams.spark._scale import _make_task

    return _make_task(pipeline, as_, _schema(ddl))


async def _where(r: tuple[Any, ...]) -> tuple[Any, ...]:
    await asyncio.sleep(0)
    return (r[0], r[1], threading.current_thread().name)


def _threads_pipeline(f: Flowable[Any]) -> Flowable[Any]:
    return f.map(lambda r: (r[0], threading.current_thread().name)).map_async(_where, max_concurrency=4)


def test_an_async_pipeline_gives_the_rows_of_the_local_pipeline() -> None:
    rows = [r for b in _task(_threads_pipeline, "id BIGINT, mapped STRING, awaited STRING")(_batches(5000)) for r in b.to_pylist()]
    assert [r["id"] for r in rows] == list(range(5000))
    # the same function, locally through a TestSubscriber, gives the same rows (threads aside)
    ts: TestSubscriber[Any] = _threads_pipeline(Flowable.from_iterable([(i,) for i in range(5000)])).test()
    ts.await_done(10).assert_complete().assert_no_violations()
    assert [v[0] for v in ts.values] == [r["id"] for r in rows]


def test_spark_stopping_early_cancels_the_pipeline() -> None:
    cancelled: list[bool] = []
    started: list[int] = []

    async def slow(r: tuple[Any, ...]) -> tuple[Any, ...]:
        started.append(r[0])
        await asyncio.sleep(0)
        return (r[0],)

    def pipeline(f: Flowable[Any]) -> Flowable[Any]:
        return f.do_on_cancel(lambda: cancelled.append(True)).map_async(slow, max_concurrency=2)

    gen = _task(pipeline, "id BIGINT")(_batches(1_000_000))
    first = next(gen)
    assert first.num_rows > 0
    gen.close()  # what Spark does when it stops pulling (a limit)
    assert cancelled == [True]
    assert len(started) < 100_000, "the pipeline ran far past what was pulled"


def test_a_failing_async_stage_is_a_partition_error() -> None:
    from rstreams.spark import PartitionError

    async def boom(r: tuple[Any, ...]) -> tuple[Any, ...]:
        if r[0] == 1234:
            raise ValueError("bad row 1234")
        return (r[0],)

    gen = _task(lambda f: f.map_async(boom), "id BIGINT")(_batches(5000))
    with pytest.raises(PartitionError, match="bad row 1234"):
        list(gen)


def test_a_fused_pipeline_runs_on_the_task_thread() -> None:
    out = list(_task(lambda f: f.map(lambda r: (r[0] * 2,)), "id BIGINT")(_batches(2500)))
    assert [v for b in out for v in b.column(0).to_pylist()] == [i * 2 for i in range(2500)]


def test_arrow_mode_with_an_async_stage_gives_every_row() -> None:
    async def tag(b: Any) -> Any:
        return b.append_column("t", pa.array(["x"] * b.num_rows))

    out = list(_task(lambda f: f.map_async(tag), "id BIGINT, t STRING", as_="arrow")(_batches(3000)))
    assert [v for b in out for v in b.column(0).to_pylist()] == list(range(3000))


@pytest.mark.spark
def test_on_spark_an_async_pipeline_runs_in_the_executors_python_workers(spark: Any) -> None:
    import os

    from rstreams.spark import run_on_spark

    # defined here: a module-level function of a test module would be pickled by reference,
    # and the executors cannot import the tests
    async def where(r: tuple[Any, ...]) -> tuple[Any, ...]:
        await asyncio.sleep(0)
        return (r[0], r[1], os.getpid())

    def pipeline(f: Flowable[Any]) -> Flowable[Any]:
        return f.map(lambda r: (r[0], os.getpid())).map_async(where, max_concurrency=4)

    df = spark.range(0, 4000, numPartitions=2)
    rows = run_on_spark(df, pipeline, schema="id BIGINT, mapped BIGINT, awaited BIGINT").collect()
    assert sorted(r["id"] for r in rows) == list(range(4000))
    assert all(r["mapped"] == r["awaited"] != os.getpid() for r in rows), "a stage ran outside its task's worker"
