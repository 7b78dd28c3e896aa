"""Flowable -> Spark: a Subscriber that lands a stream as Parquet (or a table) in micro-batches.

The loop (backpressure reaches the producer):

1. request enough elements for one micro-batch (``batch_rows`` rows);
2. build an Arrow table of the batch and write it through Spark (one Spark job per micro-batch);
3. commit it durably (see below), and only then request more. While batch ``k`` is being
   written, batch ``k + 1`` may fill; nothing more is requested until ``k`` is committed, so at
   most two batches are ever in memory. The very first request is one element, to learn whether
   an element is a row or a record batch (and, for Arrow data, its bytes per row); batch ``k + 1``
   is sealed only when the writer takes it, so a size grown at ``k``'s commit applies to it.

Exactly-once into a path (the pattern of Structured Streaming's file sink commit log): each
micro-batch has an id. Its part files are written into
``<path>/_rstreams_staging/<stream>/batch-<id>`` under their final names (``part-<run>-b<id>-...``,
where ``<run>`` is a random id kept across the resumptions of one run, so that runs and streams
landing in the same path never collide); then a commit marker
``<path>/_rstreams_commits/<stream>/<id>.json`` (rows ``[start, end)`` of the stream and the file
names) is written atomically; only then are the files published, each moved into ``<path>`` with
one atomic rename. So ``<path>`` only ever holds files of committed batches, and a reader (a batch
read, or a Structured Streaming file source over ``<path>``: :func:`landed_stream`) never sees a
batch that may still be rolled back (Spark ignores paths starting with ``_``). On start, the sink
reads its commit log: committed batches whose files are still staged are published (roll forward),
everything else this stream staged is deleted (files of other streams and runs are never touched),
and the first ``end`` rows of the (re-run, deterministic) input
are skipped. So a crash anywhere, followed by a re-run, neither loses nor duplicates rows. A
completed run leaves a ``_COMPLETE`` marker; the next run of the same stream then starts afresh (and
appends).

For ``table=`` targets the batches are appended with ``saveAsTable``; the commit log makes re-runs
skip committed rows, but a crash between Spark's write and the commit marker can duplicate one
batch (at-least-once): prefer ``path=`` for exactly-once.
"""

from __future__ import annotations

import concurrent.futures
import json
import math
import os
import re
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from .._internal import plugins
from .._internal.atomics import AtomicFlag
from .._spec import MAX_DEMAND, Publisher, Subscription
from ..errors import RStreamsError
from ._progress import Progress

__all__ = ["to_spark", "SparkSink", "SinkResult", "SinkWriteError", "WritePolicy"]


class SinkWriteError(RStreamsError, RuntimeError):
    """A micro-batch could not be written after the retries. Says which batch and what was lost."""

    def __init__(self, batch_id: int, start_row: int, end_row: int, committed_rows: int, cause: BaseException) -> None:
        self.batch_id = batch_id
        self.start_row = start_row
        self.end_row = end_row
        self.committed_rows = committed_rows
        super().__init__(
            f"to_spark: micro-batch {batch_id} (rows {start_row}..{end_row - 1}) failed: "
            f"{type(cause).__name__}: {cause}. "
            + (f"Rows 0..{committed_rows - 1} are committed; rows" if committed_rows else "No row is committed; rows")
            + f" from {committed_rows} on were not written. Re-run the same stream to resume exactly there."
        )
        self.__cause__ = cause
        self.cause = cause

    def __reduce__(self) -> tuple[Any, ...]:
        # picklable (process pools, Spark's error reporting): rebuilt from its fields
        return (type(self), (self.batch_id, self.start_row, self.end_row, self.committed_rows, self.cause))


@dataclass(frozen=True)
class WritePolicy:
    """Retries of a failed micro-batch write: ``attempts`` in all, exponential backoff."""

    attempts: int = 3
    backoff: float = 0.5
    max_backoff: float = 10.0

    def delay(self, attempt: int) -> float:
        return float(min(self.max_backoff, self.backoff * (2 ** (attempt - 1))))


