"""rstreams.spark's streaming, scale-out, session and progress pieces (one shared session).

Each test pins a bug that was found and fixed; see the commit messages for the details.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from rstreams import Flowable, plugins
from rstreams.spark import Progress, from_stream, landed_stream, run_on_spark, session, to_spark
from rstreams.testing import TestSubscriber

pytestmark = pytest.mark.spark


def _wait(cond: Any, timeout: float = 30.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return bool(cond())


def _stream_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("rstreams-stream")]


def _query_of(ts: TestSubscriber[Any]) -> Any:
    sub = ts.subscription
    assert sub is not None
    assert _wait(lambda: getattr(sub, "_query", None) is not None, 60)
    return sub._query  # type: ignore[attr-defined]


def _stop_all(spark: Any) -> None:
    for q in spark.streams.active:
        q.stop()


def _rate(spark: Any, rows: int) -> Any:
    return spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows).load()


# ---------------------------------------------------------------------------------------------- from_stream


def test_bad_request_reaches_on_error_and_stops_the_query(spark: Any) -> None:
    # was: request(0) cancelled first, which cleared the downstream, so on_error(3.9) was never sent
    ts: TestSubscriber[Any] = TestSubscriber(0)
    from_stream(_rate(spark, 10)).subscribe(ts)
    try:
        q = _query_of(ts)
        ts.request(0)
        ts.await_done(30)
        assert len(ts.errors) == 1 and isinstance(ts.errors[0], ValueError) and "3.9" in str(ts.errors[0])
        assert ts.values == []
        assert _wait(lambda: not q.isActive, 30)
        ts.assert_no_violations()
    finally:
        _stop_all(spark)


def test_bad_request_in_on_subscribe_reaches_on_error_without_starting_a_query(spark: Any) -> None:
    before = len(spark.streams.active)
    ts: TestSubscriber[Any] = TestSubscriber(0)
    ts.request(-1)  # forwarded from on_subscribe, before the query exists
    from_stream(_rate(spark, 10)).subscribe(ts)
    ts.await_done(10)
    assert len(ts.errors) == 1 and "3.9" in str(ts.errors[0])
    assert len(spark.streams.active) == before
    ts.assert_no_violations()


def test_cancel_mid_batch_does_not_commit_the_undelivered_rows(spark: Any, tmp_path: Path) -> None:
    # was: the batch function returned normally when cancelled, so Spark committed micro-batch 1
    # with 5 of its 10 rows delivered; a restart from the same checkpoint skipped the other 5
    # (take(15) cancels from inside on_next, so the function returns before q.stop() interrupts it)
    ckpt = str(tmp_path / "ckpt")
    stream = _rate(spark, 10)
    try:
        first = from_stream(stream, as_="rows", checkpoint=ckpt).map(lambda r: r[1]).take(15).test()
        first.await_done(60).assert_complete()
        got = first.values
        assert sorted(got[:10]) == list(range(10)) and set(got[10:]) < set(range(10, 20))  # micro-batch order
        # re-subscribed at once: waits for the first query (cancelled by take) to stop and release the checkpoint
        second = from_stream(stream, as_="rows", checkpoint=ckpt).map(lambda r: r[1]).take(10).test()
        second.await_done(60).assert_complete()
        assert sorted(second.values) == list(range(10, 20))  # micro-batch 1 replayed whole
        assert _wait(lambda: not spark.streams.active and not _stream_threads(), 30)
    finally:
        _stop_all(spark)


def test_cancel_while_the_query_starts_stops_it() -> None:
    # was: cancel() on another thread between _subscribe_actual's check and writer.start() found no
    # query to stop, and the query then started and ran forever
    stopped = threading.Event()
    holder: dict[str, Any] = {}

    class FakeQuery:
        isActive = True

        def stop(self) -> None:
            stopped.set()

        def awaitTermination(self) -> None:
            stopped.wait(30)

    class FakeWriter:
        def foreachBatch(self, fn: Any) -> FakeWriter:
            return self

        def option(self, *a: Any) -> FakeWriter:
            return self

        def start(self) -> FakeQuery:
            holder["ts"].cancel()  # the race, made deterministic: cancel lands while the query starts
            return FakeQuery()

    class FakeDF:
        isStreaming = True
        writeStream = FakeWriter()

    ts: TestSubscriber[Any] = TestSubscriber(0)
    holder["ts"] = ts
    from_stream(FakeDF()).subscribe(ts)
    assert stopped.wait(10), "the query started after cancel was never stopped"
    assert _wait(lambda: not _stream_threads(), 10)


def test_raising_on_next_stops_the_query_and_reports_the_error(spark: Any) -> None:
    # rule 2.13: a raising on_next cancels; the error goes to plugins, not back into on_error
    # (regression: subscribe() already guards plain subscribers; from_stream now also stops the
    # query itself and does not commit the micro-batch)
    got: list[str] = []

    class Raising:
        def on_subscribe(self, s: Any) -> None:
            got.append("subscribe")
            s.request(5)

        def on_next(self, item: Any) -> None:
            raise RuntimeError("user on_next failed")

        def on_error(self, e: BaseException) -> None:
            got.append("error")

        def on_complete(self) -> None:
            got.append("complete")

    with plugins.collect_errors() as errors:
        before = {q.id for q in spark.streams.active}
        from_stream(_rate(spark, 10)).subscribe(Raising())
        try:
            assert _wait(lambda: any("user on_next failed" in str(e) for e in errors), 60)
            assert _wait(lambda: {q.id for q in spark.streams.active} == before, 30)
            assert _wait(lambda: not _stream_threads(), 30)
            assert got == ["subscribe"]
        finally:
            _stop_all(spark)


def test_finite_stream_completes_exactly_once_in_order_and_removes_its_checkpoint(spark: Any, tmp_path: Path) -> None:
    # landed_stream over what to_spark committed, consumed as a Flowable with trigger(availableNow)
    out = str(tmp_path / "landed")
    to_spark(Flowable.range(0, 300).map(lambda i: {"id": i}), path=out, batch_rows=100, spark=spark)
    ts: TestSubscriber[Any] = TestSubscriber(1)
    from_stream(landed_stream(out, spark=spark, maxFilesPerTrigger=1), as_="rows", trigger={"availableNow": True}).subscribe(ts)
    sub = ts.subscription
    assert sub is not None
    try:
        ts.await_count(1, 60)
        ts.request(10**9)
        ts.await_done(60).assert_complete().assert_no_violations()
        ids = [r[0] for r in ts.values]
        assert sorted(ids) == list(range(300)) and len(set(ids)) == 300
        files = [n for n in os.listdir(out) if n.endswith(".parquet")]
        assert sub.micro_batches == len(files) >= 3  # type: ignore[attr-defined]  # maxFilesPerTrigger=1
        # was: the private checkpoint directory was left in the temp dir after every subscription
        assert _wait(lambda: not os.path.exists(sub._checkpoint), 10)  # type: ignore[attr-defined]
        assert _wait(lambda: not _stream_threads(), 10)
    finally:
        _stop_all(spark)


def test_each_subscriber_runs_its_own_query(spark: Any) -> None:
    f = from_stream(_rate(spark, 10), as_="rows")
    a: TestSubscriber[Any] = TestSubscriber(20)
    b: TestSubscriber[Any] = TestSubscriber(20)
    f.subscribe(a)
    f.subscribe(b)
    try:
        a.await_count(20, 60)
        b.await_count(20, 60)
        assert sorted(r[1] for r in a.values) == sorted(r[1] for r in b.values) == list(range(20))
        qa, qb = _query_of(a), _query_of(b)
        assert qa.id != qb.id
        a.cancel()
        b.cancel()
        assert _wait(lambda: not qa.isActive and not qb.isActive and not _stream_threads(), 30)
    finally:
        _stop_all(spark)


# ---------------------------------------------------------------------------------------------- run_on_spark


def _df(spark: Any) -> Any:
    return spark.range(0, 200, numPartitions=2).selectExpr("id", "cast(id as double) as x")


def test_run_on_spark_wrong_width_is_a_clear_error(spark: Any) -> None:
    # was: "ValueError: zip() argument 2 is longer than argument 1"
    with pytest.raises(Exception, match=r"partition \d.*2 columns \(id, x\).*schema="):
        run_on_spark(_df(spark), lambda f: f.map(lambda r: (r[0],))).collect()


def test_run_on_spark_none_in_a_column_that_was_not_nullable(spark: Any) -> None:
    # was: spark.range's non-nullable id made a None crash inside the JVM's Arrow reader
    out = run_on_spark(_df(spark), lambda f: f.map(lambda r: (None if r[0] % 2 else r[0], r[1]))).collect()
    assert sorted(r[0] for r in out if r[0] is not None) == list(range(0, 200, 2))
    assert sum(r[0] is None for r in out) == 100
    from pyspark.sql.types import DoubleType, LongType, StructField, StructType

    strict = StructType([StructField("id", LongType(), False), StructField("x", DoubleType(), True)])
    with pytest.raises(Exception, match="non-nullable column 'id'"):
        run_on_spark(_df(spark), lambda f: f.map(lambda r: (None, r[1])), schema=strict).collect()


def test_run_on_spark_schema_forms(spark: Any) -> None:
    from pyspark.sql.types import LongType, StructField, StructType

    pipeline = lambda f: f.map(lambda r: {"v": r[0] * 2} if r[0] % 2 else (r[0] * 2,))  # noqa: E731  mixed dict/tuple
    ddl = sorted(r.v for r in run_on_spark(_df(spark), pipeline, schema="v long").collect())
    st = sorted(r.v for r in run_on_spark(_df(spark), pipeline, schema=StructType([StructField("v", LongType())])).collect())
    assert ddl == st == [i * 2 for i in range(200)]
    with pytest.raises(TypeError, match="must describe columns"):
        run_on_spark(_df(spark), lambda f: f.map(lambda r: r[0]), schema="long")


def test_run_on_spark_arrow_tables_empty_partitions_and_filter_all(spark: Any) -> None:
    import pyarrow as pa

    # was: a pyarrow.Table failed in Spark's worker with an error that did not name the partition
    out = run_on_spark(_df(spark), lambda f: f.map(lambda b: pa.Table.from_batches([b])), as_="arrow")
    assert sorted(r.id for r in out.collect()) == list(range(200))
    with pytest.raises(Exception, match=r"partition \d.*RecordBatch"):
        run_on_spark(_df(spark), lambda f: f.map(lambda b: 5), as_="arrow").collect()
    assert run_on_spark(_df(spark), lambda f: f.filter(lambda r: False)).count() == 0
    sparse = spark.range(0, 3, numPartitions=6)  # three partitions are empty
    local = Flowable.range(0, 3).map(lambda i: (i * 2,)).to_list().blocking_first()
    assert sorted(tuple(r) for r in run_on_spark(sparse, lambda f: f.map(lambda row: (row[0] * 2,))).collect()) == local


# ---------------------------------------------------------------------------------------------- session, progress


def test_session_from_another_thread_returns_the_running_session_untouched(spark: Any) -> None:
    # was: getActiveSession() is per JVM thread, so from another thread session() went through
    # builder.getOrCreate() and re-applied DEFAULT_CONF (shuffle partitions 2 -> 4) to the shared session
    before = spark.conf.get("spark.sql.shuffle.partitions")
    got: dict[str, Any] = {}

    def other() -> None:
        got["s"] = session()

    t = threading.Thread(target=other)
    t.start()
    t.join(60)
    assert got["s"] is spark
    assert spark.conf.get("spark.sql.shuffle.partitions") == before == "2"
    assert spark.conf.get("spark.sql.execution.arrow.pyspark.enabled") == "true"
    assert spark.sparkContext.getConf().get("spark.ui.enabled") == "false"


def test_session_applies_runtime_conf_to_the_running_session_and_warns_on_another_master(spark: Any) -> None:
    try:
        assert session(spark_sql_shuffle_partitions=3) is spark  # was: silently ignored
        assert spark.conf.get("spark.sql.shuffle.partitions") == "3"
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", "2")
    with pytest.warns(UserWarning, match="already running"):
        assert session("local[3]") is spark


def test_progress_is_quiet_under_pytest_and_leaves_no_thread() -> None:
    import io

    before = set(threading.enumerate())
    buf = io.StringIO()
    p = Progress("x", stream=buf)
    p.update(rows=10, batches=1)
    assert p.close()["rows"] == 10 and buf.getvalue() == "" and not p.enabled
    assert set(threading.enumerate()) <= before


def test_check_java_names_a_broken_java_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rstreams.spark import SparkUnavailableError, check_java

    # was: "no `java` on PATH and no JAVA_HOME" although JAVA_HOME was set (to the wrong place)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(SparkUnavailableError, match="JAVA_HOME=.*has no bin/java"):
        check_java()
    # was: a java that fails to run passed the check, and Spark failed later with a JVM trace
    (tmp_path / "bin").mkdir()
    fake = tmp_path / "bin" / "java"
    fake.write_text("#!/bin/sh\necho 'Error: could not open lib/jvm.cfg' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(SparkUnavailableError, match="exited with 1.*jvm.cfg"):
        check_java()
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(SparkUnavailableError, match="no `java` on PATH and no JAVA_HOME.*openjdk-17"):
        check_java()


def test_from_stream_refuses_a_spark_connect_dataframe() -> None:
    # was: accepted; the foreachBatch function would run on the server, outside demand's reach
    fake = type("DataFrame", (), {"isStreaming": True, "__module__": "pyspark.sql.connect.dataframe"})()
    with pytest.raises(TypeError, match="Spark Connect"):
        from_stream(fake)


def test_arrow_mode_emits_no_empty_batches_for_filtered_out_micro_batches(spark: Any) -> None:
    stream = _rate(spark, 10).filter("value % 20 < 10")  # micro-batches 1, 3, 5... have no rows
    ts: TestSubscriber[Any] = TestSubscriber(0)
    from_stream(stream).subscribe(ts)
    try:
        ts.request(3)
        ts.await_count(3, 60)
        q = _query_of(ts)
        ts.cancel()
        assert [b.num_rows for b in ts.values] == [b.num_rows for b in ts.values if b.num_rows > 0]
        values = sorted(v for b in ts.values for v in b.column("value").to_pylist())
        assert values[:10] == list(range(10)) and all(v % 20 < 10 for v in values)
        assert _wait(lambda: not q.isActive, 30)
    finally:
        _stop_all(spark)


def test_pandas_mode_and_a_second_subscriber_on_a_busy_checkpoint(spark: Any, tmp_path: Path) -> None:
    # was: as_="pandas" (a from_dataframe mode) was refused by from_stream
    ckpt = str(tmp_path / "ckpt")
    f = from_stream(_rate(spark, 10), as_="pandas", checkpoint=ckpt)
    a: TestSubscriber[Any] = TestSubscriber(2)
    f.subscribe(a)
    try:
        a.await_count(2, 60)
        assert sorted(v for frame in a.values for v in frame["value"]) == list(range(10))  # micro-batch 0
        qa = _query_of(a)
        # was: Spark (stopActiveRunOnRestart) stopped the first query to start this one, and the stop
        # waited on its parked batch function; the second query re-read micro-batch 1
        b: TestSubscriber[Any] = f.test()  # the same checkpoint while the first query runs: refused
        b.await_done(60)
        assert len(b.errors) == 1 and "in use" in str(b.errors[0]) and b.values == []
        assert qa.isActive
        a.cancel()
        assert _wait(lambda: not qa.isActive and not _stream_threads(), 30)
    finally:
        _stop_all(spark)


def test_query_failure_reaches_on_error_and_leaves_nothing_behind(spark: Any) -> None:
    from pyspark.sql.functions import col, raise_error, when

    bad = _rate(spark, 10).select(when(col("value") >= 15, raise_error("boom")).otherwise(col("value")).alias("v"))
    ts: TestSubscriber[Any] = TestSubscriber(0)
    from_stream(bad, as_="rows").subscribe(ts)
    sub = ts.subscription
    try:
        ts.request(10**6)
        ts.await_done(60)
        assert len(ts.errors) == 1 and "boom" in str(ts.errors[0])
        assert sorted(r[0] for r in ts.values) == list(range(10))  # micro-batch 0, then batch 1 fails
        assert _wait(lambda: not _stream_threads(), 30)
        assert not os.path.exists(sub._checkpoint)  # type: ignore[union-attr]
        ts.assert_no_violations()
    finally:
        _stop_all(spark)


def test_spark_progress_count_grows_only_with_demand(spark: Any) -> None:
    ts: TestSubscriber[Any] = TestSubscriber(0)
    from_stream(_rate(spark, 10), as_="rows").subscribe(ts)
    try:
        q = _query_of(ts)
        time.sleep(2.5)
        assert q.recentProgress == [] and ts.values == []  # micro-batch 0 waits for demand inside Spark
        ts.request(10)
        ts.await_count(10, 60)
        assert _wait(lambda: len(q.recentProgress) == 1, 30)
        time.sleep(2.5)
        assert len(q.recentProgress) == 1 and len(ts.values) == 10  # micro-batch 1 waits again
        ts.request(5)
        ts.await_count(15, 60)
        time.sleep(1.0)
        assert len(q.recentProgress) == 1  # half of micro-batch 1 emitted: not committed yet
        ts.cancel()
        assert _wait(lambda: not q.isActive, 30)
    finally:
        _stop_all(spark)


def test_bad_request_from_another_thread_does_not_overlap_on_next(spark: Any) -> None:
    # rule 1.3: request(0) from another thread while on_next runs on Spark's thread; the 3.9
    # error waits for the query to stop (after the batch function returned) instead of racing on_next
    inside = threading.Event()
    release = threading.Event()
    events: list[str] = []
    lock = threading.Lock()  # events is appended from Spark's thread and the watcher thread
    done = threading.Event()

    class Slow:
        def on_subscribe(self, s: Any) -> None:
            self.s = s
            s.request(1)

        def on_next(self, item: Any) -> None:
            with lock:
                events.append("next-start")
            inside.set()
            release.wait(30)
            with lock:
                events.append("next-end")

        def on_error(self, e: BaseException) -> None:
            with lock:
                events.append(f"error:{'3.9' in str(e)}")
            done.set()

        def on_complete(self) -> None:
            done.set()

    sub = Slow()
    from_stream(_rate(spark, 10)).subscribe(sub)
    try:
        assert inside.wait(60)
        threading.Thread(target=sub.s.request, args=(0,)).start()
        time.sleep(1.0)
        with lock:
            assert events == ["next-start"]  # no on_error while on_next runs
        release.set()
        assert done.wait(30)
        with lock:
            assert events == ["next-start", "next-end", "error:True"]
        assert _wait(lambda: not _stream_threads(), 30)
    finally:
        release.set()
        _stop_all(spark)
