"""run_on_spark's task drives an unfused pipeline on an event loop of the task's own thread.

``map_async`` and the other asyncio stages find that running loop, so a partition's parsing, lookups
and Arrow conversion share the task thread (as a hand-written ``mapInPandas`` function does) instead
of crossing to an ``io()`` worker and the background loop for every element. The task function is
tested directly over in-memory Arrow batches (no SparkSession), and once on Spark.
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


def test_an_async_pipeline_runs_on_the_task_thread() -> None:
    rows = [r for b in _task(_threads_pipeline, "id BIGINT, mapped STRING, awaited STRING")(_batches(5000)) for r in b.to_pylist()]
    me = threading.current_thread().name
    assert [r["id"] for r in rows] == list(range(5000))
    assert {r["mapped"] for r in rows} == {me}, "the synchronous stages ran on another thread"
    assert {r["awaited"] for r in rows} == {me}, "the coroutines ran on another thread's loop"
    # the same function, locally through a TestSubscriber, gives the same rows (threads aside)
    ts: TestSubscriber[Any] = _threads_pipeline(Flowable.from_iterable([(i,) for i in range(5000)])).test()
    ts.await_done(10).assert_complete().assert_no_violations()
    assert [v[0] for v in ts.values] == [r["id"] for r in rows]


def test_the_task_loop_leaves_no_loop_or_task_behind() -> None:
    before = {t.name for t in threading.enumerate()}
    out = list(_task(_threads_pipeline, "id BIGINT, mapped STRING, awaited STRING")(_batches(3000)))
    assert sum(b.num_rows for b in out) == 3000
    with pytest.raises(RuntimeError):
        asyncio.get_running_loop()  # the task's loop is not left running on this thread
    assert {t.name for t in threading.enumerate()} <= before | {"rstreams-aio-loop"}


def test_spark_stopping_early_cancels_the_pipeline_and_closes_the_loop() -> None:
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


def test_a_failing_async_stage_is_a_partition_error_and_the_loop_is_closed() -> None:
    from rstreams.spark import PartitionError

    async def boom(r: tuple[Any, ...]) -> tuple[Any, ...]:
        if r[0] == 1234:
            raise ValueError("bad row 1234")
        return (r[0],)

    gen = _task(lambda f: f.map_async(boom), "id BIGINT")(_batches(5000))
    with pytest.raises(PartitionError, match="bad row 1234"):
        list(gen)


def test_a_fused_pipeline_still_runs_without_a_loop() -> None:
    out = list(_task(lambda f: f.map(lambda r: (r[0] * 2,)), "id BIGINT")(_batches(2500)))
    assert [v for b in out for v in b.column(0).to_pylist()] == [i * 2 for i in range(2500)]


def test_arrow_mode_with_an_async_stage_runs_on_the_task_thread() -> None:
    async def tag(b: Any) -> Any:
        return b.append_column("t", pa.array([threading.current_thread().name] * b.num_rows))

    out = list(_task(lambda f: f.map_async(tag), "id BIGINT, t STRING", as_="arrow")(_batches(3000)))
    assert sum(b.num_rows for b in out) == 3000
    assert {v for b in out for v in b.column(1).to_pylist()} == {threading.current_thread().name}


@pytest.mark.spark
def test_on_spark_an_async_pipeline_stays_on_each_task_thread(spark: Any) -> None:
    from rstreams.spark import run_on_spark

    # defined here: a module-level function of a test module would be pickled by reference,
    # and the executors cannot import the tests
    async def where(r: tuple[Any, ...]) -> tuple[Any, ...]:
        await asyncio.sleep(0)
        return (r[0], r[1], threading.current_thread().name)

    def pipeline(f: Flowable[Any]) -> Flowable[Any]:
        return f.map(lambda r: (r[0], threading.current_thread().name)).map_async(where, max_concurrency=4)

    df = spark.range(0, 4000, numPartitions=2)
    rows = run_on_spark(df, pipeline, schema="id BIGINT, mapped STRING, awaited STRING").collect()
    assert sorted(r["id"] for r in rows) == list(range(4000))
    assert all(r["mapped"] == r["awaited"] for r in rows), "a partition's coroutines ran off its task thread"
