"""from_dataframe's transports: the task stream (the default: each task streams its partition to
the subscriber's process), the JVM-side Arrow one (``max_bytes_in_flight=None``: toArrowBatchRdd
served partition by partition) and the mapInArrow fallback, against each other and Spark's own
toArrow()/collect(), on awkward types."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import time
from typing import Any

import pytest

from rstreams.spark import _source, from_dataframe
from rstreams.testing import TestSubscriber

spark_only = pytest.mark.spark


@pytest.fixture
def fetches(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every _Fetch created while the test runs (to read its transport and partition count)."""
    made: list[Any] = []
    orig = _source._Fetch.__init__

    def spy(self: Any, *a: Any) -> None:
        orig(self, *a)
        made.append(self)

    monkeypatch.setattr(_source._Fetch, "__init__", spy)
    return made


def _awkward(spark: Any) -> Any:
    """Nulls in most columns, timestamps, decimals, unicode, binary, nested types, and empty
    partitions (8 partitions, 5 rows)."""
    return spark.sql(
        """
        SELECT
          id,
          CASE WHEN id % 2 = 0 THEN NULL ELSE id * 1.5 END AS dbl,
          CAST(id AS FLOAT) / 3 AS flt,
          CASE WHEN id = 1 THEN NULL ELSE concat('ü', CAST(id AS STRING), '€') END AS str,
          CASE WHEN id = 2 THEN '' ELSE 'x' END AS short,
          CAST(id AS DECIMAL(10, 2)) / 3 AS dec_small,
          CASE WHEN id = 3 THEN NULL ELSE CAST('12345678901234567890.123456789012345678' AS DECIMAL(38, 18)) + id END AS dec_big,
          CASE WHEN id = 4 THEN NULL ELSE TIMESTAMP '2024-03-10 01:59:59.123456' + make_interval(0, 0, 0, 0, id) END AS ts,
          TIMESTAMP_NTZ '1969-12-31 23:59:59.999999' AS ts_ntz,
          DATE '1900-01-01' + CAST(id AS INT) AS d,
          id % 2 = 0 AS flag,
          CASE WHEN id = 0 THEN NULL ELSE id % 3 = 0 END AS maybe,
          CAST(concat('b', CAST(id AS STRING)) AS BINARY) AS bin,
          array(id, NULL, id + 1) AS arr,
          map('k', CAST(id AS STRING)) AS m,
          named_struct('a', id, 'b', CASE WHEN id = 0 THEN NULL ELSE 'y' END) AS st,
          CAST(id AS TINYINT) AS tiny,
          CAST(NULL AS STRING) AS nothing
        FROM range(0, 5, 1, 8)
        """
    )


def _collect(f: Any, timeout: float = 120) -> list[Any]:
    ts = f.test()
    ts.await_done(timeout).assert_complete().assert_no_violations()
    values: list[Any] = ts.values
    return values


def _table(batches: list[Any]) -> Any:
    import pyarrow as pa

    assert batches, "no batches"
    return pa.Table.from_batches(batches)


