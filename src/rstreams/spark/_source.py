"""Spark DataFrame -> Flowable, fetching on demand.

Transport (classic pyspark): the JVM turns each partition into Arrow record-batch messages with its
own ``ArrowConverters`` (``Dataset.toArrowBatchRdd``, the code path of ``df.toArrow()``; no Python
worker, no ``Row``), and ``PythonRDD.toLocalIteratorAndServe`` serves that RDD partition by partition
over a local socket. The driver asks for the next partition only when the Flowable is pulled past
the last batch of the current one, and the iterator is pulled only while there is outstanding
demand, so driver memory stays bounded by the partitions in flight (1, or 2 with prefetch).

Fallback (Spark Connect DataFrames, or a Spark without ``toArrowBatchRdd``):
``df.mapInArrow(to_ipc, "ipc binary").toLocalIterator(prefetchPartitions=...)``; each Arrow batch
travels as one Arrow IPC blob through a Python worker. Same demand and cancellation behaviour, slower.

Cancellation stops the running Spark job (its job group is cancelled) and closes the socket.
"""

from __future__ import annotations

import itertools
import socket
import struct
import uuid
from collections.abc import Callable, Generator, Iterator
from typing import Any, Final, NoReturn

from .._internal import plugins
from .._internal.atomics import AtomicFlag
from .._spec import Subscriber
from ..flowable import Flowable
from ..flowable._base import BasicSubscriber
from ..flowable._fused import Fusion, batch_sink

__all__ = ["from_dataframe", "from_table", "from_sql", "batch_to_rows"]

_AS: Final = ("arrow", "rows", "pandas")

# PythonRDD.toLocalIteratorAndServe's socket protocol (org.apache.spark.api.python.PythonRDD):
# the client writes 1 ("next partition, please") or 0 ("stop"); the server answers 1 (a partition
# follows: length-prefixed byte arrays, then END_OF_DATA_SECTION), 0 (no partitions left) or -1
# (a failure: the server object's getResult() raises it). Ints are 4-byte big-endian.
_INT: Final = struct.Struct("!i")
_REQUEST_NEXT: Final = _INT.pack(1)
_REQUEST_STOP: Final = _INT.pack(0)
_HAS_PARTITION: Final = 1
_NO_MORE: Final = 0
_END_OF_DATA_SECTION: Final = -1


def _to_ipc(batches: Iterator[Any]) -> Iterator[Any]:
    """Runs on the executors (fallback transport): each RecordBatch becomes one Arrow IPC stream in
    a binary cell."""
    import pyarrow as pa

    for b in batches:
        if b.num_rows == 0:
            continue
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, b.schema) as w:
            w.write_batch(b)
        yield pa.RecordBatch.from_arrays([pa.array([sink.getvalue().to_pybytes()], pa.binary())], names=["ipc"])


def _has_map(t: Any) -> bool:
    import pyarrow.types as pt

    if pt.is_map(t):
        return True
    if pt.is_list(t) or pt.is_large_list(t) or pt.is_fixed_size_list(t):
        return _has_map(t.value_type)
    if pt.is_struct(t):
        return any(_has_map(t.field(i).type) for i in range(t.num_fields))
    return False


def _maps_as_dicts(value: Any, t: Any) -> Any:
    """pyarrow gives a map as a list of (key, value) pairs; Spark's rows give a dict."""
    import pyarrow.types as pt

    if value is None:
        return None
    if pt.is_map(t):
        kt, it = t.key_type, t.item_type
        return {_maps_as_dicts(k, kt): _maps_as_dicts(v, it) for k, v in value}
    if pt.is_list(t) or pt.is_large_list(t) or pt.is_fixed_size_list(t):
        vt = t.value_type
        return [_maps_as_dicts(v, vt) for v in value]
    if pt.is_struct(t):
        return {f.name: _maps_as_dicts(value[f.name], f.type) for f in (t.field(i) for i in range(t.num_fields))}
    return value


def batch_to_rows(batch: Any) -> list[tuple[Any, ...]]:
    """A RecordBatch as a list of row tuples, converted column-wise (no ``Row`` objects).

    Values are what ``Row`` fields hold, except that a struct is a dict (``Row.asDict()``); a map
    column is a dict, as in Spark's rows.

    Example::

        import pyarrow as pa
        assert batch_to_rows(pa.RecordBatch.from_pydict({"a": [1, 2], "b": ["x", "y"]})) == [(1, "x"), (2, "y")]
    """
    cols = []
    for c in batch.columns:
        values = c.to_pylist()
        if _has_map(c.type):
            values = [_maps_as_dicts(v, c.type) for v in values]
        cols.append(values)
    if not cols:
        return [() for _ in range(batch.num_rows)]
    return list(zip(*cols, strict=True))