@dataclass
class SinkResult:
    """What a ``to_spark`` run did."""

    rows: int = 0
    batches: int = 0
    seconds: float = 0.0
    skipped_rows: int = 0
    path: str | None = None
    table: str | None = None
    batch_ids: list[int] = field(default_factory=list)

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0


#: adaptive batches grow towards a commit of about this long (Spark's fixed ~0.15-0.35 s per job is
#: then under ~10% of it), at most 4x per commit
_TARGET_BATCH_SECONDS: Final = 2.5
_MAX_GROWTH: Final = 4.0
#: and never beyond this much Arrow data per batch (the writer holds one batch, the subscriber fills the next)
_MAX_BATCH_BYTES: Final = 192 * 1024 * 1024
#: the first adaptive batch of Arrow elements (whose size per row is known from the first one):
#: about a million narrow rows, where a 100k-row start would spend its first jobs on Spark's fixed cost
_FIRST_ARROW_BATCH_BYTES: Final = 32 * 1024 * 1024


class _CommitLog:
    """The sink's commit log under ``<path>/_rstreams_commits/<stream>``."""

    def __init__(self, root: str, stream: str) -> None:
        self.dir = os.path.join(root, "_rstreams_commits", stream)
        os.makedirs(self.dir, exist_ok=True)

    def entries(self) -> list[dict[str, Any]]:
        out = []
        for name in sorted(os.listdir(self.dir)):
            if name.endswith(".json"):
                with open(os.path.join(self.dir, name)) as f:
                    out.append(json.load(f))
        return out

    def completed(self) -> bool:
        return os.path.exists(os.path.join(self.dir, "_COMPLETE"))

    def reset(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir, exist_ok=True)

    def commit(self, entry: dict[str, Any]) -> None:
        name = os.path.join(self.dir, f"{entry['batch_id']:08d}.json")
        tmp = name + ".tmp"
        with open(tmp, "w") as f:
            json.dump(entry, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, name)  # atomic: the batch is committed from here on

    def mark_complete(self) -> None:
        with open(os.path.join(self.dir, "_COMPLETE"), "w") as f:
            f.write("complete\n")


def _local_path(path: str) -> str:
    if path.startswith("file://"):
        return path[len("file://") :]
    if path.startswith("file:/"):  # Spark's own form of a local URI (file:/tmp/x)
        return path[len("file:") :]
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", path):
        raise ValueError(
            f"to_spark(path={path!r}): exactly-once commits need a local (or mounted) filesystem path; "
            "use table=... for other storage"
        )
    return path


class _Rows:
    """The pending micro-batch: Arrow pieces and plain rows, converted once at flush."""

    def __init__(self) -> None:
        self.pieces: list[Any] = []  # pyarrow Tables/RecordBatches
        self.rows: list[Any] = []  # dicts / tuples / Rows
        self.count = 0
        self.started = time.monotonic()

    def clear(self) -> None:
        self.pieces = []
        self.rows = []
        self.count = 0
        self.started = time.monotonic()


_FILE_FORMATS: Final = frozenset({"parquet", "orc", "json", "csv", "avro"})


def _quote_table(name: str) -> str:
    return ".".join(f"`{part.strip('`')}`" for part in name.split("."))


def _table_files_location(spark: Any, table: str, format: str) -> str | None:
    """The local directory holding ``table``'s data files when the sink can commit into it like a
    path (a non-partitioned file-format table of the session catalog on a local filesystem, or a
    table not created yet, which will live in its database's directory); None otherwise."""
    if format.lower() not in _FILE_FORMATS:
        return None
    try:
        if spark.catalog.tableExists(table):
            info: dict[str, str] = {}
            partitioned = False
            for row in spark.sql(f"DESCRIBE TABLE EXTENDED {_quote_table(table)}").collect():
                key = str(row[0] or "").strip()
                if key == "# Partition Information":
                    partitioned = True
                info.setdefault(key, str(row[1] or "").strip())
            if partitioned or info.get("Provider", "").lower() != format.lower():
                return None
            location = info.get("Location", "")
        else:
            parts = table.split(".")
            if len(parts) > 2:
                return None  # a catalog-qualified name: not the session catalog's files
            db = parts[0].strip("`") if len(parts) == 2 else spark.catalog.currentDatabase()
            db_location = ""
            for row in spark.sql(f"DESCRIBE DATABASE EXTENDED `{db}`").collect():
                if str(row[0]).strip() == "Location":
                    db_location = str(row[1]).strip()
            if not db_location:
                return None
            location = db_location.rstrip("/") + "/" + parts[-1].strip("`").lower()
        path = _local_path(location)
    except ValueError:
        return None  # remote storage: no atomic renames to commit with
    except Exception as e:  # the catalog could not describe it: Spark's own append
        plugins.on_error(e, f"to_spark(table={table!r}): the table's location is unknown; falling back to saveAsTable")
        return None
    if not path:
        return None
    os.makedirs(path, exist_ok=True)
    return path


