"""Spark DataFrame -> Flowable, fetching on demand, with the driver's memory bounded by a slice.

Transport (classic pyspark, the default): **each task streams its partition to this process**.
The DataFrame goes through ``mapInArrow`` with a small function (:func:`_task_streamer`, pickled
by value: executors need pyarrow, as for any ``mapInArrow``, but not rstreams) that connects back
to a listening socket of this process (a per-subscription token authenticates it) and sends the
partition's Arrow record batches as Spark hands them over, sliced to at most
``max_bytes_in_flight / 8`` bytes. The task's own output is one row (attempt number, rows sent),
so its job's result is tiny. A job thread (:class:`_PartitionJobs`) runs one job per partition,
in order, each only when wanted; a reader thread (:class:`_TaskStream`) moves the batches from the
task's connection into a queue of at most ``max_bytes_in_flight / 4`` bytes, which the subscriber
takes from on demand. While that queue is full the reader stops reading, the socket buffers fill,
the Python worker blocks in ``send`` and stops pulling batches, and Spark's task stops computing
rows: backpressure reaches the task itself. The driver JVM holds no partition: at most the Arrow
batch it hands the worker (``spark.sql.execution.arrow.maxBytesPerBatch``, set to the slice for
these tasks only, as a local property).

A task waiting for demand occupies a task slot. So that a subscriber that itself waits for another
Spark job (a ``to_spark`` downstream on ``local[1]``, say) cannot deadlock with it, a task blocked
for ``spill_after`` seconds is drained at Spark's pace into an unnamed local temp file, which the
subscriber then reads on (memory stays bounded; disk holds at most the rest of that partition).

Why this transport. Measured on one partition of ~1 GiB of Arrow data (3.5 M rows of ~310 bytes),
``local[2]`` on a loaded 2-core machine: the former transport (below) collects the partition as one
task result in the driver JVM; with Spark's defaults it fails (the result exceeds
``spark.driver.maxResultSize``), and with that lifted and an 8 GB heap the JVM's old generation
grew by 7.5 GB (the result's serialized copy, its deserialized copy and the served array) at
103 k rows/s; this one grew it by 3 MB, in a 2 GB heap, at 750 k rows/s (no task-result
serialization at all). The price is the Python worker every row now passes through (as for any
``mapInArrow``, ~0.6 us per row here for three narrow columns): on 10 M rows of (long, double,
string) in 1 M-row partitions this one ran 1.3-1.45 M rows/s against the former one's 2.7-3.2 M
(a Python worker that only reads its input: 1.4 M rows/s per task), so ``max_bytes_in_flight=None``
remains the faster choice for narrow rows in partitions known to be small; a partition job also
costs ~0.1-0.2 s more (the worker's task). The alternatives considered: re-slicing the DataFrame
into partitions of a bounded size needs a shuffle (a full extra pass, then the row order to
restore; and a size estimate from statistics, often wrong after filters) or a recomputation of
the partition per slice; spilling the whole DataFrame to Parquet first does all of Spark's work
before any demand and needs a file system shared with the executors. Streaming from the task
needs the executors to reach this process: ``127.0.0.1`` for local masters, else ``spark.driver.host`` (which executors
reach already, for the driver JVM). Where they cannot, ``max_bytes_in_flight=None`` keeps the
former transport.

``max_bytes_in_flight=None`` (the former transport): the JVM turns each partition into Arrow
record-batch messages with its own ``ArrowConverters`` (``Dataset.toArrowBatchRdd``, the code
path of ``df.toArrow()``; no Python worker) and ``PythonRDD.toLocalIteratorAndServe`` serves that
RDD partition by partition, each collected whole by the driver JVM.

Fallback (Spark Connect DataFrames, or ``None`` on a Spark without ``toArrowBatchRdd``):
``df.mapInArrow(to_ipc, "ipc binary").toLocalIterator(prefetchPartitions=...)``; each Arrow batch
travels as one Arrow IPC blob through a Python worker; partitions are collected whole (by the
server's JVM over Connect).

Cancellation stops the running Spark job (its job group is cancelled) and closes the sockets. A
driver JVM that exits (killed, or out of heap: :func:`~rstreams.spark.session` starts it with
``-XX:+ExitOnOutOfMemoryError``) ends the stream with :class:`~rstreams.spark.SparkJvmDiedError`
within about a second: its sockets close, and a :class:`~rstreams.spark._jvm.JvmWatchdog` watches
the process during the fetch.
"""

from __future__ import annotations

import hmac
import itertools
import os
import queue
import secrets
import socket
import struct
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Generator, Iterator
from typing import Any, Final, NoReturn

from .._internal import plugins
from .._internal.atomics import AtomicFlag, AtomicRef
from .._spec import Subscriber
from ..flowable import Flowable
from ..flowable.lowlevel import BasicSubscriber, Fusion, batch_sink, batch_to_rows
from ._jvm import JvmWatchdog, SparkJvmDiedError, dead_jvm_error, jvm_exit_code

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


# -- JVM-side Arrow transport (max_bytes_in_flight=None) ---------------------------------------------


class _ResultStreamError(ConnectionError):
    """The Spark driver's result socket, or a task's stream, broke or spoke out of protocol, with
    no Spark error to report instead."""


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