# -- JVM-side Arrow transport -------------------------------------------------------------------------


class _ResultStreamError(ConnectionError):
    """The Spark driver's result socket broke or spoke out of protocol, with no Spark error to
    report instead."""


class _ArrowPartitionSocket:
    """The driver's end of ``PythonRDD.toLocalIteratorAndServe`` over an RDD of Arrow record-batch
    messages: yields ``pyarrow.RecordBatch`` es, requesting a partition only when the previous one
    has been read to its end.

    One thread at a time: :meth:`batches` runs on the Flowable's emission loop, and :meth:`close`
    runs from its ``finally`` (on that thread, or on the thread that drops a suspended iterator).
    Nothing here is shared with a cancelling thread: a cancel stops the Spark jobs (the server then
    answers -1, which ends a blocked read), and the iterator is closed once nobody pulls it.
    """

    def __init__(self, sock_info: Any, schema: Any, on_partition: Callable[[], None]) -> None:
        from pyspark.util import local_connect_and_auth

        conn, secret, self._server = sock_info[0], sock_info[1], sock_info[2]
        self._schema = schema
        self._on_partition = on_partition
        sockfile, sock = local_connect_and_auth(conn, secret)
        # a partition may take arbitrarily long to compute (pyspark does the same, SPARK-18281)
        sock.settimeout(None)
        self._file: Any = sockfile
        self._sock: socket.socket | None = sock
        # where the protocol stands: "idle" (the server waits for a request), "requested" (a status
        # is due), "partition" (frames are due), "done" (the server has finished or failed)
        self._state = "idle"

    def _read_int(self) -> int:
        data = self._file.read(4)
        if len(data) < 4:
            raise EOFError("the Spark driver closed the result socket")
        value: int = _INT.unpack(data)[0]
        return value

    def _read_message(self, size: int) -> Any:
        import pyarrow as pa

        # one bytes object per message, wrapped without a copy (the batch's buffers point into
        # it); plain malloc gives large blocks back to the OS sooner than Arrow's pool: at 10 M
        # rows the peak RSS was 54 MB this way, 61 MB with pa.allocate_buffer + readinto
        data = self._file.read(size)
        if len(data) < size:
            raise EOFError("the Spark driver closed the result socket mid-partition")
        return pa.py_buffer(data)

    def batches(self) -> Iterator[Any]:
        """The non-empty record batches of every partition, in order."""
        import pyarrow as pa

        read_batch = pa.ipc.read_record_batch
        schema = self._schema
        try:
            while True:
                self._state = "requested"
                self._file.write(_REQUEST_NEXT)
                self._file.flush()
                status = self._read_int()
                if status == _NO_MORE:
                    self._state = "done"
                    return
                if status != _HAS_PARTITION:
                    self._state = "done"
                    self._raise_server_failure(f"status {status}")
                self._state = "partition"
                self._on_partition()
                while True:
                    size = self._read_int()
                    if size == _END_OF_DATA_SECTION:
                        break
                    if size < 0:
                        raise _ResultStreamError(f"from_dataframe: unexpected frame length {size} from the Spark driver")
                    batch = read_batch(self._read_message(size), schema)
                    if batch.num_rows:
                        yield batch
                self._state = "idle"
        except (EOFError, OSError) as e:
            if isinstance(e, _ResultStreamError):
                raise
            self._state = "done"
            self._raise_server_failure(f"{type(e).__name__}: {e}")

    def _raise_server_failure(self, what: str) -> NoReturn:
        """The server signalled a failure (or the socket broke): raise the JVM-side error if any."""
        self._server.getResult()  # raises the failure of the serving thread (a Spark job error)
        raise _ResultStreamError(f"from_dataframe: the Spark driver's result stream broke ({what})")

    def close(self) -> None:
        """Release the socket, stopping the server politely: the rest of a partition being read is
        drained (Spark has materialized it already) and 0 ("stop") is sent, so the server ends
        without logging a broken pipe. Jobs are not touched (a cancel has stopped them)."""
        sock, self._sock = self._sock, None
        if sock is None:
            return
        try:
            if self._state == "partition":
                while (size := self._read_int()) != _END_OF_DATA_SECTION:
                    if size < 0 or len(self._file.read(size)) < size:
                        raise EOFError
                self._state = "idle"
            if self._state == "idle":
                self._file.write(_REQUEST_STOP)
                self._file.flush()
        except (EOFError, OSError, ValueError):
            pass  # the server is gone or failed: nothing left to stop
        finally:
            self._state = "done"
            try:
                self._file.close()
            except OSError:
                pass
            sock.close()