def _fallback(f: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run ``f()`` with the mapInArrow fallback (the JVM-side transport declined)."""
    with monkeypatch.context() as m:
        m.setattr(_source, "_open_jvm_arrow", lambda *a: None)
        return f()


@spark_only
def test_classic_dataframe_streams_from_its_tasks_unless_max_bytes_is_none(spark: Any, fetches: list[Any]) -> None:
    df = spark.range(0, 10, numPartitions=2)
    assert [r[0] for r in _collect(from_dataframe(df, as_="rows"))] == list(range(10))
    assert fetches[-1].transport == "task-stream"
    assert fetches[-1].partitions_fetched == 2
    assert [r[0] for r in _collect(from_dataframe(df, as_="rows", max_bytes_in_flight=None))] == list(range(10))
    assert fetches[-1].transport == "jvm-arrow"
    assert fetches[-1].partitions_fetched == 2


@spark_only
def test_arrow_mode_equal_on_all_transports_and_to_arrow(spark: Any, fetches: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    df = _awkward(spark)
    streamed = _table(_collect(from_dataframe(df)))
    assert fetches[-1].transport == "task-stream"
    jvm = _table(_collect(from_dataframe(df, max_bytes_in_flight=None)))
    assert fetches[-1].transport == "jvm-arrow"
    old = _table(_fallback(lambda: _collect(from_dataframe(df, max_bytes_in_flight=None)), monkeypatch))
    assert fetches[-1].transport == "map-in-arrow"
    assert streamed.schema == jvm.schema == old.schema
    assert streamed.equals(jvm)
    assert jvm.equals(old)
    ref = df.toArrow()
    assert jvm.num_rows == ref.num_rows == 5
    # toArrow() relabels timestamps to UTC; the session time zone here is UTC as well
    assert jvm.cast(ref.schema).equals(ref)


@spark_only
def test_rows_mode_equals_collect(spark: Any) -> None:
    df = _awkward(spark)
    rows = _collect(from_dataframe(df, as_="rows"))
    ref = [tuple(r) for r in df.collect()]
    assert len(rows) == 5
    for got, want in zip(rows, ref, strict=True):
        for g, w, name in zip(got, want, df.columns, strict=True):
            if name == "ts":  # collect() gives naive local datetimes, Arrow timezone-aware ones
                assert (g is None and w is None) or g.replace(tzinfo=None) == w, name
            elif name == "m":  # a map is a list of pairs in Arrow: rows mode gives the Row's dict
                assert isinstance(g, dict) or g is None, (name, g)
                assert g == w, name
            elif name == "st":
                assert g == w.asDict(), name
            elif name == "flt":
                assert math.isclose(g, w, rel_tol=1e-6), name
            else:
                assert g == w, (name, g, w)
    assert rows[3][6] is None and isinstance(rows[1][6], decimal.Decimal) and rows[1][6] == ref[1][6]
    assert rows[0][8] == dt.datetime(1969, 12, 31, 23, 59, 59, 999999)


@spark_only
def test_rows_and_pandas_same_on_all_transports(spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    df = _awkward(spark)
    rows = _collect(from_dataframe(df, as_="rows"))
    pdfs = _collect(from_dataframe(df, as_="pandas"))
    rows_jvm = _collect(from_dataframe(df, as_="rows", max_bytes_in_flight=None))
    rows_old = _fallback(lambda: _collect(from_dataframe(df, as_="rows", max_bytes_in_flight=None)), monkeypatch)
    pdfs_old = _fallback(lambda: _collect(from_dataframe(df, as_="pandas", max_bytes_in_flight=None)), monkeypatch)
    assert repr(rows) == repr(rows_jvm) == repr(rows_old)  # repr: NaN-safe and type-exact (Decimal, datetime tz)
    import pandas as pd

    new, old = pd.concat(pdfs, ignore_index=True), pd.concat(pdfs_old, ignore_index=True)
    assert list(new.dtypes) == list(old.dtypes)
    assert repr(new.to_dict("list")) == repr(old.to_dict("list"))


@spark_only
def test_non_utc_session_time_zone(spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    df = spark.sql("SELECT TIMESTAMP '2024-07-01 12:00:00' AS ts, id FROM range(0, 3, 1, 2)")
    prev = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        streamed = _table(_collect(from_dataframe(df)))
        jvm = _table(_collect(from_dataframe(df, max_bytes_in_flight=None)))
        old = _table(_fallback(lambda: _collect(from_dataframe(df, max_bytes_in_flight=None)), monkeypatch))
    finally:
        spark.conf.set("spark.sql.session.timeZone", prev)
    assert streamed.schema == jvm.schema == old.schema
    assert streamed.equals(jvm)
    assert jvm.equals(old)


@spark_only
def test_empty_dataframe_and_empty_partitions(spark: Any, fetches: list[Any]) -> None:
    empty = spark.range(0, 100, numPartitions=3).filter("id < 0")
    assert _collect(from_dataframe(empty)) == []
    assert _collect(from_dataframe(empty, as_="rows")) == []
    assert _collect(from_dataframe(empty, as_="pandas")) == []
    no_partitions = spark.createDataFrame(spark.sparkContext.emptyRDD(), "a long, b string")
    assert _collect(from_dataframe(no_partitions, as_="rows")) == []
    assert fetches[-1].partitions_fetched == 0
    sparse = spark.range(0, 3, numPartitions=1).repartition(6)  # most partitions empty
    assert sorted(_collect(from_dataframe(sparse, as_="rows"))) == [(0,), (1,), (2,)]


@spark_only
def test_a_dataframe_without_columns_gives_its_rows_as_empty_tuples(spark: Any, fetches: list[Any]) -> None:
    # Spark hands mapInArrow zero-row batches when there are no columns: such a DataFrame (no
    # bytes to bound) takes the JVM-side transport
    assert _collect(from_dataframe(spark.range(0, 5, numPartitions=2).select(), as_="rows")) == [()] * 5
    assert fetches[-1].transport == "jvm-arrow"


@spark_only
def test_batches_follow_max_records_per_batch(spark: Any) -> None:
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    prev = spark.conf.get(key)
    spark.conf.set(key, "300")
    try:
        sizes = [b.num_rows for b in _collect(from_dataframe(spark.range(0, 1000, numPartitions=2)))]
    finally:
        spark.conf.set(key, prev)
    assert sizes == [300, 200, 300, 200]


@spark_only
def test_only_the_demanded_partition_is_fetched(spark: Any, fetches: list[Any]) -> None:
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    prev = spark.conf.get(key)
    spark.conf.set(key, "100")
    try:
        ts: TestSubscriber[Any] = TestSubscriber(3)
        from_dataframe(spark.range(0, 4000, numPartitions=4)).subscribe(ts)
        ts.await_count(3, 120)
        time.sleep(1.0)
        assert len(ts.values) == 3
        assert fetches[-1].partitions_fetched == 1  # three batches of partition 0, nothing more
        ts.request(7)  # the rest of partition 0 (10 batches) and nothing of partition 1
        ts.await_count(10, 120)
        time.sleep(0.5)
        assert fetches[-1].partitions_fetched == 1
        ts.request(1)
        ts.await_count(11, 120)
        assert fetches[-1].partitions_fetched == 2
        ts.cancel()
    finally:
        spark.conf.set(key, prev)
    ts.assert_no_violations()


@spark_only
def test_query_failure_reaches_on_error(spark: Any) -> None:
    df = spark.range(0, 100, numPartitions=2).selectExpr("IF(id = 70, raise_error('boom-70'), id) AS v")
    ts = from_dataframe(df, as_="rows").test()
    ts.await_done(120)
    assert len(ts.errors) == 1 and "boom-70" in str(ts.errors[0])
    ts.assert_no_violations()


@spark_only
def test_cancel_stops_a_running_partition_job(spark: Any, fetches: list[Any]) -> None:
    # each row sleeps 1 s in the JVM: partition 1 takes ~5 s, long enough to cancel in the middle
    df = spark.range(0, 10, numPartitions=2).selectExpr("id", "reflect('java.lang.Thread', 'sleep', CAST(1000 AS BIGINT)) AS s")
    ts: TestSubscriber[Any] = TestSubscriber(1)
    from_dataframe(df, as_="rows", max_partitions_in_flight=2).subscribe(ts)
    tracker = spark.sparkContext.statusTracker()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not tracker.getActiveJobsIds():
        time.sleep(0.05)
    assert tracker.getActiveJobsIds(), "the first partition's job never started"
    t0 = time.monotonic()
    ts.cancel()
    while time.monotonic() < deadline and tracker.getActiveJobsIds():
        time.sleep(0.1)
    assert tracker.getActiveJobsIds() == []
    assert time.monotonic() - t0 < 4.5  # interrupted, not run to its end
    time.sleep(0.5)
    assert ts.values == [] and ts.errors == []
    ts.assert_no_violations()


def test_open_jvm_arrow_declines_without_a_classic_dataframe() -> None:
    class Connect:  # a Spark Connect DataFrame has no _jdf
        pass

    assert _source._open_jvm_arrow(Connect(), False, lambda: None) is None


def test_open_jvm_arrow_declines_when_the_method_is_missing() -> None:
    from py4j.protocol import Py4JError

    class Jdf:
        def toArrowBatchRdd(self, *a: Any) -> Any:
            raise Py4JError("Method toArrowBatchRdd([...]) does not exist")

    class Conf:
        def arrowMaxRecordsPerBatch(self) -> int:
            return 10

        def sessionLocalTimeZone(self) -> str:
            return "UTC"

        def arrowUseLargeVarTypes(self) -> bool:
            return False

        def pandasStructHandlingMode(self) -> str:
            return "legacy"

    class State:
        def conf(self) -> Conf:
            return Conf()

    class JSession:
        def sessionState(self) -> State:
            return State()

    class Session:
        _jsparkSession = JSession()

    class Df:
        _jdf = Jdf()
        sparkSession = Session()

    assert _source._open_jvm_arrow(Df(), False, lambda: None) is None


@spark_only
def test_stopping_mid_partition_ends_the_jvm_server_cleanly(spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    socks: list[Any] = []
    orig = _source._open_jvm_arrow

    def spy(*a: Any) -> Any:
        sock = orig(*a)
        socks.append(sock)
        return sock

    monkeypatch.setattr(_source, "_open_jvm_arrow", spy)
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    prev = spark.conf.get(key)
    spark.conf.set(key, "100")
    try:
        first = from_dataframe(spark.range(0, 2000, numPartitions=2), max_bytes_in_flight=None).blocking_first(timeout=120)
    finally:
        spark.conf.set(key, prev)
    assert first.num_rows == 100
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and socks[0]._sock is not None:
        time.sleep(0.05)
    assert socks[0]._sock is None, "the socket was not released after the cancel"
    # the rest of partition 0 was drained and "stop" sent: the server ended without an error
    # (a socket closed under it would fail here with a broken pipe)
    socks[0]._server.getResult()


@spark_only
def test_the_calling_threads_job_group_is_restored(spark: Any) -> None:
    sc = spark.sparkContext
    sc.setJobGroup("users-own-group", "mine", False)
    try:
        rows = from_dataframe(spark.range(0, 10, numPartitions=2), as_="rows", subscribe_on=None).to_list().blocking_first(timeout=120)
        assert len(rows) == 10
        assert sc.getLocalProperty("spark.jobGroup.id") == "users-own-group"
        assert sc.getLocalProperty("spark.job.description") == "mine"
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)
        sc.setLocalProperty("spark.job.interruptOnCancel", None)