# -- the task stream ---------------------------------------------------------------------------------
# A task's connection: hello (token, partition, attempt), then frames (kind, length) + body: the
# schema message, record-batch messages, and an end frame whose "length" is the rows sent.
_TS_HELLO: Final = struct.Struct("!32sii")
_TS_FRAME: Final = struct.Struct("!iq")
_TS_SCHEMA: Final = 1
_TS_BATCH: Final = 2
_TS_END: Final = 3
_TS_OUTPUT: Final = "attempt int, rows long"  # the task's own (one-row) output
_MAX_BYTES_PER_BATCH: Final = "spark.sql.execution.arrow.maxBytesPerBatch"
_MIN_SLICE: Final = 16 * 1024
_MAX_SOCKET_BUFFER: Final = 4 * 1024 * 1024
_CONNECT_TIMEOUT_S: Final = 60.0
# after a partition's job has finished, the rest of its stream is in socket buffers or in transit:
# this long without a byte of it means it is lost
_TRANSIT_TIMEOUT_S: Final = 120.0


def _task_streamer(host: str, port: int, token: bytes, slice_bytes: int, sndbuf: int) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The ``mapInArrow`` function that streams a partition to the subscriber's process.

    A nested function, so cloudpickle ships it by value (executors need pyspark and pyarrow, not
    rstreams); it uses only its closure's plain values and what it imports itself. Backpressure:
    ``sendall`` blocks while the subscriber does not read, and then this function does not pull
    the next batch, so Spark's task does not compute more rows."""
    hello_format, frame_format = _TS_HELLO.format, _TS_FRAME.format
    schema_kind, batch_kind, end_kind = _TS_SCHEMA, _TS_BATCH, _TS_END
    connect_timeout = _CONNECT_TIMEOUT_S

    def stream_partition(batches: Iterator[Any]) -> Iterator[Any]:
        import socket as _socket
        import struct as _struct

        import pyarrow as _pa
        from pyspark import TaskContext

        frame = _struct.Struct(frame_format)
        ctx = TaskContext.get()
        partition = ctx.partitionId() if ctx is not None else -1
        attempt = ctx.attemptNumber() if ctx is not None else 0
        rows = 0
        try:
            sock = _socket.create_connection((host, port), timeout=connect_timeout)
        except OSError as e:
            raise ConnectionError(
                f"rstreams from_dataframe: a Spark task cannot reach the subscriber at {host}:{port} ({e}); "
                "executors must reach the driver's host (spark.driver.host), or use max_bytes_in_flight=None"
            ) from e
        try:
            sock.settimeout(None)
            sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_SNDBUF, sndbuf)
            sock.sendall(_struct.pack(hello_format, token, partition, attempt))
            schema_sent = False
            for batch in batches:
                n = batch.num_rows
                if not n:
                    continue
                if not schema_sent:
                    message = batch.schema.serialize()
                    sock.sendall(frame.pack(schema_kind, message.size))
                    sock.sendall(message)
                    schema_sent = True
                size = batch.nbytes
                step = n if size <= slice_bytes else max(1, n * slice_bytes // size)
                for offset in range(0, n, step):
                    piece = batch if step >= n else batch.slice(offset, step)
                    message = piece.serialize()
                    sock.sendall(frame.pack(batch_kind, message.size))
                    sock.sendall(message)
                    rows += piece.num_rows
            sock.sendall(frame.pack(end_kind, rows))
        except OSError as e:
            raise ConnectionError(
                f"rstreams from_dataframe: partition {partition}'s stream to the subscriber broke ({e}); "
                "the subscription was cancelled or its process ended"
            ) from e
        finally:
            sock.close()
        yield _pa.RecordBatch.from_arrays([_pa.array([attempt], _pa.int32()), _pa.array([rows], _pa.int64())], names=["attempt", "rows"])

    return stream_partition


class _TaskConn:
    """One task attempt's connection, non-blocking, read frame by frame (reader thread only)."""

    __slots__ = ("sock", "token", "partition", "attempt", "schema", "received", "ended", "_hello", "_head", "_body", "_kind", "_got")

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self.sock = sock
        self.token = b""
        self.partition = -1
        self.attempt = -1
        self.schema: Any = None
        self.received = 0  # rows received on this connection
        self.ended = False  # its end frame has arrived
        self._hello = bytearray(_TS_HELLO.size)
        self._head = bytearray(_TS_FRAME.size)
        self._body: bytearray | None = None
        self._kind = 0
        self._got = 0

    def _fill(self, buf: bytearray) -> bool:
        """Read into ``buf`` from ``_got`` on: True once full, False when no more data is there
        for now; EOFError at the end of the stream."""
        view = memoryview(buf)
        try:
            while self._got < len(buf):
                try:
                    n = self.sock.recv_into(view[self._got :])
                except BlockingIOError:
                    return False
                if n == 0:
                    raise EOFError("the task's connection closed")
                self._got += n
        finally:
            view.release()
        self._got = 0
        return True

    def read_hello(self) -> bool:
        if not self._fill(self._hello):
            return False
        self.token, self.partition, self.attempt = _TS_HELLO.unpack(self._hello)
        return True

    def read_frame(self) -> tuple[int, Any] | None:
        """The next whole frame ``(kind, body)`` (``(END, rows)`` for the end frame), or None when
        it has not fully arrived yet."""
        if self._body is None:
            if not self._fill(self._head):
                return None
            kind, length = _TS_FRAME.unpack(self._head)
            if kind == _TS_END:
                return kind, length
            if kind not in (_TS_SCHEMA, _TS_BATCH) or length < 0:
                raise _ResultStreamError(f"from_dataframe: a task sent an unexpected frame ({kind}, {length})")
            self._kind = kind
            self._body = bytearray(length)
        if not self._fill(self._body):
            return None
        body, self._body = self._body, None
        return self._kind, body

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class _Spill:
    """Record-batch messages the subscriber has not taken yet, in an unnamed temp file: written by
    the reader thread (appends), read by the consumer (``pread`` at known offsets, so the two
    never share a file position)."""

    def __init__(self) -> None:
        import tempfile

        self._file = tempfile.TemporaryFile(prefix="rstreams-from-dataframe-")
        self._fd = self._file.fileno()
        self._end = 0  # reader thread only

    def write(self, data: Any) -> tuple[int, int]:
        view = memoryview(data).cast("B")
        offset, n = self._end, len(view)
        done = 0
        while done < n:
            done += os.pwrite(self._fd, view[done:], offset + done)
        self._end += n
        return offset, n

    def read(self, offset: int, n: int) -> bytes:
        parts = []
        while n > 0:
            data = os.pread(self._fd, n, offset)
            if not data:
                raise _ResultStreamError("from_dataframe: the spill file ended early")
            parts.append(data)
            offset += len(data)
            n -= len(data)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def close(self) -> None:
        self._file.close()


# queue entries (reader thread -> consumer)
_BATCH: Final = 0  # (_BATCH, batch, nbytes)
_SPILLED: Final = 1  # (_SPILLED, offset, length, schema)
_PARTITION_END: Final = 2  # (_PARTITION_END,)
_ERROR: Final = 3  # (_ERROR, exception)
# selector tags
_LISTEN: Final = "listen"
_WAKE: Final = "wake"
_JOBS: Final = "jobs"


class _PartitionJobs:
    """Runs the task stream's Spark jobs, one partition per job, in order, each when requested.

    A job thread of its own makes the blocking ``PythonRDD.runJob`` calls (pyspark's
    ``SparkContext.runJob``) with the local properties of the thread that subscribed (a scheduler
    pool, a streaming batch's SQL execution, as a serving thread it started would inherit), the
    fetch's job group, the session's SQL settings (what ``SQLExecution`` gives an action's tasks),
    and the cap on the Arrow batches the JVM hands the Python worker. A job's result (one ``(attempt, rows)`` row) is
    handed to the reader thread through a socket pair, which the reader ``select`` s on with the
    tasks' connections. A cancelled job (a cancel, a failure elsewhere) ends its ``runJob`` call
    with an error that nobody waits for: no serving thread logs it as an aborted task.
    """

    def __init__(self, df: Any, jrdd: Any, group: str, inherited: Any, local_properties: dict[str, str]) -> None:
        self._df = df
        self._jrdd = jrdd
        self._group = group
        self._inherited = inherited  # a java.util.Properties: the subscribing thread's, copied
        self._properties = local_properties
        self._partitions = int(jrdd.getNumPartitions())
        self._ready_r, self._ready_w = socket.socketpair()
        # _lock guards _results and _closed: the job thread appends, the reader thread pops
        self._lock = threading.Lock()
        self._results: deque[tuple[str, Any]] = deque()
        self._closed = False
        self._requests: queue.SimpleQueue[int | None] = queue.SimpleQueue()  # thread-safe by itself
        self._next = 0  # reader thread only
        self._thread = threading.Thread(target=self._run, name="rstreams-from-dataframe-jobs", daemon=True)
        self._thread.start()

    def fileno(self) -> int:
        return self._ready_r.fileno()

    def request_next(self) -> None:
        """Start the next partition's job (or learn that there is none): :meth:`read_result`
        gives the outcome once :meth:`fileno` is readable."""
        self._requests.put(self._next)
        self._next += 1

    def read_result(self) -> list[tuple[int, int]] | None:
        """The finished job's ``(attempt, rows)`` results, or None when there was no such
        partition; a failed job raises its error."""
        self._ready_r.recv(1)
        with self._lock:
            kind, value = self._results.popleft()
        if kind == "error":
            raise value
        result: list[tuple[int, int]] | None = value
        return result

    def _run(self) -> None:
        from pyspark.serializers import BatchedSerializer, CPickleSerializer
        from pyspark.util import _load_from_socket

        sc = self._df.sparkSession.sparkContext
        try:
            if self._inherited is not None:
                sc._jsc.sc().setLocalProperties(self._inherited)
            for key, value in self._properties.items():
                sc.setLocalProperty(key, value)
            sc.setJobGroup(self._group, "rstreams from_dataframe", True)
        except Exception as e:  # noqa: BLE001 - reported with the first result
            self._put("error", e)
            return
        while (i := self._requests.get()) is not None:
            with self._lock:
                if self._closed:
                    return  # a request made just before close(): no job for nobody
            if i >= self._partitions:
                self._put("result", None)
                continue
            try:
                sock_info = sc._jvm.PythonRDD.runJob(sc._jsc.sc(), self._jrdd, [i])
                with _load_from_socket(sock_info, BatchedSerializer(CPickleSerializer())) as rows:  # type: ignore[no-untyped-call]
                    result = [(int(r[0]), int(r[1])) for r in rows]
            except Exception as e:  # noqa: BLE001 - handed to the reader thread
                self._put("error", e)
                continue
            self._put("result", result)

    def _put(self, kind: str, value: Any) -> None:
        with self._lock:
            if self._closed:
                return
            self._results.append((kind, value))
            try:
                self._ready_w.send(b"!")
            except OSError:
                pass

    def close(self) -> None:
        """Stop the job thread once its job (if any) returns; a running job is the fetch's to
        cancel (its job group)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._ready_w.close()
        self._requests.put(None)
        self._ready_r.close()


class _TaskStream:
    """The subscriber's end of the task stream (see the module docstring).

    A reader thread asks for the partition jobs (:class:`_PartitionJobs`) and reads the tasks'
    connections, all in one ``select`` loop, into a queue that the consumer (:meth:`batches`, on
    the Flowable's emission thread) takes batches from. A partition is requested while fewer than
    ``prefetch + 1`` partitions are in flight (requested, and not yet taken to their end by the
    consumer): without prefetch, when the consumer pulls past the last batch of the current one.
    """

    def __init__(
        self,
        jobs: _PartitionJobs,
        listener: socket.socket,
        token: bytes,
        on_partition: Callable[[], None],
        interrupted: Callable[[], bool],
        budget: int,
        prefetch: bool,
        spill_after: float | None,
    ) -> None:
        import selectors

        self._jobs = jobs
        self._listener = listener
        self._token = token
        self._on_partition = on_partition
        self._interrupted = interrupted  # True once the fetch is closed; raises a dead JVM's error
        self._budget = budget
        self._spill_after = spill_after
        self._sel = selectors.DefaultSelector()
        wake_r, wake_w = socket.socketpair()
        wake_r.setblocking(False)
        wake_w.setblocking(False)
        self._wake_r = wake_r
        # _cond's lock guards the hand-off between the reader thread and the consumer (_items,
        # _queued, _in_flight, _ended, _stopping) and _wake_w's open state (wake() may come
        # from any thread: a cancel, the JVM watchdog)
        self._cond = threading.Condition(threading.Lock())
        self._wake_w: socket.socket | None = wake_w
        self._items: deque[tuple[Any, ...]] = deque()
        self._queued = 0  # bytes of the _BATCH entries in _items
        self._in_flight = 0  # partitions requested and not yet taken to their end by the consumer
        self._max_in_flight = 2 if prefetch else 1
        self._ended = False  # the reader is done: _items holds everything there will be
        self._stopping = False
        # reader thread only
        self._hellos: set[_TaskConn] = set()
        self._parked: dict[int, list[_TaskConn]] = {}
        self._cur: _TaskConn | None = None
        self._spilling = False
        self._spill: _Spill | None = None  # written by the reader, read by the consumer, closed by close()
        self._sel.register(listener, selectors.EVENT_READ, _LISTEN)
        self._sel.register(wake_r, selectors.EVENT_READ, _WAKE)
        self._thread = threading.Thread(target=self._run, name="rstreams-from-dataframe", daemon=True)
        self.spilled_bytes = 0  # bytes that went through the spill file (the reader writes it)

    def start(self) -> _TaskStream:
        self._thread.start()
        return self

    # -- any thread ------------------------------------------------------------------------------

    def wake(self) -> None:
        """Wake the reader (and a waiting consumer) to look at the fetch's state again."""
        with self._cond:
            self._cond.notify_all()
            w = self._wake_w
            if w is not None:
                try:
                    w.send(b"\0")
                except OSError:  # a wake-up is pending already (buffer full)
                    pass

    def close(self) -> None:
        """Stop the reader, wait for it to release the sockets, drop the spill file."""
        with self._cond:
            self._stopping = True
        self.wake()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(30.0)
        spill, self._spill = self._spill, None
        if spill is not None:
            spill.close()

    # -- the consumer ----------------------------------------------------------------------------

    def batches(self) -> Iterator[Any]:
        import pyarrow as pa

        cond = self._cond
        items = self._items
        while True:
            with cond:
                while not items:
                    if self._ended:
                        return
                    cond.wait()
                entry = items.popleft()
                kind = entry[0]
                if kind == _BATCH:
                    self._queued -= entry[2]
                    cond.notify_all()  # room in the queue: the reader may go on
                elif kind == _PARTITION_END:
                    self._in_flight -= 1
                    cond.notify_all()  # the reader may request the next partition
                    continue
            if kind == _BATCH:
                yield entry[1]
            elif kind == _SPILLED:
                spill = self._spill
                if spill is None:
                    return  # closed meanwhile
                yield pa.ipc.read_record_batch(pa.py_buffer(spill.read(entry[1], entry[2])), entry[3])
            else:
                raise entry[1]

    # -- the reader thread -----------------------------------------------------------------------

    def _run(self) -> None:
        error: BaseException | None = None
        try:
            partition = 0
            while self._await_room_for_a_partition():
                self._jobs.request_next()
                if not self._read_partition(partition):
                    break
                with self._cond:
                    self._items.append((_PARTITION_END,))
                    self._cond.notify_all()
                partition += 1
        except BaseException as e:  # noqa: BLE001 - handed to the consumer
            error = e
        finally:
            self._release()
            with self._cond:
                if error is not None:
                    self._items.append((_ERROR, error))
                self._ended = True
                self._cond.notify_all()

    def _await_room_for_a_partition(self) -> bool:
        with self._cond:
            while self._in_flight >= self._max_in_flight:
                if self._stopping or self._interrupted():
                    return False
                self._cond.wait()
            self._in_flight += 1
            return not self._stopping and not self._interrupted()

    def _read_partition(self, i: int) -> bool:
        """Stream partition ``i`` into the queue; False when there is no partition ``i`` (or the
        fetch was closed)."""
        import selectors

        sel = self._sel
        jobs = self._jobs
        sel.register(jobs, selectors.EVENT_READ, _JOBS)
        jobs_pending = True
        expected: int | None = None  # rows of the partition, from its job's result
        winner = -1  # the attempt whose result Spark kept
        delivered = 0  # rows queued for the consumer
        counted = False
        ended = False  # an attempt's stream came to its end frame: only the job's status is due
        self._spilling = False
        try:
            while expected is None or delivered < expected:
                if self._cur is None and (not ended or expected is not None):
                    cur = self._take(i, winner if expected is not None else None)
                    if cur is not None:
                        self._cur = cur
                        sel.register(cur.sock, selectors.EVENT_READ, cur)
                        if not counted:
                            counted = True
                            self._on_partition()
                events = sel.select(None if jobs_pending else _TRANSIT_TIMEOUT_S)
                if not events:
                    raise _ResultStreamError(
                        f"from_dataframe: partition {i}'s task finished, but {(expected or 0) - delivered} of its rows "
                        f"did not arrive in {_TRANSIT_TIMEOUT_S:.0f} s"
                    )
                for key, _ in events:
                    tag = key.data
                    if tag is _WAKE:
                        self._drain_wake()
                        if self._stopping or self._interrupted():
                            return False
                    elif tag is _LISTEN:
                        self._accept()
                    elif tag is _JOBS:
                        results = jobs.read_result()
                        if results is None:
                            return False  # no partition i: all partitions are done
                        sel.unregister(jobs)
                        jobs_pending = False
                        if not counted:
                            counted = True
                            self._on_partition()
                        winner, expected = results[0] if results else (-1, 0)
                        cur = self._cur
                        if cur is not None and cur.attempt != winner and delivered < expected:
                            self._drop_cur()  # a losing attempt: read the one Spark kept
                    elif isinstance(tag, _TaskConn) and tag is self._cur:
                        delivered, state = self._read_frames(tag, delivered)
                        if state == "stop":
                            return False
                        ended = state == "ended"
                    elif isinstance(tag, _TaskConn) and tag in self._hellos:
                        self._read_hello(tag, i)
            if delivered != expected:
                raise _ResultStreamError(
                    f"from_dataframe: partition {i}'s stream had {delivered} rows, its task reported {expected} "
                    "(a non-deterministic DataFrame recomputed by a retried task?)"
                )
            return True
        finally:
            if jobs_pending:
                sel.unregister(jobs)
            self._drop_cur()
            for p in [p for p in self._parked if p <= i]:
                for c in self._parked.pop(p):
                    c.close()

    def _read_frames(self, conn: _TaskConn, delivered: int) -> tuple[int, str]:
        """Read what ``conn`` has sent: (rows delivered so far, ``"open"``, ``"ended"`` (its end
        frame came), ``"broken"`` (closed before it) or ``"stop"`` (the fetch is stopping))."""
        import pyarrow as pa

        while True:
            try:
                frame = conn.read_frame()
            except (EOFError, OSError):
                # broken: another attempt, or the job's failure, tells what comes next
                self._drop_cur()
                return delivered, "broken"
            if frame is None:
                return delivered, "open"
            kind, body = frame
            if kind == _TS_END:
                if body != conn.received:
                    raise _ResultStreamError(f"from_dataframe: a task sent {conn.received} rows but counted {body}")
                conn.ended = True
                self._drop_cur()
                return delivered, "ended"
            if kind == _TS_SCHEMA:
                conn.schema = pa.ipc.read_schema(pa.py_buffer(body))
                continue
            batch = pa.ipc.read_record_batch(pa.py_buffer(body), conn.schema)
            start = conn.received
            conn.received += batch.num_rows
            if conn.received <= delivered:
                continue  # a retried attempt sends again what an earlier one delivered
            if start < delivered:
                batch = batch.slice(delivered - start)
                body = None
            if not self._deliver(batch, body, conn.schema):
                return delivered, "stop"
            delivered += batch.num_rows

    def _deliver(self, batch: Any, body: Any, schema: Any) -> bool:
        """Queue one batch for the consumer: wait while the queue is full (backpressure: this
        connection is not read meanwhile), for at most ``spill_after`` seconds, then spill the
        rest of the partition. False when the fetch is stopping."""
        size = batch.nbytes if body is None else len(body)
        cond = self._cond
        with cond:
            if self._stopping or self._interrupted():
                return False
            waited_since = 0.0
            while self._queued and self._queued + size > self._budget and not self._spilling:
                if self._spill_after is None:
                    cond.wait()
                    if self._stopping or self._interrupted():
                        return False
                    continue
                now = time.monotonic()
                if not waited_since:
                    waited_since = now
                left = self._spill_after - (now - waited_since)
                if left <= 0:
                    self._spilling = True  # free the task's slot: the rest goes to disk
                    break
                cond.wait(left)
                if self._stopping or self._interrupted():
                    return False
            if not self._spilling or not self._queued or self._queued + size <= self._budget:
                self._items.append((_BATCH, batch, size))
                self._queued += size
                cond.notify_all()
                return True
        if self._spill is None:
            self._spill = _Spill()
        spill = self._spill
        offset, n = spill.write(body if body is not None else batch.serialize())
        self.spilled_bytes += n
        with cond:
            self._items.append((_SPILLED, offset, n, schema))
            cond.notify_all()
        return True

    def _take(self, i: int, attempt: int | None) -> _TaskConn | None:
        conns = self._parked.get(i)
        if not conns:
            return None
        for k, c in enumerate(conns):
            if attempt is None or c.attempt == attempt:
                return conns.pop(k)
        return None

    def _drop_cur(self) -> None:
        cur, self._cur = self._cur, None
        if cur is not None:
            try:
                self._sel.unregister(cur.sock)
            except (KeyError, ValueError):
                pass
            cur.close()

    def _accept(self) -> None:
        import selectors

        while True:
            try:
                sock, _ = self._listener.accept()
            except BlockingIOError:
                return
            except OSError:
                return
            conn = _TaskConn(sock)
            self._hellos.add(conn)
            self._sel.register(sock, selectors.EVENT_READ, conn)

    def _read_hello(self, conn: _TaskConn, i: int) -> None:
        try:
            if not conn.read_hello():
                return
            # a stranger, or a late attempt of a partition already read, is dropped
            keep = conn.partition >= i and hmac.compare_digest(conn.token, self._token)
        except (EOFError, OSError):
            keep = False
        self._hellos.discard(conn)
        self._sel.unregister(conn.sock)
        if keep:
            self._parked.setdefault(conn.partition, []).append(conn)
        else:
            conn.close()

    def _drain_wake(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except OSError:
            pass

    def _release(self) -> None:
        """Close every socket of the reader (at its end)."""
        self._drop_cur()
        for c in self._hellos:
            c.close()
        self._hellos.clear()
        for conns in self._parked.values():
            for c in conns:
                c.close()
        self._parked.clear()
        try:
            self._sel.close()
        except OSError:
            pass
        self._listener.close()
        self._jobs.close()
        with self._cond:
            w, self._wake_w = self._wake_w, None
        if w is not None:
            w.close()
        self._wake_r.close()


def _stream_address(sc: Any) -> tuple[str, str]:
    """(address to listen on, address the tasks connect to)."""
    master = str(sc.master)
    if master.startswith("local"):
        return "127.0.0.1", "127.0.0.1"  # local, local[n], local-cluster: the executors are here
    conf = sc.getConf()
    host = conf.get("spark.driver.host", None) or socket.gethostname()
    return conf.get("spark.driver.bindAddress", None) or host, host


def _listen(address: str, rcvbuf: int) -> socket.socket:
    family, kind, proto, _, sockaddr = socket.getaddrinfo(address, 0, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    try:
        # before listen(): accepted connections inherit it (a small window is the point)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.bind(sockaddr)
        sock.listen(64)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


def _open_task_stream(
    df: Any,
    group: str,
    prefetch: bool,
    on_partition: Callable[[], None],
    interrupted: Callable[[], bool],
    max_bytes: int,
    spill_after: float | None,
) -> _TaskStream:
    """Start streaming ``df`` from its tasks (classic pyspark only)."""
    slice_bytes = max(_MIN_SLICE, max_bytes // 8)
    sock_buffer = min(slice_bytes, _MAX_SOCKET_BUFFER)
    spark = df.sparkSession
    sc = spark.sparkContext
    bind, host = _stream_address(sc)
    listener = _listen(bind, sock_buffer)
    try:
        token = secrets.token_bytes(32)
        fn = _task_streamer(host, listener.getsockname()[1], token, slice_bytes, sock_buffer)
        # planning (and adaptive stages run while planning) happen here, on the calling thread
        jrdd = df.mapInArrow(fn, _TS_OUTPUT)._jdf.javaToPython()
        # what SQLExecution.withSQLConfPropagated gives an action's tasks: the session's settings
        try:
            settings = {k: str(v) for k, v in spark.conf.getAll.items() if k.startswith("spark")}
        except Exception:  # noqa: BLE001 - a pyspark without RuntimeConfig.getAll: defaults on executors
            settings = {}
        # the Arrow batches the JVM hands the Python worker: at most a slice
        settings[_MAX_BYTES_PER_BATCH] = str(slice_bytes)
        try:
            inherited = sc._jsc.sc().getLocalProperties().clone()
        except Exception:  # noqa: BLE001 - no such method: the job thread starts with none
            inherited = None
        jobs = _PartitionJobs(df, jrdd, group, inherited, settings)
    except BaseException:
        listener.close()
        raise
    return _TaskStream(jobs, listener, token, on_partition, interrupted, 2 * slice_bytes, prefetch, spill_after).start()


_NO_BATCH: Final = object()
_DEFAULT_MAX_BYTES: Final = 64 * 1024 * 1024
_DEFAULT_SPILL_AFTER_S: Final = 10.0
_MIN_MAX_BYTES: Final = 256 * 1024
_JOB_GROUP_PROPERTIES: Final = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")


class _Fetch:
    """One subscription's Spark fetch: the transport, its job group, and its cleanup."""

    def __init__(self, df: Any, prefetch: bool, max_bytes: int | None = _DEFAULT_MAX_BYTES, spill_after: float | None = _DEFAULT_SPILL_AFTER_S) -> None:
        self._df = df
        self._prefetch = prefetch
        self._max_bytes = max_bytes
        self._spill_after = spill_after
        self._group = f"rstreams-source-{uuid.uuid4().hex[:12]}"
        self._closed = AtomicFlag()
        # set by the JVM watchdog's thread, read by the reading thread
        self._died: AtomicRef[SparkJvmDiedError | None] = AtomicRef(None)
        # the open task stream's wake-up, called by close() and the watchdog from their threads
        self._wake: AtomicRef[Callable[[], None] | None] = AtomicRef(None)
        # written by one thread (the reading or the reader thread), read by anyone (tests)
        self.partitions_fetched = 0  # partitions (classic transports) or IPC blobs (fallback) received
        self.transport = ""  # "task-stream", "jvm-arrow" or "map-in-arrow", once started
        self.stream: _TaskStream | None = None  # the task stream, while open

    def _count_partition(self) -> None:
        self.partitions_fetched += 1

    def _classic(self) -> bool:
        return getattr(self._df, "_jdf", None) is not None

    def batches(self) -> Iterator[Any]:
        """The DataFrame's non-empty record batches. Errors caused by our own cancellation (a
        cancelled job) end the iterator quietly: nobody waits for them any more; any error while
        the driver JVM has died becomes :class:`SparkJvmDiedError`. When the iterator is dropped
        (a cancel) or fails, the running job is cancelled before the transport's sockets close,
        so its task ends as killed rather than failed on a broken pipe."""
        if self._closed.is_set():
            return
        watchdog = None
        release: Callable[[], None] | None = None
        try:
            if self._classic():
                watchdog = JvmWatchdog(self._df.sparkSession, "from_dataframe", self._on_jvm_death).start()
            source, release = self._open()
            if self._closed.is_set():
                # race: close() ran while the transport was opening; a job it could not see
                # (cancelJobGroup without "future jobs", on an older Spark) is stopped here
                self._cancel_jobs()
                return
            yield from source
        except Exception as e:
            ours = self._closed.is_set()  # closed before the error: our own cancel caused it
            died = self._died.get()
            if died is None and self._classic():
                from py4j.protocol import Py4JJavaError  # type: ignore[import-untyped,unused-ignore]

                # a JVM that answered with an exception is alive: no need to wait for its exit
                died = dead_jvm_error(self._df.sparkSession, "from_dataframe", 0.0 if isinstance(e, Py4JJavaError) else 2.0)
            self.close()
            if died is not None:
                raise died from e
            if ours:
                return
            raise
        except BaseException:  # GeneratorExit: the subscriber dropped the iterator (a cancel)
            self.close()
            raise
        finally:
            if release is not None:
                release()
            if watchdog is not None:
                watchdog.stop()

    def _on_jvm_death(self, error: SparkJvmDiedError) -> None:
        """On the watchdog's thread: remember the death, wake a reader waiting on sockets."""
        self._died.set(error)
        wake = self._wake.get()
        if wake is not None:
            wake()

    def _interrupted(self) -> bool:
        """For the task stream's reader: raises the JVM's death, True once this fetch is closed."""
        died = self._died.get()
        if died is not None:
            raise died
        return self._closed.is_set()

    def _open(self) -> tuple[Iterator[Any], Callable[[], None]]:
        """Open the transport (its batches, and how to release it) with this fetch's job group set
        on the calling thread, then restore the thread's own group. Jobs run either during these
        calls (planning, adaptive stages) or on the serving thread that toLocalIteratorAndServe
        starts here, which inherits a copy of the group: no job of ours depends on the calling
        thread's group afterwards (a pooled io thread keeps no stale group)."""
        if not self._classic():
            # Spark Connect: no SparkContext here; the operation carries this fetch's tag instead
            # of a job group, and a cancel interrupts it by that tag (on the server)
            self.transport = "map-in-arrow"
            rows = self._df.mapInArrow(_to_ipc, "ipc binary").toLocalIterator(prefetchPartitions=self._prefetch)
            return self._tagged(self._fallback_batches(rows)), lambda: None
        sc = self._df.sparkSession.sparkContext
        saved = [sc.getLocalProperty(k) for k in _JOB_GROUP_PROPERTIES]
        sc.setJobGroup(self._group, "rstreams from_dataframe", True)
        try:
            # no columns, no bytes: nothing to bound (and mapInArrow would lose the row count)
            if self._max_bytes is not None and len(self._df.schema.fields):
                stream = _open_task_stream(
                    self._df, self._group, self._prefetch, self._count_partition, self._interrupted, self._max_bytes, self._spill_after
                )
                self.transport = "task-stream"
                self.stream = stream
                self._wake.set(stream.wake)
                if self._died.get() is not None or self._closed.is_set():
                    stream.wake()  # race: the JVM died, or a cancel came, before _wake was set

                def release() -> None:
                    self._wake.set(None)
                    stream.close()

                return stream.batches(), release
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
        spark = self._df.sparkSession
        if self._died.get() is not None or jvm_exit_code(spark) is not None:
            return  # the JVM is gone, and its jobs with it
        sc = spark.sparkContext
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
        wake = self._wake.get()
        if wake is not None:
            wake()  # a reader waiting on the task stream's sockets or queue: stop now


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
        # upstream first: the emission loop is cancelled before close() wakes a waiting reader,
        # whose iterator then ends quietly without completing a cancelled stream
        self.upstream.cancel()
        self._fetch.close()


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
    __slots__ = ("_df", "_as", "_prefetch", "_max_bytes", "_spill_after")

    def __init__(self, df: Any, as_: str, prefetch: bool, max_bytes: int | None, spill_after: float | None) -> None:
        self._df = df
        self._as = as_
        self._prefetch = prefetch
        self._max_bytes = max_bytes
        self._spill_after = spill_after

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        fetch = _Fetch(self._df, self._prefetch, self._max_bytes, self._spill_after)
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


def from_dataframe(
    df: Any,
    *,
    as_: str = "arrow",
    max_partitions_in_flight: int = 1,
    max_bytes_in_flight: int | None = _DEFAULT_MAX_BYTES,
    spill_after: float | None = _DEFAULT_SPILL_AFTER_S,
    subscribe_on: Any = "io",
) -> Flowable[Any]:
    """A Flowable over a Spark DataFrame: ``pyarrow.RecordBatch`` elements (``as_="arrow"``), row
    tuples (``"rows"``) or pandas DataFrames (``"pandas"``), in the DataFrame's order.

    Example::

        from rstreams import spark
        s = spark.session()
        total = spark.from_dataframe(s.range(1000), as_="rows").map(lambda r: r[0]).reduce(operator.add)
        # a partition of any size, with at most ~16 MB of it in the driver at a time
        n = spark.from_dataframe(s.read.parquet("/big"), max_bytes_in_flight=16 << 20).count().blocking_first()

    Backpressure: a partition is fetched only while there is outstanding demand, and within it
    the Spark task itself streams its rows to this process and waits while the subscriber does
    not ask for more: the driver (this Python process and the driver JVM) holds about
    ``max_bytes_in_flight`` bytes of the DataFrame at most (default 64 MB), whatever the size of
    its partitions. One record batch (one element in arrow mode) holds
    ``spark.sql.execution.arrow.maxRecordsPerBatch`` rows at most and about
    ``max_bytes_in_flight / 8`` bytes (a single larger row travels alone); empty batches are
    skipped. ``max_partitions_in_flight=2`` asks for the next partition as soon as the current
    one has arrived, before the subscriber pulls past it. A task that waits for demand holds a
    task slot; after ``spill_after`` seconds (default 10; ``None``: never) it is released by
    moving the rest of its partition to a local temp file, so a subscriber that waits for other
    Spark jobs cannot deadlock with it. The tasks connect to this process (``127.0.0.1`` in local
    mode, ``spark.driver.host`` on a cluster) and need pyarrow, as for ``mapInArrow``.
    ``max_bytes_in_flight=None`` selects the former transport: each partition is collected whole
    by the driver JVM (about 7 times its Arrow size in heap) and served from there, with no Python
    worker and no connection back: about twice as fast for narrow rows (no worker in the way),
    for partitions known to be small. Spark Connect DataFrames always go through ``mapInArrow``
    and whole partitions on the server.
    Scheduler: Spark is driven from a worker of ``subscribe_on`` (default: the io scheduler), so
    a request never blocks the caller's thread; pass ``None`` to fetch on the requesting thread.
    Cancellation cancels the running Spark job. If the driver JVM exits (killed, or out of
    memory), the stream ends with :class:`~rstreams.spark.SparkJvmDiedError` within about a
    second when there is demand (else at the next request).
    """
    if as_ not in _AS:
        raise ValueError(f"from_dataframe(): as_ must be one of {_AS}, got {as_!r}")
    if not isinstance(max_partitions_in_flight, int) or max_partitions_in_flight < 1:
        raise ValueError(f"from_dataframe(): max_partitions_in_flight must be >= 1, got {max_partitions_in_flight!r}")
    if max_bytes_in_flight is not None and (
        not isinstance(max_bytes_in_flight, int) or isinstance(max_bytes_in_flight, bool) or max_bytes_in_flight < _MIN_MAX_BYTES
    ):
        raise ValueError(f"from_dataframe(): max_bytes_in_flight must be None or an int >= {_MIN_MAX_BYTES}, got {max_bytes_in_flight!r}")
    if spill_after is not None and (isinstance(spill_after, bool) or not isinstance(spill_after, (int, float)) or not spill_after >= 0):
        raise ValueError(f"from_dataframe(): spill_after must be None or a number of seconds >= 0, got {spill_after!r}")
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
    spill = None if spill_after is None else float(spill_after)
    f: Flowable[Any] = _DataFrameFlowable(df, as_, max_partitions_in_flight > 1, max_bytes_in_flight, spill)
    if subscribe_on == "io":
        from .. import schedulers

        f = f.subscribe_on(schedulers.io())
    elif subscribe_on is not None:
        f = f.subscribe_on(subscribe_on)
    return f


def from_table(name: str, *, spark: Any = None, **kwargs: Any) -> Flowable[Any]:
    """``from_dataframe(spark.table(name), ...)``.

    Example::

        s = spark.session()
        s.range(5).createOrReplaceTempView("nums")
        spark.from_table("nums", as_="rows").count().blocking_first()     # 5

    Backpressure: as :func:`from_dataframe` (a partition is fetched only while there is demand).
    Scheduler: as :func:`from_dataframe` (Spark is driven from an io worker by default).
    """
    from ._session import session

    s = spark or session()
    return from_dataframe(s.table(name), **kwargs)


def from_sql(query: str, *, spark: Any = None, **kwargs: Any) -> Flowable[Any]:
    """``from_dataframe(spark.sql(query), ...)``.

    Example::

        spark.from_sql("SELECT id, id * 2 AS twice FROM range(3)", as_="rows").to_list().blocking_first()
        # [(0, 0), (1, 2), (2, 4)]

    Backpressure: as :func:`from_dataframe` (a partition is fetched only while there is demand).
    Scheduler: as :func:`from_dataframe` (Spark is driven from an io worker by default).
    """
    from ._session import session

    s = spark or session()
    return from_dataframe(s.sql(query), **kwargs)