def _open_jvm_arrow(df: Any, prefetch: bool, on_partition: Callable[[], None]) -> _ArrowPartitionSocket | None:
    """Serve ``df`` as JVM-made Arrow batches, partition by partition; ``None`` when this
    DataFrame/Spark cannot (Spark Connect, or no ``toArrowBatchRdd`` of the expected shape)."""
    jdf = getattr(df, "_jdf", None)
    if jdf is None:
        return None
    from py4j.protocol import Py4JError, Py4JJavaError  # type: ignore[import-untyped,unused-ignore]
    from pyspark.sql.pandas.types import to_arrow_schema

    spark = df.sparkSession
    try:
        # the settings Dataset.toArrowBatchRdd() itself would read (SQLConf accessors)
        conf = spark._jsparkSession.sessionState().conf()
        max_records = int(conf.arrowMaxRecordsPerBatch())
        time_zone = str(conf.sessionLocalTimeZone())
        large_var_types = bool(conf.arrowUseLargeVarTypes())
        error_on_duplicates = str(conf.pandasStructHandlingMode()) == "legacy"
        # private[sql] in Scala, public in bytecode: (maxRecordsPerBatch, timeZoneId,
        # errorOnDuplicatedFieldNames, largeVarTypes) -> RDD[Array[Byte]] of record-batch messages
        rdd = jdf.toArrowBatchRdd(max_records, time_zone, error_on_duplicates, large_var_types)
    except Py4JJavaError:
        raise  # the query itself failed (e.g. while planning): a real error, not a missing method
    except (Py4JError, AttributeError):
        return None  # no such method or setting on this Spark version: use the fallback
    # the schema the JVM wrote with (the messages carry none): same time zone and string/binary
    # widths as the toArrowBatchRdd call above
    schema = to_arrow_schema(df.schema, timezone=time_zone, prefers_large_types=large_var_types)
    sock_info = spark.sparkContext._jvm.PythonRDD.toLocalIteratorAndServe(rdd, prefetch)
    return _ArrowPartitionSocket(sock_info, schema, on_partition)


_NO_BATCH: Final = object()
_JOB_GROUP_PROPERTIES: Final = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")


