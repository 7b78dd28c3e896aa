"""Flowable -> Spark: a Subscriber that lands a stream in committed micro-batches, exactly once.

The loop (backpressure reaches the producer):

1. request enough elements for one micro-batch (``batch_rows`` rows, bounded in bytes too);
2. convert the batch to Arrow with the path's one schema (or refuse it: :mod:`._schema`), write it
   through Spark (one job per slice of at most ``write_bytes``, so one huge batch cannot run the
   driver JVM out of memory) into the landing's staging directory;
3. commit it, publish it (:mod:`._landing` describes the steps and the files), and only then
   request more. While batch ``k`` is being written, batch ``k + 1`` may fill; nothing more is
   requested until ``k`` is committed, so at most two batches are ever in memory. The very first
   request is one element, to learn whether an element is a row or a record batch.

Identity and re-runs: ``name=`` names the landing. Without it each call is a new landing with a
generated name (``SinkResult.name``; a failed one can be resumed by passing that name). A named
landing re-run after a crash, a failure or a cancel skips exactly the rows its commit log holds
(checking them against the digests of the committed rows: a different input is an
:class:`InputMismatchError`, not a silent skip); re-run after it completed, it lands nothing. Two
live writers of one name: the second gets :class:`LandingInUseError` at once.

Every failure is a :class:`SinkWriteError` (which batch, which rows are committed, how to resume);
each step (write, commit entry, publish, completion marker) is retried per :class:`WritePolicy`.
A driver JVM that dies is an error within a second (:class:`~._jvm.JvmWatchdog`), never a hang.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
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
from typing import Any, Final, TypeVar

from .._internal import plugins
from .._internal.atomics import AtomicFlag
from .._spec import MAX_DEMAND, Publisher, Subscription
from ..schedulers import DISPOSED, NewThreadScheduler
from ._jvm import JvmWatchdog, SparkJvmDiedError
from ._landing import (
    InputMismatchError,
    Landing,
    LandingInUseError,
    PathLock,
    SchemaMismatchError,
    SinkWriteError,
    SparkFileLog,
    fault_point,
    recover_dead_landings,
    remove_listed_files,
    remove_temp_files,
    row_digest,
    sink_file_status,
)
from ._progress import Progress
from ._schema import SchemaProblem, SchemaStore, _fields, conform, rows_to_table

__all__ = [
    "to_spark",
    "SparkSink",
    "SinkResult",
    "SinkWriteError",
    "LandingInUseError",
    "SchemaMismatchError",
    "InputMismatchError",
    "WritePolicy",
]

T = TypeVar("T")


@dataclass(frozen=True)
class WritePolicy:
    """Retries of a failed step of a micro-batch (write, commit, publish): ``attempts`` in all,
    exponential backoff.

    Example::

        spark.to_spark(rows, path="/tmp/out", retry=spark.WritePolicy(attempts=5, backoff=1.0))
        [spark.WritePolicy(backoff=0.5).delay(k) for k in (1, 2, 3)]   # [0.5, 1.0, 2.0] seconds
    """

    attempts: int = 3
    backoff: float = 0.5
    max_backoff: float = 10.0

    def delay(self, attempt: int) -> float:
        return float(min(self.max_backoff, self.backoff * (2 ** (attempt - 1))))


@dataclass
class SinkResult:
    """What a ``to_spark`` run did.

    ``rows``/``batches``: landed by this run; ``skipped_rows``: rows of the input that an earlier
    run of the same named landing had committed; ``committed_rows``: the landing's total;
    ``name``: the landing's name (pass it to resume a landing that did not complete);
    ``already_complete``: the named landing had completed before, so nothing was landed.

    Example::

        ids = Flowable.range(0, 1000).map(lambda i: {"id": i})
        r = spark.to_spark(ids, path="/tmp/ids", name="ids")
        r.rows, r.batches, r.committed_rows                               # (1000, 1, 1000)
        spark.to_spark(ids, path="/tmp/ids", name="ids").already_complete  # True: nothing landed
    """

    rows: int = 0
    batches: int = 0
    seconds: float = 0.0
    skipped_rows: int = 0
    path: str | None = None
    table: str | None = None
    batch_ids: list[int] = field(default_factory=list)
    name: str = ""
    committed_rows: int = 0
    already_complete: bool = False

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0


#: adaptive batches grow towards a commit of about this long (Spark's fixed ~0.15-0.35 s per job is
#: then under ~10% of it), at most 4x per commit
_TARGET_BATCH_SECONDS: Final = 2.5
_MAX_GROWTH: Final = 4.0
#: default bound of one micro-batch's Arrow data (the writer holds one batch, the subscriber fills the next)
_MAX_BATCH_BYTES: Final = 192 * 1024 * 1024
#: the first adaptive batch of Arrow elements (whose size per row is known from the first one):
#: about a million narrow rows, where a 100k-row start would spend its first jobs on Spark's fixed cost
_FIRST_ARROW_BATCH_BYTES: Final = 32 * 1024 * 1024
#: one createDataFrame is at most this share of the driver's heap (the JVM holds the Arrow data,
#: then the rows of the write job: a few times the bytes sent)
_HEAP_SHARE: Final = 8
#: on a dead driver JVM, how long the error waits for the writer to stop and release the lease
#: (a writer stuck in a call to the dead JVM does not delay the error longer than this)
_RELEASE_WAIT_ON_JVM_DEATH: Final = 2.0
#: on to_spark(timeout=...) running out, how long the cancelled landing may take to settle (its
#: batch being written commits) before the error is raised anyway
_SETTLE_WAIT_ON_TIMEOUT: Final = 2.0


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


def _parse_bytes(text: str) -> int | None:
    m = re.fullmatch(r"\s*(\d+)\s*([kmgt]?)b?\s*", text.lower())
    if not m:
        return None
    return int(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2)]


def _driver_heap(spark: Any) -> int | None:
    try:
        conf = spark.sparkContext.getConf()
        return _parse_bytes(conf.get("spark.driver.memory", "1g"))
    except Exception:  # Spark Connect: the server's memory is its own
        return None


class _Rows:
    """The pending micro-batch: parts in arrival order, each an Arrow table/batch or a list of
    rows of one Python type (converted once, by the writer)."""

    __slots__ = ("parts", "count", "arrow_bytes", "raw_rows", "started", "_kind")

    def __init__(self) -> None:
        self.parts: list[Any] = []
        self.count = 0
        self.arrow_bytes = 0
        self.raw_rows = 0
        self.started = time.monotonic()
        self._kind: type | None = None

    def add_rows_part(self, item: Any) -> None:
        kind = type(item)
        if self._kind is kind:
            self.parts[-1].append(item)
        else:  # a new part: the rows of one part share one conversion (and one column layout)
            self.parts.append([item])
            self._kind = kind
        self.count += 1
        self.raw_rows += 1

    def add_arrow(self, item: Any) -> None:
        self.parts.append(item)
        self._kind = None
        self.count += item.num_rows
        self.arrow_bytes += item.nbytes

    def first_row(self) -> Any:
        p = self.parts[0]
        return p[0] if isinstance(p, list) else p.slice(0, 1).to_pylist()[0]

    def last_row(self) -> Any:
        p = self.parts[-1]
        return p[-1] if isinstance(p, list) else p.slice(p.num_rows - 1, 1).to_pylist()[0]


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
    """The Subscriber behind :func:`to_spark` (one use). ``result()`` waits for the outcome.

    Example::

        sink = spark.SparkSink(spark=spark.session(), path="/tmp/ids", table=None, format="parquet",
                               mode="append", batch_rows=None, max_batch_seconds=None, schema=None,
                               policy=spark.WritePolicy(), progress=None)
        Flowable.range(0, 100).map(lambda i: {"id": i}).subscribe(sink)
        sink.result().rows                     # 100 (to_spark does all this)
    """

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
        name: str | None = None,
        policy: WritePolicy,
        progress: Progress | None,
        write_hook: Callable[[int], Any] | None = None,
        engine: str = "spark",
        max_batch_bytes: int | None = None,
        merge_schema: bool = False,
    ) -> None:
        if (path is None) == (table is None):
            raise ValueError("to_spark(): give exactly one of path=... or table=...")
        if engine not in ("spark", "pyarrow"):
            raise ValueError(f"to_spark(): engine must be 'spark' or 'pyarrow', got {engine!r}")
        if engine == "pyarrow" and (table is not None or format != "parquet"):
            raise ValueError("to_spark(engine='pyarrow') writes Parquet files to a path only")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise ValueError(f"to_spark(): name must be a non-empty str, got {name!r}")
        if name is not None and table is not None and mode == "overwrite":
            raise ValueError(
                f"to_spark(table={table!r}, mode='overwrite', name={name!r}): a table overwrite drops and "
                "re-creates the table when it starts, so it cannot be resumed; run it without name="
            )
        if schema is not None:
            import pyarrow as pa

            if not isinstance(schema, pa.Schema):
                raise TypeError(f"to_spark(): schema must be a pyarrow.Schema, got {type(schema).__name__}")
        self._engine = engine
        self._spark = spark
        self._path = _local_path(path) if path is not None else None
        if self._path is not None and os.path.exists(self._path) and not os.path.isdir(self._path):
            raise ValueError(f"to_spark(path={path!r}): the path is a file; a landing needs a directory")
        self._table = table
        self._format = format
        self._mode = mode
        self._adaptive = batch_rows is None
        self._batch_rows = batch_rows or 100_000
        # adaptive growth stops at 4M rows or max_batch_bytes of Arrow data, whichever comes first
        self._max_batch_rows = max(self._batch_rows, 4_000_000)
        self._max_bytes = max_batch_bytes or _MAX_BATCH_BYTES
        heap = _driver_heap(spark) if (spark is not None and engine == "spark") else None
        # one Spark write (createDataFrame + save) sends at most this much to the driver JVM
        self._write_bytes = min(self._max_bytes, heap // _HEAP_SHARE) if heap else self._max_bytes
        self._row_bytes = 0.0  # Arrow bytes per row of converted rows (to bound raw-row batches)
        self._max_batch_seconds = max_batch_seconds
        self._user_schema = schema
        self._schema: Any = None  # the path's schema this landing writes (known from the first batch)
        self._schema_version = 0  # the version of it in the path's schema store
        self._schema_stored = False  # True once self._schema is the stored version (not only inferred)
        self._merge = merge_schema
        self._named = name is not None
        self._name = name if name is not None else f"landing-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
        self._policy = policy
        self._progress = progress
        self._write_hook = write_hook
        self._lock = threading.Lock()  # guards the pending batch, demand, skip state and writer state
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
        self._failed_event = threading.Event()  # set with _failed: wakes a retry's backoff at once
        self._upstream: Subscription | None = None
        self._result = SinkResult(path=path, table=table, name=self._name)
        self._start = time.monotonic()
        self._future: concurrent.futures.Future[SinkResult] = concurrent.futures.Future()

        # the writer: one daemon thread running its tasks in order (a write stuck in a dead JVM
        # never keeps the interpreter from exiting)
        self._writer = NewThreadScheduler("rstreams-spark-sink").create_worker()
        self._timer: threading.Timer | None = None
        self._finished = AtomicFlag()
        self._released = AtomicFlag()
        self._landing: Landing | None = None
        self._log: SparkFileLog | None = None
        self._path_lock: PathLock | None = None
        self._schemas: SchemaStore | None = None
        self._skip = 0  # input rows still to skip (committed by an earlier run of this landing)
        self._row = 0  # input row index of the next element's first row
        self._checks: dict[int, str] = {}  # input row -> digest committed for it
        self._check_rows: list[int] = []  # its keys in order; _check_at: the next one to meet
        self._check_at = 0
        self._verify_only = False  # the named landing completed before: check the input, land nothing
        self._next_id = 0
        self._next_row = 0  # input row index of the next row of the pending batch
        self._inflight: tuple[int, int, int] | None = None  # batch id, start row, end row being written
        # table=...: its batches are staged and committed as files in the table's own location
        # (exactly-once, as a path), then the catalog is refreshed; False: saveAsTable per batch
        self._table_files = False
        self._partition_cols: list[str] = []  # saveAsTable into an existing partitioned table
        self._watchdog: JvmWatchdog | None = None
        try:
            self._start_landing()
        except SinkWriteError:
            self._release()
            raise
        except Exception as e:
            # whatever failed (a corrupted control file, the catalog), the lease taken so far is
            # released (else it stays held by this process: a re-run here gets LandingInUseError)
            self._release()
            if isinstance(e, ValueError) and not isinstance(e, (SchemaProblem, json.JSONDecodeError)):
                raise  # a bad argument (a remote path, a partitioned directory): said at the call
            raise SinkWriteError(None, 0, 0, self._result.committed_rows, e, self._name, "start") from e
        except BaseException:
            self._release()
            raise
        if engine == "spark" and spark is not None:
            self._watchdog = JvmWatchdog(spark, f"to_spark(name={self._name!r})", self._on_jvm_death).start()

    # -- starting ------------------------------------------------------------------------------
    def _start_landing(self) -> None:
        if self._table is not None and self._path is None:
            if self._mode == "overwrite" and self._spark.catalog.tableExists(self._table):
                loc = _table_files_location(self._spark, self._table, self._format)
                if loc is not None:
                    # a new schema may come with the new rows: the first commit creates the table anew
                    self._spark.sql(f"DROP TABLE {_quote_table(self._table)}")
                    shutil.rmtree(loc, ignore_errors=True)  # an external table keeps its files
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
        landing = Landing(root, self._name)
        self._landing = landing
        landing.acquire(self._mode)
        remove_temp_files(landing.commits)  # written under the lease we hold: a dead writer's
        remove_temp_files(landing.dir)
        remove_temp_files(os.path.join(root, "_rstreams", "schema"), older_than=600.0)  # no lock: only old ones
        self._log = SparkFileLog(root)
        self._path_lock = PathLock(root)
        self._schemas = SchemaStore(root)
        if self._path is not None:
            with self._path_lock.held():
                if not self._log.exists() and not self._log.finish_interrupted_switch():
                    self._log.create(self._adopt_existing_files())
                # log temp files are written under this lock: any still there is a dead writer's
                remove_temp_files(self._log.dir)
                remove_temp_files(os.path.join(root, "_rstreams"), prefix="metadata-new-")
            recover_dead_landings(root, self._name, self._log, self._path_lock)
        entries = landing.roll(self._log, self._path_lock) if self._path is not None else landing.entries()
        if entries:
            self._mode = landing.mode  # a resumed landing goes on as it began (its batch 0 overwrote or not)
        end = max((int(e["end_row"]) for e in entries), default=0)
        for e in entries:
            for k, v in (e.get("checks") or {}).items():
                self._checks[int(k)] = str(v)
        self._check_rows = sorted(self._checks)
        self._skip = end
        self._next_row = end
        self._next_id = max((int(e["batch_id"]) for e in entries), default=-1) + 1
        self._result.skipped_rows = 0
        self._result.committed_rows = end
        if landing.completion() is not None:
            self._verify_only = True
        self._load_schema()
        if self._table_files and entries:
            self._register_table()

    def _adopt_existing_files(self) -> list[dict[str, Any]]:
        """Data already in the path when its first landing starts stays visible: the new log lists it."""
        assert self._path is not None
        files = []
        for name in sorted(os.listdir(self._path)):
            if name.startswith(("_", ".")):
                continue
            p = os.path.join(self._path, name)
            if os.path.isdir(p):
                raise ValueError(
                    f"to_spark(path={self._path!r}): the path holds the directory {name!r} (a partitioned "
                    "dataset?); a landing's readers list only the files it commits, so that data would "
                    "vanish from them: land into another path, or use table=..."
                )
            files.append(sink_file_status(p))
        return files

    def _load_schema(self) -> None:
        assert self._schemas is not None
        current = self._schemas.current()
        fresh_overwrite = self._mode == "overwrite" and self._next_id == 0
        if current is not None and not fresh_overwrite:
            self._schema_version, self._schema = current
            self._schema_stored = True
            if self._user_schema is not None:
                # the caller's schema must fit the path's: its columns, castable to the path's types
                import pyarrow as pa

                try:
                    conform(pa.Table.from_pylist([], schema=self._user_schema), self._schema, self._merge)
                except SchemaProblem as e:
                    raise SinkWriteError(
                        None, 0, 0, self._result.committed_rows, e, self._name, "start",
                        f"schema= does not fit the schema of what is landed in the path: {e}",
                    ) from e
        elif current is not None:
            self._schema_version = current[0]  # an overwrite registers its schema as the next version
            self._schema = self._user_schema
        else:
            self._schema = self._user_schema

    # -- Subscriber ----------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise TypeError("to_spark: on_subscribe(None) (rule 2.13)")
        if self._upstream is not None:
            subscription.cancel()  # rule 2.5
            return
        with self._lock:
            self._upstream = subscription
            ended = self._done or self._failed is not None
        if ended:
            # cancelled or failed before it was subscribed (cancel(), a dead JVM): the subscription
            # would never be requested from, nor cancelled by anyone else
            subscription.cancel()
            return
        if self._verify_only and not self._checks:
            self._upstream.cancel()  # completed with no row: nothing to check, nothing to land
            self._result.already_complete = True
            self._finish_after_writes(None)
            return
        if self._max_batch_seconds:
            self._arm_timer()
        self._request_more()

    def _request_more(self) -> None:
        with self._lock:
            if self._done or self._failed is not None or self._upstream is None:
                return
            if self._unit_rows is None or self._verify_only:
                # learn what an element is (a row or a record batch of any size) from one element
                # first: a larger first request of big record batches would fill several batches
                # at the starting size, each then a Spark job of its own
                want = 1 - self._outstanding
            elif self._skip:
                # re-run: the committed rows are read (and checked) without being landed
                want = max(1, math.ceil(min(self._skip, self._batch_rows) / max(1, self._unit_rows))) - self._outstanding
            else:
                rows_needed = self._batch_rows - self._pending.count
                if self._row_bytes and self._pending.raw_rows:
                    left = (self._max_bytes - self._pending.arrow_bytes) / self._row_bytes - self._pending.raw_rows
                    rows_needed = min(rows_needed, max(1, int(left)))
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
        error: BaseException | None = None
        verified = False
        with self._lock:
            if self._done or self._failed is not None:
                return
            self._outstanding -= 1
            try:
                if self._unit_rows is None and self._adaptive:
                    self._size_first_batch(item)
                n = self._add(item)
            except InputMismatchError as e:
                error = e
                n = 1
            if self._unit_rows is None or n > self._unit_rows:
                self._unit_rows = max(1, n)
            if error is None and self._verify_only:
                verified = True  # the first row is the committed one: nothing more to read
            elif error is None and self._batch_full() and not self._writing:
                flush = self._seal_for_writer()
        if verified:
            self._stop_after_verify()
            return
        if error is not None:
            self._fail(error)
            return
        if flush is not None:
            self._writer.schedule(lambda: self._write_loop(flush))
        self._request_more()

    def _batch_full(self) -> bool:
        p = self._pending
        if p.count >= self._batch_rows:
            return True
        return bool(p.count) and p.arrow_bytes + p.raw_rows * self._row_bytes >= self._max_bytes

    def _size_first_batch(self, item: Any) -> None:
        """Adaptive mode, first element: Arrow data tells its bytes per row, so the first batch
        can start near ``_FIRST_ARROW_BATCH_BYTES`` instead of the 100k rows used for rows of
        unknown size (both within the 4M-row cap)."""
        import pyarrow as pa

        if isinstance(item, (pa.RecordBatch, pa.Table)) and item.num_rows:
            per_row = max(1, item.nbytes // item.num_rows)
            first = min(_FIRST_ARROW_BATCH_BYTES, self._max_bytes) // per_row
            self._batch_rows = max(self._batch_rows, min(self._max_batch_rows, first))

    def _check(self, row_index: int, row: Any) -> None:
        want = self._checks.get(row_index)
        if want is not None and row_digest(row) != want:
            raise InputMismatchError(
                None, 0, 0, self._result.committed_rows, None, self._name, "resume",
                f"the input differs from what this landing committed: its row {row_index} is {_short(row)}, "
                "which is not the row committed there. A named landing resumes the same input; land "
                "different data under another name (or without name=)",
            )

    def _add(self, item: Any) -> int:
        """Under ``_lock``: append one element to the pending batch, skipping (and checking) rows
        committed by an earlier run of this landing. Returns the element's row count."""
        import pyarrow as pa

        if isinstance(item, (pa.RecordBatch, pa.Table)):
            n: int = item.num_rows
            if self._skip:
                k = min(self._skip, n)
                rows, i = self._check_rows, self._check_at
                while i < len(rows) and rows[i] < self._row + k:
                    self._check(rows[i], item.slice(rows[i] - self._row, 1).to_pylist()[0])
                    i += 1
                self._check_at = i
                self._skip -= k
                self._row += k
                self._result.skipped_rows += k
                item = item.slice(k)
            if item.num_rows:
                self._pending.add_arrow(item)
                self._row += item.num_rows
            return max(1, n)
        if self._skip:
            rows, i = self._check_rows, self._check_at
            if i < len(rows) and rows[i] == self._row:
                self._check(self._row, item)
                self._check_at = i + 1
            self._skip -= 1
            self._row += 1
            self._result.skipped_rows += 1
            return 1
        self._pending.add_rows_part(item)
        self._row += 1
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
            if self._skip:
                short = self._result.committed_rows - self._skip
                error: BaseException | None = InputMismatchError(
                    None, 0, 0, self._result.committed_rows, None, self._name, "resume",
                    f"the input ended after {short} rows, but this landing has committed "
                    f"{self._result.committed_rows}: it is not the input that was landed. A named landing "
                    "resumes the same input; land different data under another name (or without name=)",
                )
            else:
                error = None
                self._completed = True
                if self._pending.count and not self._writing:  # else the write loop takes it
                    flush = self._seal_for_writer()
        if error is not None:
            self._fail(error)
            return
        if flush is not None:
            self._writer.schedule(lambda: self._write_loop(flush))
        self._finish_after_writes(None)

    def _stop_after_verify(self) -> None:
        """A completed named landing was re-run and its input checked: land nothing."""
        with self._lock:
            self._done = True
            up = self._upstream
        if up is not None:
            up.cancel()
        self._result.already_complete = True
        self._result.skipped_rows = self._result.committed_rows
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
                if p.count and not self._cancelled and (self._batch_full() or self._completed):
                    nxt = self._take_pending()
                else:
                    nxt = None
                    self._writing = False
            self._request_more()

    def _attempt(self, step: str, batch_id: int, start_row: int, end_row: int, fn: Callable[[], T], committed: int) -> T:
        """Run one step of a batch with the retry policy; the last failure is a SinkWriteError."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return fn()
            except SchemaProblem as e:
                raise SchemaMismatchError(batch_id, start_row, end_row, committed, e, self._name, step, str(e)) from e
            except Exception as e:
                if self._failed is not None:  # the sink failed meanwhile (a dead JVM): stop here
                    # (re-raised with its own cause: "from e" would overwrite the __cause__ of the
                    # error the caller gets, SparkJvmDiedError, with this attempt's py4j error)
                    raise self._failed from self._failed.__cause__
                if attempt >= self._policy.attempts or step == "convert":  # a conversion fails the same way again
                    raise SinkWriteError(
                        batch_id, start_row, end_row, committed, e, self._name, step,
                        f"{type(e).__name__}: {e} (after {attempt} attempt{'s' if attempt > 1 else ''})",
                    ) from e
                plugins.on_error(e, f"to_spark: micro-batch {batch_id} {step} attempt {attempt} failed; retrying")
                if self._failed_event.wait(self._policy.delay(attempt)) and self._failed is not None:
                    raise self._failed from self._failed.__cause__  # the sink failed meanwhile: stop

    def _write_committed(self, batch: _Rows) -> None:
        batch_id = self._next_id
        start_row = self._next_row
        end_row = start_row + batch.count
        committed = start_row
        self._inflight = (batch_id, start_row, end_row)
        t0 = time.monotonic()
        table, schema = self._attempt("convert", batch_id, start_row, end_row, lambda: self._convert(batch, start_row), committed)
        rows = table.num_rows
        if batch.raw_rows:
            raw_bytes = max(0, table.nbytes - batch.arrow_bytes)
            self._row_bytes = raw_bytes / batch.raw_rows
        checks = {str(start_row): row_digest(batch.first_row()), str(end_row - 1): row_digest(batch.last_row())}

        def write() -> list[str]:
            if self._write_hook is not None:
                self._write_hook(batch_id)
            return self._write(table, batch_id, start_row)

        files = self._attempt("write", batch_id, start_row, end_row, write, committed)
        landing = self._landing
        assert landing is not None and self._log is not None and self._path_lock is not None
        if self._failed is not None:
            raise self._failed
        if not (self._schema_stored and schema.equals(self._schema)):
            # the batch's schema becomes the path's with its commit (not before: a batch that fails
            # to write must not fix the schema of a path it never landed in)
            self._attempt("commit", batch_id, start_row, end_row, lambda: self._register_schema(schema), committed)
        fault_point("commit", batch_id)
        entry = {
            "batch_id": batch_id,
            "token": landing.token,
            "start_row": start_row,
            "end_row": end_row,
            "rows": rows,
            "files": files,
            "checks": checks,
            "overwrite": self._mode == "overwrite" and batch_id == 0 and self._path is not None,
        }
        if entry["overwrite"]:
            log0, lock0 = self._log, self._path_lock

            def commit() -> None:
                # an overwrite replaces what readers saw at its commit, not what other landings
                # publish after it: the log's length and last file, read under the path lock
                # with the entry written, mark where "after" begins
                with lock0.held():
                    seen = log0.all_files()
                    entry["replaces"] = [len(seen), seen[-1]["path"] if seen else None]
                    landing.commit(entry)

            self._attempt("commit", batch_id, start_row, end_row, commit, committed)
        else:
            self._attempt("commit", batch_id, start_row, end_row, lambda: landing.commit(entry), committed)
        fault_point("committed", batch_id)
        self._result.committed_rows = end_row
        if self._path is not None:
            log, lock = self._log, self._path_lock
            tries = [0]

            def publish() -> None:
                # the files are new (unique names): only a retry, which may follow an append that
                # did happen, reads the log to find what is listed already (a file listed twice
                # would be read twice)
                tries[0] += 1
                landing.publish(entry, log, lock, None if tries[0] > 1 else set())

            self._attempt("publish", batch_id, start_row, end_row, publish, end_row)
            if self._table_files:
                self._attempt("publish", batch_id, start_row, end_row, self._register_table, end_row)
        self._inflight = None
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
            self._batch_rows = max(self._batch_rows, min(self._max_batch_rows, grown, self._max_bytes // per_row))

    def _convert(self, batch: _Rows, start_row: int) -> tuple[Any, Any]:
        import pyarrow as pa

        tables = []
        row = start_row
        schema = self._schema
        # the first batch of a path may still grow its schema part by part (all keys of the batch)
        growing = self._merge or not self._schema_stored
        for part in batch.parts:
            if isinstance(part, list):
                t = rows_to_table(part, schema, growing, row)
                row += len(part)
            else:
                t = pa.Table.from_batches([part]) if isinstance(part, pa.RecordBatch) else part
                row += t.num_rows
            if schema is None:
                schema = t.schema  # the first part of the first batch: the others must fit it
                for f in schema:
                    if pa.types.is_null(f.type):
                        raise SchemaProblem(
                            f"column {f.name!r} is None in every row of the first batch, so its type is "
                            "unknown; give schema=pyarrow.schema([...]) to land it"
                        )
            t, grown = conform(t, schema, growing, row - t.num_rows)
            if grown is not None:
                schema = grown
            tables.append(t)
        if len(tables) > 1:
            tables = [conform(t, schema, False)[0] for t in tables]  # earlier parts gain later columns
        return (tables[0] if len(tables) == 1 else pa.concat_tables(tables)), schema

    def _register_schema(self, schema: Any) -> None:
        """The path's schema becomes ``schema`` (the first batch's, or grown by merge_schema). A
        writer that registered another version first wins: this batch, written with the old one,
        is refused (its re-run converts to the new one)."""
        assert self._schemas is not None
        if self._schemas.register(self._schema_version + 1, schema):
            self._schema_version += 1
            self._schema = schema
            self._schema_stored = True
            return
        current = self._schemas.current()
        assert current is not None
        self._schema_version, theirs = current
        if theirs.equals(schema):
            self._schema, self._schema_stored = theirs, True
            return
        self._schema, self._schema_stored = theirs, True
        raise SchemaProblem(
            f"another landing into this path fixed its schema first, as ({_fields(theirs)}); this batch has "
            f"({_fields(schema)}) and was not committed: re-run to land it with the path's schema"
        )

    def _write(self, table: Any, batch_id: int, start_row: int) -> list[str]:
        landing = self._landing
        assert landing is not None
        if self._table is not None and not self._table_files:
            self._write_spark(table, None, batch_id)
            return []
        staging = landing.staging(batch_id)
        shutil.rmtree(staging, ignore_errors=True)
        os.makedirs(staging)
        for piece in self._slices(table, start_row):
            if self._engine == "pyarrow":
                import pyarrow.parquet as pq

                pq.write_table(piece, os.path.join(staging, f"part-{uuid.uuid4().hex[:8]}.parquet"))
            else:
                self._write_spark(piece, staging, batch_id)
        staged = []
        for name in sorted(os.listdir(staging)):
            p = os.path.join(staging, name)
            if name.startswith("part-"):
                final = f"part-{landing.token}-b{batch_id:08d}-{name[len('part-'):]}"
                os.replace(p, os.path.join(staging, final))  # final name, still staged
                staged.append(final)
            elif os.path.isdir(p):
                shutil.rmtree(p, ignore_errors=True)
            else:
                os.remove(p)  # _SUCCESS, checksums
        return staged

    def _slices(self, table: Any, start_row: int) -> list[Any]:
        """``table`` cut into pieces of at most ``_write_bytes`` (one row over it is an error: the
        driver JVM would run out of heap on it)."""
        if table.nbytes <= self._write_bytes or table.num_rows <= 1:
            if table.num_rows == 1 and table.nbytes > self._write_bytes:
                raise _TooLarge(start_row, table.nbytes, self._write_bytes)
            return [table]
        half = table.num_rows // 2
        return self._slices(table.slice(0, half), start_row) + self._slices(table.slice(half), start_row + half)

    def _write_spark(self, table: Any, staging: str | None, batch_id: int) -> None:
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
        if staging is None:
            mode = "append" if (batch_id > 0 or self._mode == "append") else self._mode
            writer = df.write.mode(mode).format(self._format)
            if self._partition_cols and mode == "append":
                writer = writer.partitionBy(*self._partition_cols)  # an existing partitioned table
            writer.saveAsTable(self._table)
            return
        df.write.mode("append").format(self._format).save(staging)

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
        loc = self._path.replace("'", "\\'")
        spark.sql(f"CREATE TABLE IF NOT EXISTS {name} USING {self._format} LOCATION '{loc}'")

    # -- ending --------------------------------------------------------------------------------
    def _on_jvm_death(self, error: SparkJvmDiedError) -> None:
        inflight = self._inflight
        committed = self._result.committed_rows
        if inflight is not None:
            batch_id, start, end = inflight
            self._fail(SinkWriteError(batch_id, start, end, committed, error, self._name, "write"))
        else:
            self._fail(SinkWriteError(None, 0, 0, committed, error, self._name, "write"))

    def _fail(self, error: BaseException) -> None:
        with self._lock:
            if self._failed is not None:
                return
            self._failed = error
            up = self._upstream
            self._done = True
        self._failed_event.set()
        if up is not None:
            up.cancel()
        if isinstance(error, SinkWriteError) and isinstance(error.cause, SparkJvmDiedError):
            # The writer may be stuck in a call to the dead JVM: the error is answered within
            # seconds whatever it does. But a writer that stops at once (its call failed with the
            # JVM, or it was waiting to retry) releases the lease first, so that a re-run started
            # at the error finds it free instead of a LandingInUseError naming this process.
            released = threading.Event()

            def release() -> None:
                try:
                    self._release()
                finally:
                    released.set()

            if self._writer.schedule(release) is DISPOSED:
                release()
            released.wait(_RELEASE_WAIT_ON_JVM_DEATH)
            self._finish(error)
            return
        self._finish_after_writes(error)

    def _finish_after_writes(self, error: BaseException | None) -> None:
        # The writer is one thread running its tasks in order, and a running write loop also
        # takes the batch waiting behind it: a task queued now runs after every pending write.
        def finish() -> None:
            try:
                self._finish(error, release=True)
            finally:
                self._release()

        if self._writer.schedule(finish) is DISPOSED:
            finish()

    def _finish(self, error: BaseException | None, release: bool = False) -> None:
        """Settle the result. ``release`` (the writer is done): the lease is released first, so
        a caller that re-runs the landing as soon as the result arrives finds it free (released
        after, it raced that re-run: a spurious LandingInUseError naming this very process)."""
        if not self._finished.try_set():
            return
        if self._timer is not None:
            self._timer.cancel()
        self._result.seconds = time.monotonic() - self._start
        if self._progress is not None:
            self._progress.close()
        error = self._failed or error
        if error is None and self._completed and self._mode == "overwrite" and self._next_id == 0 and self._path is not None:
            # an overwrite with no row: readers see an empty path, as after Spark's overwrite
            try:
                self._attempt("publish", 0, 0, 0, self._overwrite_with_nothing, 0)
            except SinkWriteError as e:
                error = e
        if error is None and self._completed and self._landing is not None and self._landing.held:
            try:
                committed = self._result.committed_rows
                self._attempt("complete", self._next_id, committed, committed, lambda: self._mark_complete(), committed)
            except SinkWriteError as e:
                error = e
        if error is not None:
            if not isinstance(error, SinkWriteError):  # the upstream's own error: say where the landing stands
                c = self._result.committed_rows
                done = f"rows 0..{c - 1} are committed" if c else "no row is committed"
                error.add_note(
                    f"to_spark(name={self._name!r}): the input failed; {done}. Re-run the same input with "
                    f"name={self._name!r} to resume after them."
                )
        if release:
            try:
                self._release()
            except Exception as e:  # never keep the result from the caller
                plugins.on_error(e, f"to_spark(name={self._name!r}): releasing the landing failed")
        if error is not None:
            self._future.set_exception(error)
        else:
            self._future.set_result(self._result)

    def _overwrite_with_nothing(self) -> None:
        assert self._log is not None and self._path_lock is not None
        with self._path_lock.held():
            old = self._log.replace_with([])
        remove_listed_files(old, keep=set())

    def _mark_complete(self) -> None:
        landing = self._landing
        assert landing is not None
        if self._named or landing.has_staged():
            landing.mark_complete(self._result.committed_rows)
        else:
            landing.remove()  # an unnamed landing is never resumed once complete: leave nothing behind

    def _release(self) -> None:
        if not self._released.try_set():
            return
        if self._watchdog is not None:
            self._watchdog.stop()
        landing = self._landing
        if landing is not None and landing.held:
            if not self._named and not self._result.committed_rows and not landing.has_staged():
                landing.remove()  # an unnamed landing that committed nothing has nothing to resume
            landing.release()
        self._writer.dispose()

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
            self._writer.schedule(lambda: self._write_loop(flush))
        self._arm_timer()

    # -- results -------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The landing's name (generated when none was given)."""
        return self._name

    @property
    def committed_rows(self) -> int:
        """The landing's committed rows so far (earlier runs of its name included)."""
        return self._result.committed_rows

    @property
    def future(self) -> concurrent.futures.Future[SinkResult]:
        return self._future

    def result(self, timeout: float | None = None) -> SinkResult:
        return self._future.result(timeout)

    def cancel(self) -> None:
        """Stop: cancel the upstream; the batch being written still commits, rows not yet in a
        written batch are not (``result().committed_rows`` and the commit log say where a re-run
        with the landing's name resumes)."""
        with self._lock:
            up = self._upstream
            self._done = True
            self._cancelled = True
        if up is not None:
            up.cancel()
        self._finish_after_writes(None)