class SparkSink:
    """The Subscriber behind :func:`to_spark` (one use). ``result()`` waits for the outcome."""

    _rs_no_wrap = True

    def __init__(
        self,
        *,
        spark: Any,
        path: str | None,
        table: str | None,
        format: str,
        mode: str,
        batch_rows: int | None,
        max_batch_seconds: float | None,
        schema: Any,
        stream: str,
        policy: WritePolicy,
        progress: Progress | None,
        write_hook: Callable[[int], Any] | None = None,
        engine: str = "spark",
    ) -> None:
        if (path is None) == (table is None):
            raise ValueError("to_spark(): give exactly one of path=... or table=...")
        if engine not in ("spark", "pyarrow"):
            raise ValueError(f"to_spark(): engine must be 'spark' or 'pyarrow', got {engine!r}")
        if engine == "pyarrow" and (table is not None or format != "parquet"):
            raise ValueError("to_spark(engine='pyarrow') writes Parquet files to a path only")
        self._engine = engine
        self._spark = spark
        self._path = _local_path(path) if path is not None else None
        self._table = table
        self._format = format
        self._mode = mode
        self._adaptive = batch_rows is None
        self._batch_rows = batch_rows or 100_000
        # adaptive growth stops at 4M rows or _MAX_BATCH_BYTES of Arrow data, whichever comes first
        self._max_batch_rows = max(self._batch_rows, 4_000_000)
        self._max_batch_seconds = max_batch_seconds
        self._schema = schema
        self._stream = stream
        self._run = ""  # set by _recover: the id in this run's file names
        self._policy = policy
        self._progress = progress
        self._write_hook = write_hook
        self._lock = threading.Lock()  # guards the pending batch, demand and writer state
        self._pending = _Rows()
        self._outstanding = 0  # elements requested and not yet received
        self._unit_rows: int | None = None  # rows per element (None until the first element)
        # True while the writer thread owns a batch. The pending batch is sealed only when the
        # writer can take it (here or in the write loop), so a size chosen after a commit applies
        # to the batch that was filling meanwhile: at most two batches (written, pending) exist.
        self._writing = False
        self._done = False
        self._cancelled = False  # cancel(): what is pending is not written (a re-run resumes at the log's end)
        self._completed = False  # on_complete: the partial last batch is written too (not after on_error)
        self._failed: BaseException | None = None
        self._upstream: Subscription | None = None
        self._result = SinkResult(path=path, table=table)
        self._start = time.monotonic()
        self._future: concurrent.futures.Future[SinkResult] = concurrent.futures.Future()
        self._writer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="rstreams-spark-sink")
        self._timer: threading.Timer | None = None
        self._finished = AtomicFlag()
        self._log: _CommitLog | None = None
        self._skip = 0
        self._next_id = 0
        self._next_row = 0  # stream row index of the next row of the pending batch
        # table=...: its batches are staged and committed as files in the table's own location
        # (exactly-once, as a path), then the catalog is refreshed; False: saveAsTable per batch
        self._table_files = False
        self._partition_cols: list[str] = []  # saveAsTable into an existing partitioned table
        self._recover()

    # -- recovery ------------------------------------------------------------------------------
    def _recover(self) -> None:
        if self._table is not None and self._path is None:
            self._path = _table_files_location(self._spark, self._table, self._format)
            self._table_files = self._path is not None
        root = self._path
        if root is None:
            # a table whose data is not plain files on a local filesystem (another catalog, a
            # partitioned or non-file table, remote storage): Spark's own append, at-least-once
            try:
                if self._spark.catalog.tableExists(self._table):
                    cols = self._spark.catalog.listColumns(self._table)
                    self._partition_cols = [c.name for c in cols if getattr(c, "isPartition", False)]
            except Exception:  # noqa: S110 - a catalog that cannot list columns: write unpartitioned
                pass
            warehouse = self._spark.conf.get("spark.sql.warehouse.dir", "spark-warehouse")
            root = os.path.join(_local_path(warehouse), f"_rstreams_{self._table}")
        os.makedirs(root, exist_ok=True)
        self._log = _CommitLog(root, self._stream)
        if self._log.completed():
            self._log.reset()
        entries = self._log.entries()
        if not entries and self._path is not None and self._mode == "overwrite":
            for name in os.listdir(self._path):
                if not name.startswith("_"):
                    p = os.path.join(self._path, name)
                    shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
            if self._table_files and self._table is not None and self._spark.catalog.tableExists(self._table):
                # the new rows may have another schema: the first commit creates the table anew
                self._spark.sql(f"DROP TABLE {_quote_table(self._table)}")
                os.makedirs(self._log.dir, exist_ok=True)  # dropping a managed table removes its directory
        # file names carry a run id: a resumed run keeps its own, a fresh run (or the next run after
        # a completed one, whose batch ids restart at 0) draws a new one, so no file is ever replaced
        self._run = str(entries[-1].get("run") or uuid.uuid4().hex[:12]) if entries else uuid.uuid4().hex[:12]
        committed = {e["batch_id"] for e in entries}
        end = 0
        for e in entries:
            end = max(end, int(e["end_row"]))
        self._skip = end
        self._next_row = end
        self._next_id = (max(committed) + 1) if committed else 0
        self._result.skipped_rows = end
        if self._path is not None:
            for e in entries:  # roll forward: committed, but the crash came before every file moved
                self._publish(int(e["batch_id"]), list(e.get("files", [])))
            shutil.rmtree(self._staging_root(), ignore_errors=True)  # this stream's uncommitted batches
            if entries and self._table_files:
                self._register_table()

    # -- Subscriber ----------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise TypeError("to_spark: on_subscribe(None) (rule 2.13)")
        if self._upstream is not None:
            subscription.cancel()  # rule 2.5
            return
        self._upstream = subscription
        if self._max_batch_seconds:
            self._arm_timer()
        self._request_more()

    def _request_more(self) -> None:
        with self._lock:
            if self._done or self._failed is not None or self._upstream is None:
                return
            if self._unit_rows is None:
                # learn what an element is (a row or a record batch of any size) from one element
                # first: a larger first request of big record batches would fill several batches
                # at the starting size, each then a Spark job of its own
                want = 1 - self._outstanding
            else:
                rows_needed = self._batch_rows - self._pending.count
                want = max(0, math.ceil(rows_needed / max(1, self._unit_rows))) - self._outstanding
            if want <= 0:
                return
            self._outstanding += want
            up = self._upstream
        up.request(min(want, MAX_DEMAND))

    def on_next(self, item: Any) -> None:
        if item is None:
            raise TypeError("to_spark: on_next(None): None is not a valid element (rule 2.13)")
        flush: _Rows | None = None
        with self._lock:
            if self._done or self._failed is not None:
                return
            self._outstanding -= 1
            if self._unit_rows is None and self._adaptive:
                self._size_first_batch(item)
            n = self._add(item)
            if self._unit_rows is None or n > self._unit_rows:
                self._unit_rows = max(1, n)
            if self._pending.count >= self._batch_rows and not self._writing:
                flush = self._seal_for_writer()
        if flush is not None:
            self._writer.submit(self._write_loop, flush)
        self._request_more()

    def _size_first_batch(self, item: Any) -> None:
        """Adaptive mode, first element: Arrow data tells its bytes per row, so the first batch
        can start near ``_FIRST_ARROW_BATCH_BYTES`` instead of the 100k rows used for rows of
        unknown size (both within the 4M-row cap)."""
        import pyarrow as pa

        if isinstance(item, (pa.RecordBatch, pa.Table)) and item.num_rows:
            per_row = max(1, item.nbytes // item.num_rows)
            self._batch_rows = max(self._batch_rows, min(self._max_batch_rows, _FIRST_ARROW_BATCH_BYTES // per_row))

    def _add(self, item: Any) -> int:
        """Append one element to the pending batch, skipping rows committed by an earlier run."""
        import pyarrow as pa

        if isinstance(item, (pa.RecordBatch, pa.Table)):
            n = item.num_rows
            if self._skip:
                k = min(self._skip, n)
                self._skip -= k
                item = item.slice(k)
                n -= k
            if n:
                self._pending.pieces.append(item)
                self._pending.count += n
            return item.num_rows if n else 1
        if item is None:
            raise TypeError("to_spark: None is not a valid element (rule 2.13)")
        if self._skip:
            self._skip -= 1
            return 1
        self._pending.rows.append(item)
        self._pending.count += 1
        return 1

    def _take_pending(self) -> _Rows:
        p = self._pending
        self._pending = _Rows()
        return p

    def _seal_for_writer(self) -> _Rows:
        """Under ``_lock``, with the writer idle: the pending batch, now the writer's."""
        self._writing = True
        return self._take_pending()

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise TypeError("to_spark: on_error(None) (rule 2.13)")
        with self._lock:
            if self._done:
                plugins.on_error(error, "to_spark: on_error after termination")
                return
            self._done = True
        self._finish_after_writes(error)

    def on_complete(self) -> None:
        flush: _Rows | None = None
        with self._lock:
            if self._done:
                return
            self._done = True
            self._completed = True
            if self._pending.count and not self._writing:  # else the write loop takes it
                flush = self._seal_for_writer()
        if flush is not None:
            self._writer.submit(self._write_loop, flush)
        self._finish_after_writes(None)

    # -- writing -------------------------------------------------------------------------------
    def _write_loop(self, batch: _Rows) -> None:
        """The writer thread: write and commit ``batch``, then the pending one while it is ready."""
        nxt: _Rows | None = batch
        while nxt is not None:
            try:
                self._write_committed(nxt)
            except BaseException as e:
                self._fail(e)
                return
            with self._lock:
                # a full pending batch (at the size just chosen), or the rest after on_complete
                p = self._pending
                if p.count and not self._cancelled and (p.count >= self._batch_rows or self._completed):
                    nxt = self._take_pending()
                else:
                    nxt = None
                    self._writing = False
            self._request_more()

    def _write_committed(self, batch: _Rows) -> None:
        table = self._to_arrow(batch)
        rows = table.num_rows
        batch_id = self._next_id
        start_row = self._next_row
        end_row = start_row + rows
        attempt = 0
        t0 = time.monotonic()
        while True:
            attempt += 1
            try:
                if self._write_hook is not None:
                    self._write_hook(batch_id)
                files = self._write(table, batch_id)
                break
            except Exception as e:
                if attempt >= self._policy.attempts:
                    raise SinkWriteError(batch_id, start_row, end_row, start_row, e) from e
                plugins.on_error(e, f"to_spark: micro-batch {batch_id} attempt {attempt} failed; retrying")
                time.sleep(self._policy.delay(attempt))
        assert self._log is not None
        if os.environ.get("RSTREAMS_SINK_CRASH_BEFORE_COMMIT") == str(batch_id):
            os._exit(17)  # fault injection (crash-recovery tests): data staged, no commit marker
        self._log.commit({"batch_id": batch_id, "run": self._run, "start_row": start_row, "end_row": end_row, "rows": rows, "files": files})
        if os.environ.get("RSTREAMS_SINK_CRASH_AFTER_COMMIT") == str(batch_id):
            os._exit(18)  # fault injection: committed, files still staged (the re-run rolls forward)
        if self._path is not None:
            self._publish(batch_id, files)
            if self._table_files:
                self._register_table()
        elapsed = time.monotonic() - t0
        self._next_id += 1
        self._next_row = end_row
        self._result.rows += rows
        self._result.batches += 1
        self._result.batch_ids.append(batch_id)
        if self._progress is not None:
            self._progress.update(rows=rows, batches=1)
        if self._adaptive and elapsed < _TARGET_BATCH_SECONDS and rows >= self._batch_rows:
            # Spark's fixed cost per job (~0.15-0.35 s) is still a large share of the batch: grow the
            # batch towards the target commit time to amortize it (the write time is close to
            # linear in rows past that fixed cost), within a memory bound (two batches may be held
            # at once)
            per_row = max(1, table.nbytes // max(1, rows))
            growth = min(_MAX_GROWTH, _TARGET_BATCH_SECONDS / max(elapsed, 1e-3))
            grown = int(self._batch_rows * growth)
            self._batch_rows = max(self._batch_rows, min(self._max_batch_rows, grown, _MAX_BATCH_BYTES // per_row))

    def _to_arrow(self, batch: _Rows) -> Any:
        import pyarrow as pa

        tables = []
        for p in batch.pieces:
            tables.append(pa.Table.from_batches([p]) if isinstance(p, pa.RecordBatch) else p)
        if batch.rows:
            tables.append(self._rows_to_table(batch.rows))
        if len(tables) == 1:
            return tables[0]
        return pa.concat_tables(tables, promote_options="default")

    def _rows_to_table(self, rows: list[Any]) -> Any:
        import pyarrow as pa

        first = rows[0]
        schema = self._schema
        if isinstance(first, dict):
            return pa.Table.from_pylist(rows, schema=schema)
        if hasattr(first, "asDict"):  # pyspark Row
            return pa.Table.from_pylist([r.asDict() for r in rows], schema=schema)
        if isinstance(first, tuple):
            cols = list(zip(*rows, strict=True))
            if schema is not None:
                return pa.Table.from_arrays([pa.array(c, type=f.type) for c, f in zip(cols, schema, strict=True)], schema=schema)
            names = list(getattr(first, "_fields", None) or [f"c{i}" for i in range(len(first))])
            return pa.Table.from_arrays([pa.array(c) for c in cols], names=names)
        return pa.Table.from_pylist([{"value": r} for r in rows])

    def _write(self, table: Any, batch_id: int) -> list[str]:
        if self._engine == "pyarrow":
            return self._write_pyarrow(table, batch_id)
        spark = self._spark
        cores = _parallelism(spark)
        # the Arrow split of createDataFrame is a session setting: set for this batch only and
        # restored afterwards, so the user's own createDataFrame/toArrow/mapInArrow keep theirs
        settings = {
            "spark.sql.execution.arrow.maxRecordsPerBatch": str(max(1, math.ceil(table.num_rows / cores))),
            "spark.sql.execution.arrow.localRelationThreshold": "0",
        }
        saved = {k: spark.conf.get(k, None) for k in settings}
        for k, v in settings.items():
            spark.conf.set(k, v)
        try:
            df = spark.createDataFrame(table)
        finally:
            for k, old in saved.items():
                if old is None:
                    spark.conf.unset(k)
                else:
                    spark.conf.set(k, old)
        if self._table is not None and not self._table_files:
            mode = "append" if (batch_id > 0 or self._mode == "append") else self._mode
            writer = df.write.mode(mode).format(self._format)
            if self._partition_cols and mode == "append":
                writer = writer.partitionBy(*self._partition_cols)  # an existing partitioned table
            writer.saveAsTable(self._table)
            return []
        assert self._path is not None
        staging = self._staging(batch_id)
        shutil.rmtree(staging, ignore_errors=True)
        df.write.mode("overwrite").format(self._format).save(staging)
        staged = []
        for name in sorted(os.listdir(staging)):
            p = os.path.join(staging, name)
            if name.startswith("part-") and not name.startswith(f"part-{self._run}-"):
                final = f"part-{self._run}-b{batch_id:08d}-{name[len('part-'):]}"
                os.replace(p, os.path.join(staging, final))  # final name, still staged
                staged.append(final)
            elif os.path.isdir(p):
                shutil.rmtree(p, ignore_errors=True)
            else:
                os.remove(p)  # _SUCCESS, checksums
        return staged

    def _register_table(self) -> None:
        """Make the catalog see the table's files: create it over its location (an external table,
        schema from the files) when the catalog does not know it (a fresh in-memory catalog over a
        warehouse that survived the last process), else refresh its file listing."""
        assert self._table is not None and self._path is not None
        spark = self._spark
        name = _quote_table(self._table)
        if spark.catalog.tableExists(self._table):
            spark.sql(f"REFRESH TABLE {name}")
            return
        has_data = any(not n.startswith(("_", ".")) for n in os.listdir(self._path))
        if has_data:
            loc = self._path.replace("'", "\\'")
            spark.sql(f"CREATE TABLE IF NOT EXISTS {name} USING {self._format} LOCATION '{loc}'")

    def _staging_root(self) -> str:
        assert self._path is not None
        return os.path.join(self._path, "_rstreams_staging", re.sub(r"[^A-Za-z0-9_.-]", "_", self._stream))

    def _staging(self, batch_id: int) -> str:
        return os.path.join(self._staging_root(), f"batch-{batch_id:08d}")

    def _publish(self, batch_id: int, files: list[str]) -> None:
        """Move a committed batch's staged files into the path (each an atomic rename; idempotent)."""
        assert self._path is not None
        staging = self._staging(batch_id)
        for name in files:
            src = os.path.join(staging, name)
            if os.path.exists(src):
                os.replace(src, os.path.join(self._path, name))
        shutil.rmtree(staging, ignore_errors=True)
        for d in (os.path.dirname(staging), os.path.dirname(os.path.dirname(staging))):
            try:
                os.rmdir(d)  # tidy; fails harmlessly while another stream still stages there
            except OSError:
                break

    def _write_pyarrow(self, table: Any, batch_id: int) -> list[str]:
        """No JVM on the hot path: one Parquet file per batch, staged like Spark's (same commit log)."""
        import pyarrow.parquet as pq

        staging = self._staging(batch_id)
        shutil.rmtree(staging, ignore_errors=True)
        os.makedirs(staging, exist_ok=True)
        name = f"part-{self._run}-b{batch_id:08d}-00000.parquet"
        pq.write_table(table, os.path.join(staging, name))
        return [name]

    # -- ending --------------------------------------------------------------------------------
    def _fail(self, error: BaseException) -> None:
        with self._lock:
            if self._failed is not None:
                return
            self._failed = error
            up = self._upstream
            self._done = True
        if up is not None:
            up.cancel()
        self._finish(error)

    def _finish_after_writes(self, error: BaseException | None) -> None:
        # The writer is one thread running its tasks in order, and a running write loop also
        # takes the batch waiting behind it: a task queued now runs after every pending write.
        try:
            self._writer.submit(self._finish, error)
        except RuntimeError:  # the writer already stopped (a failed write)
            self._finish(error)

    def _finish(self, error: BaseException | None) -> None:
        if not self._finished.try_set():
            return
        if self._timer is not None:
            self._timer.cancel()
        self._result.seconds = time.monotonic() - self._start
        if self._progress is not None:
            self._progress.close()
        error = self._failed or error
        if error is None and self._log is not None:
            self._log.mark_complete()
        self._writer.shutdown(wait=False)
        if error is not None:
            self._future.set_exception(error)
        else:
            self._future.set_result(self._result)

    def _arm_timer(self) -> None:
        assert self._max_batch_seconds is not None
        t = threading.Timer(self._max_batch_seconds / 2, self._on_timer)
        t.daemon = True
        self._timer = t
        t.start()

    def _on_timer(self) -> None:
        flush: _Rows | None = None
        with self._lock:
            if self._done or self._failed is not None:
                return
            age = time.monotonic() - self._pending.started
            if self._pending.count and age >= (self._max_batch_seconds or 0) and not self._writing:
                flush = self._seal_for_writer()
        if flush is not None:
            self._writer.submit(self._write_loop, flush)
        self._arm_timer()

    # -- results -------------------------------------------------------------------------------
    @property
    def future(self) -> concurrent.futures.Future[SinkResult]:
        return self._future

    def result(self, timeout: float | None = None) -> SinkResult:
        return self._future.result(timeout)

    def cancel(self) -> None:
        """Stop: cancel the upstream; the batch being written still commits, rows not yet in a
        written batch are not (``result().rows`` and the commit log say where a re-run resumes)."""
        with self._lock:
            up = self._upstream
            self._done = True
            self._cancelled = True
        if up is not None:
            up.cancel()
        self._finish_after_writes(None)


def _parallelism(spark: Any) -> int:
    """How many tasks the session runs at once: the SparkContext's default parallelism, or (Spark
    Connect, where no SparkContext is reachable) ``spark.default.parallelism`` if set, else this
    machine's cores."""
    try:
        return max(1, int(spark.sparkContext.defaultParallelism))
    except Exception:  # Spark Connect: sparkContext raises (JVM_ATTRIBUTE_NOT_SUPPORTED)
        try:
            return max(1, int(spark.conf.get("spark.default.parallelism", None) or 0) or (os.cpu_count() or 1))
        except Exception:
            return os.cpu_count() or 1


def to_spark(
    publisher: Publisher[Any],
    *,
    path: str | None = None,
    table: str | None = None,
    format: str = "parquet",
    mode: str = "append",
    batch_rows: int | None = None,
    max_batch_seconds: float | None = None,
    schema: Any = None,
    stream: str = "default",
    spark: Any = None,
    retry: WritePolicy | None = None,
    block: bool = True,
    progress: bool | None = None,
    timeout: float | None = None,
    engine: str = "spark",
) -> Any:
    """Land ``publisher`` through Spark in committed micro-batches, with backpressure.

    Elements may be dicts, tuples (named tuples name the columns; ``schema`` (a ``pyarrow.Schema``)
    types them), pyspark ``Row``s, or ``pyarrow.RecordBatch``/``Table``s. Returns a
    :class:`SinkResult` (rows, batches, seconds) when ``block`` (default), else a
    ``concurrent.futures.Future`` of it.

    Example::

        from rstreams import Flowable, spark
        result = spark.to_spark(Flowable.range(0, 1000).map(lambda i: {"id": i}), path="/tmp/out")
        print(result.rows, result.batches)

    Backpressure: requests one micro-batch (``batch_rows`` rows; adaptive from 100k when None)
    and requests more only after it is committed: at most two batches in memory.
    Errors: a failed write is retried per ``retry`` (:class:`WritePolicy`), then the stream is
    cancelled and a :class:`SinkWriteError` names the batch and what was not committed.
    ``max_batch_seconds`` flushes a partial batch that has waited that long.
    ``table=``: a file-format table of the session catalog (new, or existing and not partitioned)
    on a local or mounted filesystem is landed like a path, in its own location, exactly-once, and
    the catalog is refreshed after each commit (or the table created over the location: a later
    process with a fresh in-memory catalog appends to it instead of failing); any other table
    (partitioned, another format or catalog, remote storage) gets Spark's ``saveAsTable`` append
    per batch, which a crash between write and commit can repeat (at-least-once).
    ``engine="pyarrow"`` writes the Parquet files with pyarrow alone (no JVM on the hot path,
    same commit protocol); the data stays readable by Spark.
    """
    from ._session import session

    if mode not in ("append", "overwrite"):
        raise ValueError(f"to_spark(): mode must be 'append' or 'overwrite', got {mode!r}")
    if batch_rows is not None and (not isinstance(batch_rows, int) or batch_rows <= 0):
        raise ValueError(f"to_spark(): batch_rows must be a positive int, got {batch_rows!r}")
    s = spark if (spark is not None or engine == "pyarrow") else session()
    prog = Progress(f"to_spark {path or table}", enabled=progress)
    sink = SparkSink(
        spark=s,
        path=path,
        table=table,
        format=format,
        mode=mode,
        batch_rows=batch_rows,
        max_batch_seconds=max_batch_seconds,
        schema=schema,
        stream=stream,
        policy=retry or WritePolicy(),
        progress=prog,
        engine=engine,
    )
    publisher.subscribe(sink)
    if not block:
        return sink.future
    return sink.result(timeout)