class _Fetch:
    """One subscription's Spark fetch: the transport, its job group, and its cleanup."""

    def __init__(self, df: Any, prefetch: bool) -> None:
        self._df = df
        self._prefetch = prefetch
        self._group = f"rstreams-source-{uuid.uuid4().hex[:12]}"
        self._closed = AtomicFlag()
        self.partitions_fetched = 0  # partitions (JVM transport) or IPC blobs (fallback) received
        self.transport = ""  # "jvm-arrow" or "map-in-arrow", once started

    def _count_partition(self) -> None:
        self.partitions_fetched += 1

    def batches(self) -> Iterator[Any]:
        """The DataFrame's non-empty record batches. Errors caused by our own cancellation (a
        cancelled job) end the iterator quietly: nobody waits for them any more."""
        if self._closed.is_set():
            return
        try:
            source, release = self._open()
            try:
                if self._closed.is_set():
                    # race: close() ran while the transport was opening; a job it could not see
                    # (cancelJobGroup without "future jobs", on an older Spark) is stopped here
                    self._cancel_jobs()
                    return
                yield from source
            finally:
                release()
        except Exception:
            if self._closed.is_set():
                return
            raise

    def _open(self) -> tuple[Iterator[Any], Callable[[], None]]:
        """Open the transport (its batches, and how to release it) with this fetch's job group set
        on the calling thread, then restore the thread's own group. Jobs run either during these
        calls (planning, adaptive stages) or on the serving thread that toLocalIteratorAndServe
        starts here, which inherits a copy of the group: no job of ours depends on the calling
        thread's group afterwards (a pooled io thread keeps no stale group)."""
        if getattr(self._df, "_jdf", None) is None:
            # Spark Connect: no SparkContext here; the operation carries this fetch's tag instead
            # of a job group, and a cancel interrupts it by that tag (on the server)
            self.transport = "map-in-arrow"
            rows = self._df.mapInArrow(_to_ipc, "ipc binary").toLocalIterator(prefetchPartitions=self._prefetch)
            return self._tagged(self._fallback_batches(rows)), lambda: None
        sc = self._df.sparkSession.sparkContext
        saved = [sc.getLocalProperty(k) for k in _JOB_GROUP_PROPERTIES]
        sc.setJobGroup(self._group, "rstreams from_dataframe", True)
        try:
            sock = _open_jvm_arrow(self._df, self._prefetch, self._count_partition)
            if sock is not None:
                self.transport = "jvm-arrow"
                return sock.batches(), sock.close
            self.transport = "map-in-arrow"
            rows = self._df.mapInArrow(_to_ipc, "ipc binary").toLocalIterator(prefetchPartitions=self._prefetch)
            # pyspark's local iterator stops its server when it is collected (draining, then 0)
            return self._fallback_batches(rows), lambda: None
        finally:
            for key, value in zip(_JOB_GROUP_PROPERTIES, saved, strict=True):
                sc.setLocalProperty(key, value)

    def _tagged(self, batches: Iterator[Any]) -> Generator[Any, None, None]:
        """Spark Connect: the server operation starts at the first pull (pyspark's local iterator
        is lazy), so the tag is on this thread exactly around that pull (tags are per thread and
        would otherwise mark the user's later operations on it too)."""
        spark = self._df.sparkSession
        tagged = False
        try:
            spark.addTag(self._group)
            tagged = True
        except Exception as e:  # pragma: no cover - a Connect client without tags (Spark < 3.5)
            plugins.on_error(e, "from_dataframe: Spark Connect operation tags unavailable; cancel only closes the stream")
        try:
            first = next(batches, _NO_BATCH)
        finally:
            if tagged:
                spark.removeTag(self._group)
        if first is _NO_BATCH:
            return
        yield first
        yield from batches

    def _fallback_batches(self, rows: Iterator[Any]) -> Generator[Any, None, None]:
        """The mapInArrow transport: one IPC blob per executor batch, as rows of toLocalIterator."""
        import pyarrow as pa

        for row in rows:
            self._count_partition()
            for batch in pa.ipc.open_stream(row[0]):
                if batch.num_rows:
                    yield batch
            if self._closed.is_set():
                return

    def _cancel_jobs(self) -> None:
        """Cancel the group's running jobs and any it submits later (the serving thread may be
        about to submit the requested partition's job: that race is why "future jobs" matter)."""
        if getattr(self._df, "_jdf", None) is None:
            try:  # Spark Connect: interrupt the server operation by this fetch's tag (see _open)
                self._df.sparkSession.interruptTag(self._group)
            except Exception as e:  # pragma: no cover - a client without tags, or a closed session
                plugins.on_error(e, "from_dataframe: interrupting the Spark Connect operation failed")
            return
        sc = self._df.sparkSession.sparkContext
        try:
            try:
                sc._jsc.sc().cancelJobGroupAndFutureJobs(self._group)
            except Exception:  # no such method (Spark < 3.5, or no JVM handle): running jobs only
                sc.cancelJobGroup(self._group)
        except Exception as e:  # pragma: no cover
            plugins.on_error(e, "from_dataframe: cancelling the Spark job group failed")

    def close(self, cancel_jobs: bool = True) -> None:
        """Stop: on cancel (or error) the job group's jobs are cancelled; after a normal completion
        nothing of ours runs. The socket is closed by the iterator's ``finally`` (on the reading
        thread, or when the released iterator is collected)."""
        if not self._closed.try_set():
            return
        if cancel_jobs:
            self._cancel_jobs()


class _CleanupSubscriber(BasicSubscriber[Any, Any]):
    __slots__ = ("_fetch",)

    def __init__(self, downstream: Subscriber[Any], fetch: _Fetch) -> None:
        super().__init__(downstream)
        self._fetch = fetch

    def on_next(self, item: Any) -> None:
        self.downstream.on_next(item)

    def on_error(self, error: BaseException) -> None:
        self._fetch.close()
        super().on_error(error)

    def on_complete(self) -> None:
        self._fetch.close(cancel_jobs=False)
        super().on_complete()

    def cancel(self) -> None:
        self._fetch.close()
        self.upstream.cancel()


class _RowsCleanupSubscriber(_CleanupSubscriber):
    """Rows mode: row tuples may travel as library-internal batches (one call per slice of rows,
    at most the outstanding demand). Only rows mode: in Arrow mode an element is a whole record
    batch, and a batch of those would pull several partitions' data ahead of one-by-one delivery."""

    __slots__ = ("_next_batch", "accepts_batches")

    def __init__(self, downstream: Subscriber[Any], fetch: _Fetch) -> None:
        super().__init__(downstream, fetch)
        self._next_batch = batch_sink(downstream)
        self.accepts_batches = self._next_batch is not None

    def on_next_batch(self, items: list[Any]) -> None:
        nb = self._next_batch
        if nb is not None:
            nb(items)
        else:  # pragma: no cover - batch_sink() only offers batches when accepts_batches is True
            for x in items:
                self.downstream.on_next(x)