class _TooLarge(SchemaProblem):
    def __init__(self, row: int, size: int, limit: int) -> None:
        super().__init__(
            f"row {row} holds {size / 2**20:.1f} MiB of data, more than one write may send to the driver JVM "
            f"({limit / 2**20:.1f} MiB: an eighth of spark.driver.memory, or max_batch_bytes); raise "
            "spark.driver.memory or split the row"
        )


def _short(row: Any) -> str:
    text = repr(row)
    return text if len(text) <= 120 else text[:117] + "..."


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
    name: str | None = None,
    format: str = "parquet",
    mode: str = "append",
    batch_rows: int | None = None,
    max_batch_seconds: float | None = None,
    max_batch_bytes: int | None = None,
    schema: Any = None,
    merge_schema: bool = False,
    spark: Any = None,
    retry: WritePolicy | None = None,
    block: bool = True,
    progress: bool | None = None,
    timeout: float | None = None,
    engine: str = "spark",
    stream: str | None = None,
) -> Any:
    """Land ``publisher`` through Spark in committed micro-batches, exactly once, with backpressure.

    Elements may be dicts, tuples (named tuples name the columns), pyspark ``Row``s, or
    ``pyarrow.RecordBatch``/``Table``s. Returns a :class:`SinkResult` when ``block`` (default),
    else a ``concurrent.futures.Future`` of it.

    Example::

        from rstreams import Flowable, spark
        r = spark.to_spark(Flowable.range(0, 1000).map(lambda i: {"id": i}), path="/tmp/out", name="ids")
        print(r.rows, r.batches)           # 1000 1; run again: 0 rows, r.already_complete

    Identity: ``name`` names the landing (like a Structured Streaming query's checkpoint). Without
    it every call is a new landing that appends (a failed one can still be resumed by passing
    the generated ``SinkResult.name``/``SinkWriteError.landing``). Re-running a named landing after
    a crash, failure or cancel lands exactly the rows it had not committed (the input must be the
    same: its committed rows are checked, and a different input is an
    :class:`InputMismatchError`); re-running one that completed lands nothing. A second live
    writer of the same name gets :class:`LandingInUseError`; different names append to one path
    concurrently. ``stream`` is the former spelling of ``name``.

    Visibility: Spark readers of ``path`` (``spark.read.parquet(path)``, a table over it,
    :func:`landed_stream`) see whole committed batches only: the files are listed in
    ``<path>/_spark_metadata``, the log of Spark's own file sink. ``mode="overwrite"`` replaces
    what readers see at the first commit (one atomic switch of that log).

    Schema: one per path. ``schema`` (a ``pyarrow.Schema``) when given, else inferred from every
    key of the first batch; a later row or batch that does not fit (an unknown key, a value that
    cannot be cast exactly) is a :class:`SchemaMismatchError` before anything of its batch is
    committed; ``merge_schema=True`` lets it add nullable columns instead.

    Backpressure: requests one micro-batch (``batch_rows`` rows; adaptive from 100k when None;
    at most ``max_batch_bytes`` of Arrow data, 192 MiB by default) and requests more only after
    it is committed: at most two batches in memory. One Spark write sends at most an eighth of
    the driver's heap; a single larger row is a clear error.
    Errors: every step (write, commit, publish) is retried per ``retry`` (:class:`WritePolicy`),
    then the stream is cancelled and a :class:`SinkWriteError` names the batch, the committed rows
    and the name to resume with. A dead driver JVM fails the landing within a second.
    ``max_batch_seconds`` flushes a partial batch that has waited that long. ``timeout`` (with
    ``block``): a landing not done by then is cancelled and a :class:`SinkWriteError` (step
    ``"timeout"``) says what is committed and the name to resume with.
    ``table=``: a file-format table of the session catalog (new, or existing and not partitioned)
    on a local or mounted filesystem is landed like a path, in its own location, exactly-once,
    and the catalog is refreshed after each commit; ``mode="overwrite"`` there drops the table
    first (not atomic). Any other table (partitioned, another format or catalog, remote storage)
    gets Spark's ``saveAsTable`` append per batch, which a crash between write and commit can
    repeat (at-least-once).
    ``engine="pyarrow"`` writes the Parquet files with pyarrow alone (no JVM on the hot path,
    same commit protocol); the data stays readable by Spark.
    """
    from ._session import session

    if mode not in ("append", "overwrite"):
        raise ValueError(f"to_spark(): mode must be 'append' or 'overwrite', got {mode!r}")
    if batch_rows is not None and (isinstance(batch_rows, bool) or not isinstance(batch_rows, int) or batch_rows <= 0):
        raise ValueError(f"to_spark(): batch_rows must be a positive int, got {batch_rows!r}")
    if max_batch_bytes is not None and (
        isinstance(max_batch_bytes, bool) or not isinstance(max_batch_bytes, int) or max_batch_bytes <= 0
    ):
        raise ValueError(f"to_spark(): max_batch_bytes must be a positive int, got {max_batch_bytes!r}")
    if stream is not None:
        if name is not None and name != stream:
            raise ValueError(f"to_spark(): name={name!r} and stream={stream!r} disagree (stream is the old spelling of name)")
        name = stream
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
        max_batch_bytes=max_batch_bytes,
        schema=schema,
        merge_schema=merge_schema,
        name=name,
        policy=retry or WritePolicy(),
        progress=prog,
        engine=engine,
    )
    publisher.subscribe(sink)
    if not block:
        return sink.future
    try:
        return sink.result(timeout)
    except concurrent.futures.TimeoutError as e:
        if sink.future.done():
            raise  # the landing's own outcome (an upstream's TimeoutError), not this wait's
        # the caller gives up: the landing must not go on in the background holding its lease
        sink.cancel()
        with contextlib.suppress(BaseException):
            sink.result(_SETTLE_WAIT_ON_TIMEOUT)
        raise SinkWriteError(
            None, 0, 0, sink.committed_rows, e, sink.name, "timeout",
            f"it did not finish within timeout={timeout} s and was cancelled (a batch being written still "
            "commits; the landing is free once it has)",
        ) from e

