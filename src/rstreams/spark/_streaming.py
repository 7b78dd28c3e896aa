"""Structured Streaming -> Flowable, with real backpressure.

``from_stream(streaming_df)`` runs the query with ``foreachBatch``. The batch function runs in
the driver on Spark's micro-batch thread; it waits until the downstream has demand, emits the
micro-batch (Arrow record batches, or rows) as demand allows, and returns only when the whole
micro-batch was emitted. While it waits, Spark's trigger loop waits: no new micro-batch starts
without demand. Cancelling stops the query; a query failure reaches ``on_error``. Offsets are
committed by Spark after the function returns, so a restart from the checkpoint replays at most
the micro-batch in progress (at-least-once). A cancel (or a raising ``on_next``) in the middle of a
micro-batch makes the function raise, so Spark does not commit the batch and a restart from a
``checkpoint=`` the caller passed replays it; without one, a private checkpoint is used and
removed when the query ends. Every subscription runs its own query.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import threading
import time
from typing import Any, Final

from .._internal import plugins
from .._internal.atomics import AtomicFlag, AtomicInt, AtomicRef
from .._internal.requests import MAX_DEMAND, add_request, produced, validate_request
from .._spec import Subscriber
from ..errors import RStreamsError
from ..flowable import Flowable

__all__ = ["from_stream", "landed_stream", "CheckpointInUseError"]


class CheckpointInUseError(RStreamsError, RuntimeError):
    """A from_stream subscription asked for a checkpoint that a running one of this process uses."""


# Checkpoints of the queries from_stream runs in this process. Spark's own guard
# (spark.sql.streaming.stopActiveRunOnRestart) would stop the running query to start the second one,
# and that stop waits on the first query's batch function parked for demand: forever with the
# default stopTimeout, and both queries then consume the same micro-batches.
# race: two subscriptions starting on one checkpoint on two threads; the set is guarded by the lock
_checkpoints_lock = threading.Condition()
_checkpoints_in_use: dict[str, _StreamSubscription] = {}
_RELEASE_WAIT: Final = 60.0  # how long a new subscription waits for a cancelled one's query to stop


class _Abandoned(Exception):
    """Raised from the micro-batch function when the subscription ended before the micro-batch was
    fully emitted: a batch function that raises is not committed, so a restart from the caller's
    checkpoint replays it (at-least-once) instead of skipping its undelivered rows."""


class _StreamSubscription:
    def __init__(self, downstream: Subscriber[Any], streaming_df: Any, as_: str, checkpoint: str | None, trigger: dict[str, Any] | None) -> None:
        self._downstream: Subscriber[Any] | None = downstream
        self._df = streaming_df
        self._as = as_
        # a checkpoint we made is private to this subscription: removed when the query ends, and a
        # cancel needs no replay from it (no _Abandoned, so no JVM error log on every cancel)
        self._owns_checkpoint = checkpoint is None
        self._checkpoint = checkpoint or tempfile.mkdtemp(prefix="rstreams-stream-ckpt-")
        self._trigger = trigger
        self._requested = AtomicInt(0)
        self._cond = threading.Condition()  # the batch function waits here for demand or cancel
        self._cancelled = AtomicFlag()
        self._terminated = AtomicFlag()
        self._stopping = AtomicFlag()  # q.stop() is asked once
        # race: cancel() on one thread while start() creates the query on another; under this lock
        # start() publishes the query and reads the cancelled flag, cancel() sets the flag and reads
        # the query, so at least one of them sees the other and the query is always stopped
        self._lock = threading.Lock()
        self._query: Any = None
        # a rule 3.9 error waiting for the query to end: delivered by the watcher thread once the batch
        # function has returned, so on_error never overlaps an on_next on Spark's thread (rule 1.3)
        self._bad_request: AtomicRef[tuple[Subscriber[Any], BaseException] | None] = AtomicRef(None)
        self._claimed: str | None = None  # the checkpoint key held in _checkpoints_in_use
        self.micro_batches = 0

    def start(self) -> None:
        writer = self._df.writeStream.foreachBatch(self._on_batch).option("checkpointLocation", self._checkpoint)
        if self._trigger:
            writer = writer.trigger(**self._trigger)
        q = writer.start()
        with self._lock:
            self._query = q
            cancelled = self._cancelled.is_set()
        threading.Thread(target=self._watch, args=(q,), name="rstreams-stream-watch", daemon=True).start()
        if cancelled:
            self._stop_async(q)

    def _watch(self, q: Any) -> None:
        error: BaseException | None = None
        try:
            q.awaitTermination()
        except Exception as e:
            error = e
        try:
            if not self._deliver_bad_request() and not self._cancelled.is_set():
                # the query ended by itself: trigger(availableNow=True) / once, or it failed
                self._terminate(error)
        finally:
            self._cleanup()

    def claim_checkpoint(self) -> bool:
        if self._owns_checkpoint:
            return True  # a fresh temporary directory
        key = os.path.realpath(self._checkpoint)
        deadline = time.monotonic() + _RELEASE_WAIT
        with _checkpoints_lock:
            while (holder := _checkpoints_in_use.get(key)) is not None:
                left = deadline - time.monotonic()
                if not holder._cancelled.is_set() or left <= 0:
                    return False
                _checkpoints_lock.wait(left)  # a cancelled subscription's query is stopping: resume after it
            _checkpoints_in_use[key] = self
        self._claimed = key
        return True

    def _cleanup(self) -> None:
        if self._owns_checkpoint:
            shutil.rmtree(self._checkpoint, ignore_errors=True)
        key, self._claimed = self._claimed, None
        if key is not None:
            with _checkpoints_lock:
                _checkpoints_in_use.pop(key, None)
                _checkpoints_lock.notify_all()

    def _deliver_bad_request(self) -> bool:
        pending = self._bad_request.get_and_set(None)
        if pending is None:
            return False
        d, err = pending
        if self._terminated.try_set():
            d.on_error(err)
        else:
            plugins.on_error(err, "from_stream: bad request after termination")
        return True

    def _terminate(self, error: BaseException | None) -> None:
        if not self._terminated.try_set():
            if error is not None:
                plugins.on_error(error, "from_stream: error after termination")
            return
        d = self._downstream
        self._downstream = None
        if d is None:
            return
        if error is None:
            d.on_complete()
        else:
            d.on_error(error)

    def _await_demand(self) -> bool:
        with self._cond:
            while self._requested.get() == 0 and not self._cancelled.is_set():
                self._cond.wait(0.2)
        return not self._cancelled.is_set()

    def _abandon(self, batch_id: int) -> None:
        if not self._owns_checkpoint:
            raise _Abandoned(f"from_stream: cancelled before micro-batch {batch_id} was fully emitted; it is not committed")

    def _on_batch(self, batch_df: Any, batch_id: int) -> None:
        if not self._await_demand():
            self._abandon(batch_id)  # a micro-batch that started after cancel: nothing of it was delivered
            return
        table = batch_df.toArrow()
        self.micro_batches += 1
        items: Any = [b for b in table.to_batches() if b.num_rows]  # no empty RecordBatch for a filtered-out batch
        if self._as == "rows":
            from ._source import batch_to_rows

            items = itertools.chain.from_iterable(map(batch_to_rows, items))
        elif self._as == "pandas":
            items = (b.to_pandas() for b in items)
        for item in items:
            d = self._downstream
            if not self._await_demand() or d is None:
                self._abandon(batch_id)
                return
            try:
                d.on_next(item)
            except Exception as e:
                # rule 2.13: a raising on_next cancels the subscription; the error cannot go to on_error
                self.cancel()
                plugins.on_error(e, "from_stream: on_next raised (rule 2.13); the query was stopped")
                raise _Abandoned(f"from_stream: on_next raised in micro-batch {batch_id}") from e
            produced(self._requested, 1)

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                d = self._downstream
                if d is not None and self._bad_request.compare_and_set(None, (d, err)):
                    # delivered by the watcher when the query has stopped, or by _subscribe_actual /
                    # start() when there is no query yet (both check the cancelled flag)
                    self._cancel()
                return
        add_request(self._requested, min(n, MAX_DEMAND))
        with self._cond:
            self._cond.notify_all()

    def cancel(self) -> None:
        self._cancel()

    def _cancel(self) -> None:
        with self._lock:
            first = self._cancelled.try_set()
            q = self._query
        if not first:
            return
        self._downstream = None
        with self._cond:
            self._cond.notify_all()  # wake the batch function before stopping (else stop() waits)
        if q is not None:
            self._stop_async(q)

    def _stop_async(self, q: Any) -> None:
        if self._stopping.try_set():
            threading.Thread(target=self._stop, args=(q,), name="rstreams-stream-stop", daemon=True).start()

    @staticmethod
    def _stop(q: Any) -> None:
        try:
            q.stop()
        except Exception as e:
            plugins.on_error(e, "from_stream: stopping the query failed")


class _StreamFlowable(Flowable[Any]):
    __slots__ = ("_df", "_as", "_checkpoint", "_trigger")

    def __init__(self, df: Any, as_: str, checkpoint: str | None, trigger: dict[str, Any] | None) -> None:
        self._df = df
        self._as = as_
        self._checkpoint = checkpoint
        self._trigger = trigger

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        s = _StreamSubscription(subscriber, self._df, self._as, self._checkpoint, self._trigger)
        subscriber.on_subscribe(s)
        if s._cancelled.is_set():  # cancelled, or a bad request, before the query existed
            s._deliver_bad_request()
            s._cleanup()
            return
        if not s.claim_checkpoint():
            s._terminate(
                CheckpointInUseError(
                    f"from_stream: checkpoint {self._checkpoint!r} is in use by a running subscription "
                    "of this process; one query per checkpoint (cancel the other, or pass another checkpoint)"
                )
            )
            return
        try:
            s.start()
        except Exception as e:
            if not s._deliver_bad_request():
                s._terminate(e)
            s._cleanup()


def from_stream(streaming_df: Any, *, as_: str = "arrow", checkpoint: str | None = None, trigger: dict[str, Any] | None = None) -> Flowable[Any]:
    """A Flowable over a streaming DataFrame's micro-batches, paced by downstream demand.

    ``as_``: ``pyarrow.RecordBatch``es (``"arrow"``), row tuples (``"rows"``) or pandas frames
    (``"pandas"``), as :func:`from_dataframe`. Each subscription starts its own query; with
    ``checkpoint=`` a new subscription resumes after the last committed micro-batch (a second
    concurrent one on the same checkpoint gets :class:`CheckpointInUseError` in ``on_error``).

    Example::

        s = spark.session()
        stream = s.readStream.format("rate-micro-batch").option("rowsPerBatch", 1000).load()
        spark.from_stream(stream, as_="rows").take(5000).blocking_subscribe(print)

    Backpressure: the micro-batch function waits for demand, which stalls Spark's trigger loop; the
    size of each micro-batch comes from the source's admission control (``maxOffsetsPerTrigger``,
    ``maxFilesPerTrigger``, ``rowsPerBatch``...). Scheduler: elements are emitted on Spark's
    micro-batch thread. Cancel stops the query. Classic (non-Connect) Spark only.
    """
    if as_ not in ("arrow", "rows", "pandas"):  # the modes of from_dataframe
        raise ValueError(f"from_stream(): as_ must be 'arrow', 'rows' or 'pandas', got {as_!r}")
    if not getattr(streaming_df, "isStreaming", False):
        raise TypeError("from_stream(): expected a streaming DataFrame (spark.readStream...)")
    if type(streaming_df).__module__.startswith("pyspark.sql.connect"):
        # under Spark Connect foreachBatch runs in a server-side Python process: it cannot wait
        # for this process's demand, so the backpressure this Publisher promises cannot hold
        raise TypeError(
            "from_stream(): needs a classic SparkSession; under Spark Connect the foreachBatch "
            "function runs on the server and cannot wait for this subscriber's demand"
        )
    return _StreamFlowable(streaming_df, as_, checkpoint, trigger)


def landed_stream(path: str, *, spark: Any = None, format: str = "parquet", schema: Any = None, **options: Any) -> Any:
    """A Structured Streaming DataFrame over what :func:`~rstreams.spark.to_spark` landed in ``path``.

    The way back into Spark: ``to_spark`` lists each committed batch's files in
    ``<path>/_spark_metadata`` (the log of Spark's own file sink), and Spark's file source reads a
    path with that log through it: it sees each committed batch whole, once, and never a batch
    that could still be rolled back. New batches landed later show up in later triggers.
    ``schema`` defaults to the schema of what is already landed, with every column a
    ``merge_schema`` landing added (a file stream source needs one up front); ``options`` go to the
    reader (``maxFilesPerTrigger=...``).

    Example::

        spark.to_spark(Flowable.range(0, 1000).map(lambda i: {"id": i}), path="/tmp/ids")
        q = (spark.landed_stream("/tmp/ids").writeStream.format("memory").queryName("ids")
             .trigger(availableNow=True).start())
        q.awaitTermination()

    Backpressure: Spark's own admission control (``maxFilesPerTrigger``) paces the query; combine
    with :func:`from_stream` to consume it as a Flowable.
    """
    from ._session import session
    from ._sink import _local_path

    s = spark if spark is not None else session()
    local = _local_path(path)
    if schema is None:
        has_data = os.path.isdir(local) and any(not n.startswith(("_", ".")) for n in os.listdir(local))
        if not has_data:
            raise ValueError(
                f"landed_stream({path!r}): nothing has been landed there yet, so the schema is unknown; "
                "pass schema=... (a DDL string or StructType)"
            )
        reader0 = s.read.format(format)
        if format == "parquet":
            reader0 = reader0.option("mergeSchema", "true")  # columns a merge_schema landing added later
        schema = reader0.load(local).schema
    else:
        os.makedirs(local, exist_ok=True)  # a stream over a path that to_spark will land into later
    reader = s.readStream.format(format).schema(schema)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(local)