class _DataFrameFlowable(Flowable[Any]):
    __slots__ = ("_df", "_as", "_prefetch")

    def __init__(self, df: Any, as_: str, prefetch: bool) -> None:
        self._df = df
        self._as = as_
        self._prefetch = prefetch

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        fetch = _Fetch(self._df, self._prefetch)
        as_ = self._as
        if as_ == "arrow":
            factory = fetch.batches
        elif as_ == "rows":

            def factory() -> Iterator[Any]:
                return itertools.chain.from_iterable(map(batch_to_rows, fetch.batches()))
        else:

            def factory() -> Iterator[Any]:
                return (b.to_pandas() for b in fetch.batches())

        # eager=False: never pull the next partition just to discover the end (rule 1.1 in spirit:
        # no Spark work without demand); completion arrives with the next request.
        fusion: Fusion[Any] = Fusion(factory, None, (), ("from_dataframe",), eager=False)
        cleanup = _RowsCleanupSubscriber(subscriber, fetch) if as_ == "rows" else _CleanupSubscriber(subscriber, fetch)
        fusion.subscribe(cleanup)


def from_dataframe(df: Any, *, as_: str = "arrow", max_partitions_in_flight: int = 1, subscribe_on: Any = "io") -> Flowable[Any]:
    """A Flowable over a Spark DataFrame: ``pyarrow.RecordBatch`` elements (``as_="arrow"``), row
    tuples (``"rows"``) or pandas DataFrames (``"pandas"``).

    Example::

        from rstreams import spark
        s = spark.session()
        total = spark.from_dataframe(s.range(1000), as_="rows").map(lambda r: r[0]).reduce(operator.add)

    Backpressure: the next partition is fetched only while there is outstanding demand; at most
    ``max_partitions_in_flight`` partitions are held by the driver (an upper bound: the transport
    holds the partition being read and, from 2 on, one prefetched, never more). In arrow mode one
    element is one record batch (``spark.sql.execution.arrow.maxRecordsPerBatch`` rows at most);
    empty batches are skipped. The batches are made by the JVM (as for ``df.toArrow()``), without
    a Python worker; Spark Connect DataFrames go through ``mapInArrow`` instead.
    Scheduler: Spark is driven from a worker of ``subscribe_on`` (default: the io scheduler), so
    a request never blocks the caller's thread; pass ``None`` to fetch on the requesting thread.
    Cancellation cancels the running Spark job.
    """
    if as_ not in _AS:
        raise ValueError(f"from_dataframe(): as_ must be one of {_AS}, got {as_!r}")
    if not isinstance(max_partitions_in_flight, int) or max_partitions_in_flight < 1:
        raise ValueError(f"from_dataframe(): max_partitions_in_flight must be >= 1, got {max_partitions_in_flight!r}")
    if not hasattr(df, "mapInArrow"):
        raise TypeError(f"from_dataframe(): expected a pyspark DataFrame, got {type(df).__name__}")
    try:
        streaming = bool(df.isStreaming)
    except Exception:  # noqa: BLE001 - a DataFrame that cannot say: let the fetch report it
        streaming = False
    if streaming:
        raise TypeError(
            "from_dataframe(): this DataFrame is a streaming one (spark.readStream); "
            "use rstreams.spark.from_stream(df) for Structured Streaming"
        )
    f: Flowable[Any] = _DataFrameFlowable(df, as_, max_partitions_in_flight > 1)
    if subscribe_on == "io":
        from .. import schedulers

        f = f.subscribe_on(schedulers.io())
    elif subscribe_on is not None:
        f = f.subscribe_on(subscribe_on)
    return f


def from_table(name: str, *, spark: Any = None, **kwargs: Any) -> Flowable[Any]:
    """``from_dataframe(spark.table(name), ...)``."""
    from ._session import session

    s = spark or session()
    return from_dataframe(s.table(name), **kwargs)


def from_sql(query: str, *, spark: Any = None, **kwargs: Any) -> Flowable[Any]:
    """``from_dataframe(spark.sql(query), ...)``."""
    from ._session import session

    s = spark or session()
    return from_dataframe(s.sql(query), **kwargs)
