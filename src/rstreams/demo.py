"""``rstreams demo``: the main job, run where Spark runs it, with backpressure where it matters.

Batch mode (the default), ``--pipeline executors`` (the default)::

    driver (this process)                     executors (Spark tasks and their Python workers)
    ----------------------------------------  ---------------------------------------------------
    plans the jobs, shows progress, checks    read the input: spark.range -> synthetic events made
    the counts, prints the summary              in each task, or Spark's CSV / text / Parquet reader
                                              pipeline(records) on every partition (run_on_spark,
                                                mapInArrow): parse, validate, enrich with async
                                                lookups (at most 8 in flight per task); Spark's pull
                                                is the demand, so a task holds ~16k records at most
                                              the watermark (input order) and late records
                                              Spark's groupBy(window(...)) -> windows/ (Parquet)
                                              bad and late records -> dead_letters/ (JSON lines)

``--pipeline driver`` runs the same ``pipeline`` function in this process over records read
here, lands its output through ``to_spark`` and lets Spark do the rest: the single-process
placement, for comparison. ``--pipeline local`` runs the whole job in this process with rstreams:
``pipeline``, then ``local_job`` (the event-time ``tumbling_window`` operator with the same
watermark and lateness rule, bad and late records out through its side channel), landed
exactly-once through ``to_spark``; Spark only splits the landed rows into ``windows/`` and
``dead_letters/``. All three placements give the same files.

``--streaming``: Structured Streaming over the ``rate-micro-batch`` source (synthetic) or a file
source (``--input`` file or directory, one file per micro-batch), for a bounded number of
micro-batches. The events query runs the pipeline on the executors for each micro-batch
(``run_on_spark`` over the streaming DataFrame), dead-letters bad records and those behind the
watermark (the latest event time of the earlier micro-batches minus the allowed lateness,
Spark's own rule) and stages the others; the windows query aggregates them with Spark's
``withWatermark`` + ``groupBy(window(...))`` and the driver consumes its results through
``from_stream`` (the demand of the landing paces Spark's trigger loop), landing them with
``to_spark``. At the end of the input a final watermark closes every window, as a bounded stream
ends.

``--out DIR`` receives ``windows/`` (Parquet: window_start, country, kind, events, amount) and
``dead_letters/`` (JSON lines ``{"reason": ..., "record": ...}``: the input record as read, or the
parsed event for a late one). A re-run replaces the previous run's output; anything there that
is not demo output is refused. ``--input`` is checked before Spark starts; a problem is one line
on stderr and exit status 2. ``--master spark://host:7077`` runs it on a cluster: the executors
need this package installed, and ``--out`` must be a path every node sees (a shared file system).
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import math
import os
import resource
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

from . import Flowable
from .demo_pipeline import (
    ALLOWED_LATENESS_SECONDS,
    COUNTRIES,
    EVENT_DDL,
    EVENTS_PER_SECOND,
    FIELDS,
    KINDS,
    LOCAL_DDL,
    T0,
    WINDOW_SECONDS,
    local_job,
    parse,
    pipeline,
    synthetic_event,
)

__all__ = [
    "ALLOWED_LATENESS_SECONDS",
    "COUNTRIES",
    "DemoError",
    "EVENTS_PER_SECOND",
    "KINDS",
    "T0",
    "WINDOW_DDL",
    "WINDOW_SECONDS",
    "build_parser",
    "input_format",
    "main",
    "parse",
    "pipeline",
    "read_dead_letters",
    "read_input",
    "run",
    "synthetic_events",
]

INPUT_SUFFIXES: Final = {".csv": "csv", ".jsonl": "json", ".json": "json", ".ndjson": "json", ".parquet": "parquet"}
#: the landed windows' schema
WINDOW_DDL: Final = "window_start BIGINT, country STRING, kind STRING, events BIGINT, amount DOUBLE"
#: the kind of the rows that mark the end of a bounded stream (never landed)
END_OF_INPUT: Final = "__end_of_input__"
#: what the demo keeps in ``--out``; a marker file says the directory is demo output
_MANAGED: Final = ("windows", "dead_letters", "_events", "_stream")
_MARKER: Final = "_rstreams_demo.json"
_DEFAULT_ROWS: Final = 500_000
_DEFAULT_STREAM_ROWS: Final = 100_000
_DEFAULT_BATCH_ROWS: Final = 20_000


class DemoError(ValueError):
    """The demo cannot run as asked (a bad ``--input``, ``--out`` or ``--rows``): says what was wrong."""


# -- input ----------------------------------------------------------------------------------------


def synthetic_events(n: int, seed: int = 7) -> Iterator[str]:
    """The first ``n`` synthetic events as JSON lines (what the executors make from ``spark.range``)."""
    for i in range(n):
        yield synthetic_event(i, seed)


def input_format(path: str) -> str:
    """Check an ``--input`` file before any work starts; return its format: csv, json or parquet.

    Raises :class:`DemoError` naming the problem (unsupported extension, missing or unreadable
    file, a ``.parquet`` file that is not Parquet, a CSV header or Parquet schema without the
    event's columns (every record would be dead-lettered), a JSON array instead of JSON lines)."""
    suffix = os.path.splitext(path)[1].lower()
    fmt = INPUT_SUFFIXES.get(suffix)
    if fmt is None:
        raise DemoError(
            f"--input {path!r}: unsupported file type {suffix or '(no extension)'!r}"
            " (use .csv, .jsonl / .json / .ndjson, or .parquet)"
        )
    if not os.path.exists(path):
        raise DemoError(f"--input {path!r}: no such file")
    if not os.path.isfile(path):
        raise DemoError(f"--input {path!r}: not a regular file")
    if not os.access(path, os.R_OK):
        raise DemoError(f"--input {path!r}: not readable (permission denied)")
    if fmt != "parquet" and os.path.getsize(path) == 0:
        return fmt  # an empty text file: no records
    columns = _columns(path, fmt)
    if columns is None:
        return fmt
    missing = [c for c in FIELDS if c not in columns]
    if missing:
        raise DemoError(
            f"--input {path!r}: no column(s) {', '.join(map(repr, missing))}"
            f" (the {fmt} has {', '.join(map(repr, columns)) or 'no columns'}; an event needs {', '.join(FIELDS)})"
        )
    return fmt


def _columns(path: str, fmt: str) -> list[str] | None:
    """The columns of a CSV header or a Parquet schema; None for JSON lines (checked per record)."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            return list(pq.read_schema(path).names)
        except Exception as e:  # pyarrow raises ArrowInvalid / OSError for a non-Parquet file
            raise DemoError(f"--input {path!r}: not a readable Parquet file ({e})") from e
    if fmt == "csv":
        if os.path.getsize(path) == 0:
            return list(FIELDS)
        with open(path, newline="", encoding="utf-8-sig", errors="replace") as f:
            return [c.strip() for c in next(csv.reader(f), [])]
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        start = f.read(4096).lstrip()[:1]
    if start == "[":
        raise DemoError(f"--input {path!r}: a JSON array; the demo reads JSON lines (one object per line)")
    return None


def _stream_input(path: str) -> tuple[str, str, list[str]]:
    """``--input`` of the streaming mode: a file, or a directory of files of one format (one
    micro-batch each). Returns (format, directory, the files in the order Spark will take them)."""
    if os.path.isdir(path):
        files = sorted(p for p in glob.glob(os.path.join(path, "*")) if os.path.isfile(p) and not os.path.basename(p).startswith((".", "_")))
        if not files:
            raise DemoError(f"--input {path!r}: an empty directory (the streaming mode reads the files in it)")
        fmts = {INPUT_SUFFIXES.get(os.path.splitext(p)[1].lower()) for p in files}
        if len(fmts) != 1 or None in fmts:
            raise DemoError(f"--input {path!r}: the files in it must all be .csv, all JSON lines or all .parquet")
        for p in files:
            input_format(p)
        return fmts.pop() or "", path, files
    return input_format(path), os.path.dirname(os.path.abspath(path)), [path]


def read_input(path: str) -> Iterator[Any]:
    """Records of a CSV (dicts), JSON lines (lines) or Parquet (dicts) file, read lazily in this
    process (the ``--pipeline driver`` placement); CSV and Parquet records hold the event's
    columns only, as the executors' Spark readers give them.

    The file is checked eagerly (:func:`input_format`), so a bad ``--input`` fails before Spark
    starts; an error while reading later is a :class:`DemoError` saying how far it got. Undecodable
    bytes in a text file are replaced, so that line goes to the dead letters instead of ending
    the run."""
    return _records(path, input_format(path))


def _records(path: str, fmt: str) -> Iterator[Any]:
    n = 0
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            for batch in pq.ParquetFile(path).iter_batches(batch_size=10_000, columns=list(FIELDS)):
                for rec in batch.to_pylist():
                    n += 1
                    yield rec
        elif fmt == "json":
            with open(path, encoding="utf-8-sig", errors="replace") as f:
                for line in f:
                    if line.strip():
                        n += 1
                        yield line.rstrip("\r\n")
        else:
            with open(path, newline="", encoding="utf-8-sig", errors="replace") as f:
                for rec in csv.DictReader(f):
                    n += 1
                    yield {k: (None if rec.get(k) == "" else rec.get(k)) for k in FIELDS}
    except (OSError, ValueError, csv.Error) as e:  # pyarrow's errors derive from these
        raise DemoError(f"--input {path!r}: reading failed after {n} records: {type(e).__name__}: {e}") from e


def _check_text_input(path: str, fmt: str) -> None:
    """Read a CSV through Python's reader once before Spark starts: a file Python's csv module
    cannot read is a clear error here rather than a different behaviour in Spark's reader."""
    if fmt == "csv":
        for _ in _records(path, fmt):
            pass


# -- the output directory ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Paths:
    out: str
    windows: str
    dead_letters: str
    events: str  # the driver and local placements' landed output
    stream: str  # the streaming mode's checkpoints and staged events


def _prepare_out(out: str) -> _Paths:
    """Make ``out`` ready for a run: the previous run's output is replaced (the demo recomputes
    everything; it never resumes nor adds to an earlier run). An output directory holding any
    of the demo's names without the demo's marker file is left alone: that is an error."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise DemoError(f"--out {out!r}: exists and is not a directory")
    paths = _Paths(
        out,
        os.path.join(out, "windows"),
        os.path.join(out, "dead_letters"),
        os.path.join(out, "_events"),
        os.path.join(out, "_stream"),
    )
    present = [n for n in _MANAGED if os.path.lexists(os.path.join(out, n))]
    if present and not os.path.isfile(os.path.join(out, _MARKER)):
        raise DemoError(
            f"--out {out!r}: {os.path.join(out, present[0])} exists and is not the output of an earlier demo run;"
            " it was left alone: choose another --out or remove it"
        )
    for name in present:
        p = os.path.join(out, name)
        if os.path.islink(p) or not os.path.isdir(p):
            os.unlink(p)
        else:
            shutil.rmtree(p)
    try:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, _MARKER), "w") as f:
            json.dump({"written_by": "rstreams demo", "managed": list(_MANAGED)}, f)
    except OSError as e:
        raise DemoError(f"--out {out!r}: cannot create the output directory ({e})") from e
    return paths


def read_dead_letters(out: str) -> list[dict[str, Any]]:
    """The dead letters of a finished run in ``out``, in file order (the input's order within a
    file): ``[{"reason": ..., "record": ...}, ...]``.

    Example::

        run(rows=10_000, out="/tmp/demo", quiet=True)
        reasons = {d["reason"].split(":")[0] for d in read_dead_letters("/tmp/demo")}
    """
    found: list[dict[str, Any]] = []
    root = os.path.join(out, "dead_letters")
    files = sorted(
        p for p in glob.glob(os.path.join(root, "**", "part-*"), recursive=True) if not os.path.basename(p).startswith(".")
    )
    for p in files:
        with open(p, encoding="utf-8") as f:
            found.extend(json.loads(line) for line in f if line.strip())
    return found


# -- what runs on the executors ---------------------------------------------------------------------


def _synthetic_record(row: tuple[Any, ...]) -> tuple[int, str]:
    return row[0], synthetic_event(row[0])


def _where_am_i() -> tuple[int, int | None]:
    """(this process's pid, the pid of the JVM it serves): a Python worker's parent is pyspark's
    daemon, whose parent is the executor JVM (the driver JVM in local mode)."""
    pid = os.getpid()
    p = os.getppid()
    for _ in range(3):
        try:
            with open(f"/proc/{p}/comm") as f:
                if f.read().strip() == "java":
                    return pid, p
            with open(f"/proc/{p}/stat") as f:
                p = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return pid, None


class _TaskStats:
    """The accumulator's algebra (pyspark's AccumulatorParam protocol): records seen, and the
    (Python worker pid, JVM pid) pairs that ran the pipeline. Updates reach the driver as each
    task ends, so the display counts records as tasks finish."""

    def zero(self, value: Any) -> tuple[int, frozenset[tuple[int, int | None]]]:
        return 0, frozenset()

    def addInPlace(self, a: Any, b: Any) -> tuple[int, frozenset[tuple[int, int | None]]]:  # noqa: N802 (pyspark's name)
        return a[0] + b[0], a[1] | b[1]


class _Counter:
    __slots__ = ("n", "bad", "_acc")

    def __init__(self, acc: Any) -> None:
        self.n = 0
        self.bad = 0
        self._acc = acc

    def __call__(self, record: Any) -> Any:
        self.n += 1
        return record

    def tally(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        """Count a bad row of the pipeline's output (the local placement's figures)."""
        if row[7] is not None:
            self.bad += 1
        return row

    def synthetic(self, row: tuple[Any, ...]) -> tuple[int, str]:
        """Count a ``spark.range`` row and make its synthetic event (one call per record)."""
        self.n += 1
        return row[0], synthetic_event(row[0])

    def flush(self) -> None:
        if self._acc is not None:
            self._acc.add((self.n, frozenset([_where_am_i()])))
            self.n = 0


class _OnExecutors:
    """What ``run_on_spark`` applies to each partition: the source stage (a synthetic event made
    from its number, for ``spark.range`` input) in front of :func:`pipeline`, counting records
    for the progress display. No driver state: the accumulator is Spark's, written by the task."""

    def __init__(self, synthetic: bool, acc: Any) -> None:
        self.synthetic = synthetic
        self.acc = acc

    def __call__(self, rows: Flowable[Any]) -> Flowable[Any]:
        counter = _Counter(self.acc)
        src = rows.map(counter.synthetic) if self.synthetic else rows.map(counter)
        return pipeline(src).do_on_complete(counter.flush)


# -- the Spark side -----------------------------------------------------------------------------------


def _window_rows(on_time: Any) -> Any:
    """Spark's tumbling event-time windows over on-time events, one row per (window, country, kind).

    ``on_time`` has an ``event_time`` timestamp column (with a watermark, when streaming)."""
    from pyspark.sql import functions as F

    return (
        on_time.groupBy(F.window("event_time", f"{WINDOW_SECONDS} seconds"), "country", "kind")
        .agg(F.count("*").alias("events"), F.round(F.sum("amount"), 2).alias("amount"))
        .select(F.unix_seconds(F.col("window.start")).alias("window_start"), "country", "kind", "events", "amount")
    )


def _late_dead_letter(reason: Any) -> Any:
    """The dead-letter line of a late event: the reason (a column) and the parsed event."""
    from pyspark.sql import functions as F

    return F.to_json(F.struct(reason.alias("reason"), F.struct(*[F.col(c) for c in FIELDS]).alias("record")))


def _stream_late_reason(watermark: float) -> Any:
    """Why an event of a micro-batch is late: the watermark of the earlier micro-batches."""
    from pyspark.sql import functions as F

    start = F.floor(F.col("ts") / WINDOW_SECONDS) * WINDOW_SECONDS
    return F.format_string(
        "late event: its window [%d, %d) had closed: the watermark was already %.3f (the latest event time of "
        f"the earlier micro-batches minus the allowed lateness of {ALLOWED_LATENESS_SECONDS} s)",
        start,
        start + WINDOW_SECONDS,
        F.lit(watermark),
    )


def _source_df(spark: Any, input_path: str | None, fmt: str, rows: int, partitions: int) -> tuple[Any, bool]:
    """The input as a DataFrame of ``(seq, raw)`` read by Spark (or ``(id,)`` of ``spark.range``
    for synthetic events, made on the executors); and whether it is synthetic."""
    from pyspark.sql import functions as F

    if input_path is None:
        return spark.range(0, rows, numPartitions=partitions), True
    seq = F.monotonically_increasing_id().alias("seq")  # input order (partition, then position)
    if fmt == "json":
        df = spark.read.text(input_path).where(F.col("value").rlike(r"\S"))
        return df.select(seq, F.col("value").alias("raw")), False
    if fmt == "csv":
        columns = _columns(input_path, fmt) or list(FIELDS)
        schema = ", ".join(f"`{c.replace('`', '``')}` STRING" for c in columns)
        df = spark.read.option("header", True).option("mode", "PERMISSIVE").schema(schema).csv(input_path)
    else:
        df = spark.read.parquet(input_path)
    return df.select(seq, F.struct(*[F.col(c) for c in FIELDS]).alias("raw")), False


def _stream_source(spark: Any, input_path: str | None, batch_rows: int, partitions: int) -> tuple[Any, bool]:
    """The streaming input: ``rate-micro-batch`` (``value`` is the synthetic event's number) or a
    file source taking one file per micro-batch."""
    from pyspark.sql import functions as F

    if input_path is None:
        rate = (
            spark.readStream.format("rate-micro-batch")
            .option("rowsPerBatch", batch_rows)
            .option("numPartitions", partitions)
            .load()
        )
        return rate.select(F.col("value").alias("seq")), True
    fmt, directory, files = _stream_input(input_path)
    reader = spark.readStream.option("maxFilesPerTrigger", 1)
    if not os.path.isdir(input_path):
        reader = reader.option("pathGlobFilter", os.path.basename(input_path))
    seq = F.lit(None).cast("long").alias("seq")  # no input position in a file stream (none needed:
    # the watermark moves per micro-batch)
    if fmt == "json":
        df = reader.format("text").load(directory).where(F.col("value").rlike(r"\S"))
        return df.select(seq, F.col("value").alias("raw")), False
    if fmt == "csv":
        columns = _columns(files[0], fmt) or list(FIELDS)
        schema = ", ".join(f"`{c.replace('`', '``')}` STRING" for c in columns)
        df = reader.option("header", True).schema(schema).csv(directory)
    else:
        df = reader.schema(spark.read.parquet(files[0]).schema).parquet(directory)
    return df.select(seq, F.struct(*[F.col(c) for c in FIELDS]).alias("raw")), False


def _event_arrow_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("seq", pa.int64()), ("id", pa.int64()), ("ts", pa.float64()), ("user", pa.int64()), ("kind", pa.string()),
            ("amount", pa.float64()), ("country", pa.string()), ("reason", pa.string()), ("dead_letter", pa.string()),
        ]
    )


def _local_arrow_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("seq", pa.int64()), ("window_start", pa.int64()), ("country", pa.string()), ("kind", pa.string()),
            ("events", pa.int64()), ("amount", pa.float64()), ("dead_letter", pa.string()),
        ]
    )


def _window_arrow_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [("window_start", pa.int64()), ("country", pa.string()), ("kind", pa.string()), ("events", pa.int64()), ("amount", pa.float64())]
    )


class _JobWatch:
    """Feeds a :class:`Phase` from Spark while jobs run: records from the task accumulator (or a
    counter in this process), tasks done / total of the jobs of one job group."""

    def __init__(self, spark: Any, phase: Any, group: str, records: Callable[[], int]) -> None:
        self._sc = spark.sparkContext
        self._phase = phase
        self._group = group
        self._records = records
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rstreams-demo-watch", daemon=True)

    def __enter__(self) -> _JobWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._poll()

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self._poll()

    def _poll(self) -> None:
        try:
            tracker = self._sc.statusTracker()
            done = total = 0
            for job_id in tracker.getJobIdsForGroup(self._group):
                job = tracker.getJobInfo(job_id)
                for stage_id in job.stageIds if job is not None else ():
                    st = tracker.getStageInfo(stage_id)
                    # stages that started (a stage skipped because its shuffle output exists
                    # never does): tasks done of the tasks Spark is actually running
                    if st is not None and st.numCompletedTasks + st.numActiveTasks + st.numFailedTasks:
                        done += st.numCompletedTasks
                        total += st.numTasks
            self._phase.update(records=self._records(), tasks=(done, total) if total else None)
        except Exception:  # the display must never break the job (a stopping context, a py4j hiccup)
            pass


@dataclass
class _Counts:
    records_in: int = 0
    bad: int = 0
    late: int = 0
    max_ts: float = -math.inf


#: windows of event time one event closes behind it: the watermark it sets (its time minus the
#: allowed lateness) is past the end of every window more than this many windows before its own
_CLOSE_GAP: Final = ALLOWED_LATENESS_SECONDS // WINDOW_SECONDS + 1
assert ALLOWED_LATENESS_SECONDS % WINDOW_SECONDS == 0, "the closing rule below counts whole windows"


@dataclass(frozen=True)
class _Closer:
    """Window ``k`` (event time ``[k * W, (k + 1) * W)``) closed when the record ``seq`` (event
    time ``ts``) arrived: the first record whose watermark passed its end."""

    k: int
    seq: int
    ts: float


def _batch_events_stats(events: Any) -> tuple[_Counts, list[_Closer]]:
    """One aggregate over the (persisted) pipeline output: counts, and when each window closed.

    In batch mode the records arrive in input order (``seq``), and the watermark each one sees is
    the latest event time of the valid records before it minus the allowed lateness (Spark
    ignores ``withWatermark`` in batch queries, so the rule is applied here). A record is late when
    its window ended at or before that watermark, i.e. when an earlier record's event time was at
    least the window's end plus the allowed lateness. So window ``k`` closes at the first record
    (lowest ``seq``) in any window ``j >= k + _CLOSE_GAP``: per window, the first record is one
    ``min(seq)`` (and ``min_by(ts, seq)``), and a suffix minimum over the (few thousand) windows, here in the
    driver, gives every window's closer. No per-record pass in Python, no ordering or partitioning
    needed. On the executors placement this job is the one that runs the pipeline (it fills the
    cache)."""
    from pyspark.sql import functions as F

    rows = (
        events.groupBy(F.floor(F.col("ts") / WINDOW_SECONDS).alias("k"))
        # min and min_by keep a hash aggregate (a min over a struct would sort every row)
        .agg(F.count("*").alias("n"), F.count("reason").alias("bad"), F.min("seq").alias("seq"), F.min_by("ts", "seq").alias("ts"))
        .collect()
    )
    counts = _Counts(records_in=sum(r.n for r in rows), bad=sum(r.bad for r in rows))
    firsts = sorted((r.k, r.seq, r.ts) for r in rows if r.k is not None)
    counts.max_ts = max((ts for _k, _seq, ts in firsts), default=-math.inf)
    closers: list[_Closer] = []
    best: tuple[int, float] | None = None  # the earliest first record of the windows >= j
    j = len(firsts)
    for k, _seq, _ts in reversed(firsts):
        while j > 0 and firsts[j - 1][0] >= k + _CLOSE_GAP:
            j -= 1
            if best is None or firsts[j][1] < best[0]:
                best = (firsts[j][1], firsts[j][2])
        if best is not None:
            closers.append(_Closer(k, best[0], best[1]))
    return counts, closers


def _land_batch(spark: Any, events: Any, closers: list[_Closer], paths: _Paths, in_input_order: bool) -> None:
    """Spark's part of the batch mode, over the (persisted) pipeline output: the late records
    (a broadcast join with when each window closed), Spark's ``groupBy(window(...))`` of the others
    into ``windows/``, bad and late records into ``dead_letters/`` in input order (sorted, unless
    ``in_input_order``: partitions that are consecutive slices of the input, each in order, as
    ``run_on_spark`` over Spark's readers or ``spark.range`` gives them)."""
    from pyspark.sql import functions as F

    closed = spark.createDataFrame([(c.k, c.seq, c.ts) for c in closers], "k BIGINT, closed_at BIGINT, closed_by DOUBLE")
    valid = F.col("reason").isNull()
    flagged = (
        events.withColumn("k", F.floor(F.col("ts") / WINDOW_SECONDS))
        .join(F.broadcast(closed), "k", "left")
        .withColumn("late", valid & F.coalesce(F.col("seq") > F.col("closed_at"), F.lit(False)))
    )
    on_time = flagged.where(valid & ~F.col("late")).withColumn("event_time", F.timestamp_seconds("ts"))
    _window_rows(on_time).write.mode("overwrite").parquet(paths.windows)
    late_reason = F.format_string(
        "late event: its window [%d, %d) had closed: the watermark passed its end when the record at event time "
        f"%.3f arrived (that time minus the allowed lateness of {ALLOWED_LATENESS_SECONDS} s)",
        F.col("k") * WINDOW_SECONDS,
        (F.col("k") + 1) * WINDOW_SECONDS,
        F.col("closed_by"),
    )
    dead = flagged.where(~valid | F.col("late")).select(
        "seq", F.when(valid, _late_dead_letter(late_reason)).otherwise(F.col("dead_letter")).alias("value")
    )
    if not in_input_order:  # the driver placement's landed files come back in no particular order
        dead = dead.orderBy("seq")  # a sort of ~1% of the records
    dead.select("value").write.mode("overwrite").text(paths.dead_letters)


def _split_local(spark: Any, paths: _Paths) -> None:
    """The local placement's landed rows (:data:`LOCAL_COLUMNS`) into ``windows/`` and
    ``dead_letters/`` (in input order: the landed files come back in no particular order)."""
    from pyspark.sql import functions as F

    landed = spark.read.schema(LOCAL_DDL).parquet(paths.events)
    landed.where(F.col("seq").isNull()).select("window_start", "country", "kind", "events", "amount").write.mode(
        "overwrite"
    ).parquet(paths.windows)
    landed.where(F.col("seq").isNotNull()).orderBy("seq").select(F.col("dead_letter").alias("value")).write.mode(
        "overwrite"
    ).text(paths.dead_letters)


def _read_back(spark: Any, paths: _Paths) -> tuple[int, int, int]:
    """(window rows, events in them, dead letters) as Spark reads the output back."""
    from pyspark.sql import functions as F

    w = spark.read.schema(WINDOW_DDL).parquet(paths.windows).agg(F.count("*").alias("n"), F.sum("events").alias("e")).first()
    dead = 0
    if os.path.isdir(paths.dead_letters):
        dead = spark.read.option("recursiveFileLookup", "true").text(paths.dead_letters).count()
    return int(w.n), int(w.e or 0), int(dead)


# -- process figures --------------------------------------------------------------------------------


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _proc_peak_rss_mb(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024.0, 1)
    except OSError:
        return None
    return None


def _driver_jvm_pid(spark: Any) -> int | None:
    from .spark._jvm import driver_jvm_process

    proc = driver_jvm_process(spark)
    pid = getattr(proc, "pid", None)
    return pid if isinstance(pid, int) else None


def _log4j_conf() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "demo_log4j2.properties")


def _session(master: str | None, board: Any) -> tuple[Any, bool, float]:
    """The SparkSession (a running one is reused as is; else one started with the demo's log
    settings); whether this run started it; seconds it took."""
    from . import spark as rspark
    from .spark._session import _require_pyspark, _running_session

    running = _running_session(_require_pyspark())
    t = time.monotonic()
    if running is not None:
        board.say(f"using the running Spark session ({running.sparkContext.master})")
        return rspark.session(master, app_name="rstreams-demo"), False, 0.0
    shown = master or os.environ.get("SPARK_MASTER") or "local[*]"
    board.say(f"starting Spark ({shown})...")
    log = f"-Dlog4j2.configurationFile=file:{_log4j_conf()}"
    s = rspark.session(
        master,
        app_name="rstreams-demo",
        spark_driver_extraJavaOptions=log,  # executors log to their own files (a cluster's worker dirs)
        spark_sql_streaming_stopTimeout="60s",
    )
    dt = time.monotonic() - t
    board.say(f"Spark ready in {dt:.1f} s ({s.sparkContext.master}, default parallelism {s.sparkContext.defaultParallelism})")
    return s, True, dt


def _stop_session(s: Any) -> None:
    """Stop a session this run started, executors first (an application that ends while its
    executors are being killed makes a local-cluster master log failures)."""
    try:
        s.stop()
    except Exception:  # pragma: no cover - stopping is best effort at the end of a run
        pass


# -- the run ------------------------------------------------------------------------------------------


def run(
    rows: int | None = None,
    out: str = "out/demo",
    master: str | None = None,
    input_path: str | None = None,
    quiet: bool = False,
    *,
    placement: str = "executors",
    streaming: bool = False,
    batch_rows: int = _DEFAULT_BATCH_ROWS,
    partitions: int | None = None,
    stop_spark: bool | None = None,
) -> dict[str, Any]:
    """Run the demo; return the summary figures.

    ``rows`` synthetic events (default 500,000; 100,000 with ``streaming``), or the records of
    ``input_path`` (.csv, .jsonl or .parquet; with ``streaming`` also a directory of such files).
    ``placement``: ``"executors"`` runs :func:`pipeline` on every partition with ``run_on_spark``;
    ``"driver"`` runs it in this process and lands its output with ``to_spark`` (then the same Spark
    stages); ``"local"`` runs the whole job in this process (``pipeline``, then ``local_job``: the
    ``tumbling_window`` operator and the dead letters) and lands its output with ``to_spark``. ``streaming``:
    Structured Streaming, ``batch_rows`` synthetic records per micro-batch. ``partitions``: of the
    synthetic input (default 4 per core). ``master``: None uses the active SparkSession if there is
    one, else ``$SPARK_MASTER`` or ``local[*]``. ``stop_spark``: stop the session at the end
    (default: only a session this run started, after its last job, executors first).
    Raises :class:`DemoError` for a bad ``input_path``, ``out`` or ``rows`` before Spark starts,
    and RuntimeError if the counts do not add up (records in = valid + bad, valid = on time +
    late, dead letters = bad + late, events in the landed windows = on time).

    Example::

        s = run(rows=100_000, out="/tmp/demo", quiet=True)
        s["records_in"], s["dead_lettered"], s["windows_landed"], s["pipeline_python_pids"]

    Backpressure: on the executors each task's pipeline is pulled by Spark (a task holds a few
    thousand records, whatever its partition's size); in the driver, ``to_spark`` requests records
    only as it commits them; in streaming mode the source's admission control bounds each
    micro-batch (``batch_rows``, one file) and the windows reach the driver through ``from_stream``,
    whose batch function waits for the landing's demand, so Spark's trigger loop waits with it.
    """
    from .spark._progress import StatusBoard

    if placement not in ("executors", "driver", "local"):
        raise DemoError(f"--pipeline must be 'executors', 'driver' or 'local', got {placement!r}")
    if placement == "local" and streaming:
        raise DemoError("--pipeline local runs the batch mode only (its windows are the tumbling_window operator's)")
    if rows is None:
        rows = _DEFAULT_STREAM_ROWS if streaming else _DEFAULT_ROWS
    if input_path is None and (isinstance(rows, bool) or not isinstance(rows, int) or rows < 0):
        raise DemoError(f"--rows must be a non-negative integer, got {rows!r}")
    if isinstance(batch_rows, bool) or not isinstance(batch_rows, int) or batch_rows <= 0:
        raise DemoError(f"--batch-rows must be a positive integer, got {batch_rows!r}")
    fmt = ""
    if input_path is not None:
        if streaming:
            fmt = _stream_input(input_path)[0]
        else:
            fmt = input_format(input_path)
            _check_text_input(input_path, fmt)
    paths = _prepare_out(os.path.abspath(out))
    board = StatusBoard("rstreams demo", enabled=not quiet)
    t_start = time.monotonic()
    s, owned, spark_seconds = _session(master, board)
    try:
        parts = partitions or max(2, 4 * s.sparkContext.defaultParallelism)
        if streaming:
            summary = _run_streaming(s, paths, input_path, rows, batch_rows, placement, parts, board)
        else:
            summary = _run_batch(s, paths, input_path, fmt, rows, placement, parts, board)
        summary["spark_start_seconds"] = round(spark_seconds, 2)
        summary["total_seconds"] = round(time.monotonic() - t_start, 2)
        summary["peak_driver_rss_mb"] = round(_peak_rss_mb(), 1)
        summary["peak_driver_jvm_rss_mb"] = _proc_peak_rss_mb(summary.get("driver_jvm_pid"))
        summary["output"] = paths.out
        return summary
    finally:
        if owned if stop_spark is None else stop_spark:
            board.say("stopping Spark")
            _stop_session(s)


def _where(spark: Any, placement: str, pids: frozenset[tuple[int, int | None]]) -> dict[str, Any]:
    jvm = _driver_jvm_pid(spark)
    sc = spark.sparkContext
    executors: int | str | None
    if sc.master.startswith("local[") or sc.master == "local":
        executors = "none: local mode, the driver JVM runs the tasks"
    else:
        try:
            executors = sc._jsc.sc().getExecutorMemoryStatus().size() - 1  # less the driver's block manager
        except Exception:
            executors = None
    return {
        "mode": "",
        "placement": placement,
        "master": sc.master,
        "driver_pid": os.getpid(),
        "driver_jvm_pid": jvm,
        "executors": executors,
        "pipeline_python_pids": sorted({p for p, _ in pids}),
        "pipeline_jvm_pids": sorted({j for _, j in pids if j is not None}),
    }


def _run_batch(
    s: Any, paths: _Paths, input_path: str | None, fmt: str, rows: int, placement: str, parts: int, board: Any
) -> dict[str, Any]:
    from pyspark import StorageLevel

    from . import spark as rspark

    sc = s.sparkContext
    group = f"rstreams-demo-{os.getpid()}-{time.monotonic_ns()}"
    sc.setJobGroup(group, "rstreams demo", interruptOnCancel=True)
    pids: frozenset[tuple[int, int | None]] = frozenset()
    events: Any = None
    try:
        if placement == "executors":
            acc = sc.accumulator((0, frozenset()), _TaskStats())
            src, synthetic = _source_df(s, input_path, fmt, rows, parts)
            events = rspark.run_on_spark(src, _OnExecutors(synthetic, acc), schema=EVENT_DDL).persist(StorageLevel.MEMORY_AND_DISK)
            phase = board.phase("pipeline on the executors (run_on_spark)")
            with _JobWatch(s, phase, group, lambda: int(acc.value[0])):
                t = time.monotonic()
                counts, closers = _batch_events_stats(events)
                pipeline_seconds = time.monotonic() - t
            phase.update(records=counts.records_in)
            phase.finish()
            pids = acc.value[1]
        else:
            counter = _Counter(None)
            records: Iterator[tuple[int, Any]]
            if input_path is None:
                records = ((i, synthetic_event(i)) for i in range(rows))
            else:
                records = enumerate(_records(input_path, fmt))
            rows_here = pipeline(Flowable.from_iterable(records).map(counter))
            if placement == "driver":
                landed, schema, what = rows_here, _event_arrow_schema(), "pipeline in the driver, landed with to_spark"
            else:
                landed, schema = local_job(rows_here.map(counter.tally)), _local_arrow_schema()
                what = "pipeline and event-time windows in this process, landed with to_spark"
            phase = board.phase(what)
            with _JobWatch(s, phase, group, lambda: counter.n):
                t = time.monotonic()
                rspark.to_spark(landed, path=paths.events, schema=schema, spark=s, progress=False)
                pipeline_seconds = time.monotonic() - t
            phase.finish()
            pids = frozenset([(os.getpid(), _driver_jvm_pid(s))])
            if placement == "driver":
                events = s.read.schema(EVENT_DDL).parquet(paths.events).persist(StorageLevel.MEMORY_AND_DISK)
                counts, closers = _batch_events_stats(events)
            else:
                counts = _Counts(records_in=counter.n, bad=counter.bad)
        if placement != "local":
            phase = board.phase("watermark, Spark's windows and dead letters", records=False)
            with _JobWatch(s, phase, group, lambda: counts.records_in):
                _land_batch(s, events, closers, paths, in_input_order=placement == "executors")
                windows, in_windows, dead = _read_back(s, paths)
        else:
            phase = board.phase("windows and dead letters out of the landed rows", records=False)
            with _JobWatch(s, phase, group, lambda: counts.records_in):
                _split_local(s, paths)
                windows, in_windows, dead = _read_back(s, paths)
        phase.finish(note=f"{windows:,} windows, {dead:,} dead letters")
    finally:
        if events is not None:
            events.unpersist()  # the cache of a run that failed half-way too
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)
    counts.late = dead - counts.bad
    summary = _where(s, placement, pids)
    summary["mode"] = "batch"
    summary.update(_figures(counts, windows, in_windows, dead, pipeline_seconds))
    return summary


def _figures(counts: _Counts, windows: int, in_windows: int, dead: int, pipeline_seconds: float) -> dict[str, Any]:
    valid = counts.records_in - counts.bad
    figures = {
        "records_in": counts.records_in,
        "valid": valid,
        "bad": counts.bad,
        "late": counts.late,
        "dead_lettered": dead,
        "windows_landed": windows,
        "events_in_windows": in_windows,
        "pipeline_seconds": round(pipeline_seconds, 2),
        "records_per_second": round(counts.records_in / max(pipeline_seconds, 1e-9)),
    }
    if valid != in_windows + counts.late or dead != counts.bad + counts.late or counts.late < 0:
        raise RuntimeError(f"demo: the counts do not add up: {figures}")
    return figures


# -- streaming ----------------------------------------------------------------------------------------


def _run_streaming(
    s: Any, paths: _Paths, input_path: str | None, rows: int, batch_rows: int, placement: str, parts: int, board: Any
) -> dict[str, Any]:
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    from . import spark as rspark
    from .processors import PublishProcessor

    sc = s.sparkContext
    acc = sc.accumulator((0, frozenset()), _TaskStats())
    src, synthetic = _stream_source(s, input_path, batch_rows, min(parts, max(2, sc.defaultParallelism)))
    staged = os.path.join(paths.stream, "events")
    os.makedirs(staged, exist_ok=True)
    if placement == "executors":
        events_stream = rspark.run_on_spark(src, _OnExecutors(synthetic, acc), schema=EVENT_DDL)
    else:
        events_stream = src
    totals = _Counts()
    state = {"batches": 0, "pipeline_seconds": 0.0, "max_ts": -math.inf}
    done = threading.Event()
    failure: list[BaseException] = []
    stop_windows = PublishProcessor[bool]()
    driver_pids: set[tuple[int, int | None]] = set()

    def driver_events(batch_df: Any, batch_id: int) -> Any:
        counter = _Counter(None)
        records = rspark.from_dataframe(batch_df, as_="rows")
        if synthetic:
            records = records.map(_synthetic_record)
        landed = os.path.join(paths.events, f"batch-{batch_id:06d}")
        rspark.to_spark(pipeline(records.map(counter)), path=landed, schema=_event_arrow_schema(), spark=s, progress=False)
        driver_pids.add((os.getpid(), _driver_jvm_pid(s)))
        return s.read.schema(EVENT_DDL).parquet(landed)

    def route(batch_df: Any, batch_id: int) -> None:
        # runs on the driver, on Spark's micro-batch thread: it only plans Spark jobs (the records
        # stay on the executors); a micro-batch past the bounded input ends the events query
        if synthetic and batch_id * batch_rows >= rows:
            done.set()
            return
        t = time.monotonic()
        if synthetic:
            batch_df = batch_df.where(F.col("seq") < rows)
        events = driver_events(batch_df, batch_id) if placement == "driver" else batch_df
        events = events.persist(StorageLevel.MEMORY_AND_DISK)
        watermark = state["max_ts"] - ALLOWED_LATENESS_SECONDS  # Spark's rule: earlier micro-batches only
        valid = F.col("reason").isNull()
        window_end = (F.floor(F.col("ts") / WINDOW_SECONDS) + 1) * WINDOW_SECONDS
        is_late = valid & (window_end <= F.lit(watermark)) if math.isfinite(watermark) else F.lit(False)
        r = events.agg(
            F.count("*").alias("n"),
            F.count("reason").alias("bad"),
            F.count(F.when(is_late, 1)).alias("late"),
            F.max(F.when(valid, F.col("ts"))).alias("max_ts"),
        ).first()
        state["pipeline_seconds"] += time.monotonic() - t
        name = f"batch-{batch_id:06d}"
        if r.bad + r.late:
            bad = events.where(~valid).select(F.col("dead_letter").alias("value"))
            late = events.where(is_late).select(_late_dead_letter(_stream_late_reason(watermark)).alias("value"))
            bad.unionByName(late).coalesce(1).write.mode("overwrite").text(os.path.join(paths.dead_letters, name))
        if r.n - r.bad - r.late:
            on_time = events.where(valid & ~is_late).select("ts", "country", "kind", "amount")
            on_time.coalesce(1).write.mode("overwrite").parquet(os.path.join(staged, name))
        events.unpersist()
        totals.records_in += r.n
        totals.bad += r.bad
        totals.late += r.late
        if r.max_ts is not None:
            state["max_ts"] = max(state["max_ts"], r.max_ts)
        state["batches"] += 1

    query = (
        events_stream.writeStream.foreachBatch(route)
        .option("checkpointLocation", os.path.join(paths.stream, "checkpoints", "events"))
        .queryName("rstreams-demo-events")
    )
    if not synthetic:
        query = query.trigger(availableNow=True)

    # the windows query: Spark's watermark and windows over the staged on-time events; one staged
    # file (one events micro-batch) per trigger, so it never sees a row the events query let pass
    # as late
    staged_stream = (
        s.readStream.schema("ts DOUBLE, country STRING, kind STRING, amount DOUBLE")
        .option("maxFilesPerTrigger", 1)
        .parquet(os.path.join(staged, "batch-*"))
        .withColumn("event_time", F.timestamp_seconds("ts"))
        .withWatermark("event_time", f"{ALLOWED_LATENESS_SECONDS} seconds")
    )
    windows_stream = _window_rows(staged_stream)
    landed = {"rows": 0}

    def count_window(row: Any) -> Any:
        landed["rows"] += 1
        return row

    windows_flowable = (
        rspark.from_stream(windows_stream, as_="rows")
        .take_while(lambda r: r[2] != END_OF_INPUT)
        .take_until(stop_windows)
        .map(count_window)
    )
    windows_finished = threading.Event()

    def end_of_input(q: Any) -> None:
        try:
            if synthetic:
                while not done.wait(0.2):
                    if not q.isActive:
                        break
                q.stop()
            else:
                q.awaitTermination()
            err = q.exception()
            if err is not None:
                raise RuntimeError(f"demo: the events query failed: {err}")
            # a final watermark closes every window: two rows far past the input (the second one
            # moves the watermark past the first one's window, whose row then says "done")
            last = state["max_ts"] if math.isfinite(state["max_ts"]) else float(T0)
            for k, ts in enumerate((last + 1000.0, last + 2000.0 + 2 * ALLOWED_LATENESS_SECONDS)):
                marker = s.createDataFrame([(ts, END_OF_INPUT, END_OF_INPUT, 0.0)], "ts DOUBLE, country STRING, kind STRING, amount DOUBLE")
                marker.coalesce(1).write.mode("overwrite").parquet(os.path.join(staged, f"batch-end-{k}"))
            if not windows_finished.wait(300):
                raise RuntimeError("demo: the windows query did not reach the end of the input in 300 s")
        except BaseException as e:
            failure.append(e)
            stop_windows.on_next(True)

    phase = board.phase("streaming: events query on the executors, windows through from_stream -> to_spark"
                        if placement == "executors" else "streaming: pipeline in the driver per micro-batch, windows -> to_spark")
    stop_watch = threading.Event()

    def watch() -> None:
        while not stop_watch.wait(0.25):
            phase.update(records=totals.records_in, batches=state["batches"],
                         note=f"{totals.bad + totals.late:,} dead-lettered  {landed['rows']:,} windows landed")

    watcher = threading.Thread(target=watch, name="rstreams-demo-watch", daemon=True)
    q = query.start()
    finisher = threading.Thread(target=end_of_input, args=(q,), name="rstreams-demo-end-of-input", daemon=True)
    finisher.start()
    watcher.start()
    try:
        result = rspark.to_spark(
            windows_flowable.do_on_terminate(windows_finished.set),
            path=paths.windows,
            name="demo-windows",
            schema=_window_arrow_schema(),
            spark=s,
            batch_rows=5_000,
            max_batch_seconds=1.0,
            progress=False,
        )
    finally:
        windows_finished.set()
        if q.isActive:
            q.stop()
        finisher.join(60)
        stop_watch.set()
        watcher.join()
    phase.update(records=totals.records_in, batches=state["batches"],
                 note=f"{totals.bad + totals.late:,} dead-lettered  {landed['rows']:,} windows landed")
    phase.finish()
    if failure:
        raise failure[0]
    windows, in_windows, dead = _read_back(s, paths)
    summary = _where(s, placement, acc.value[1] if placement == "executors" else frozenset(driver_pids))
    summary["mode"] = "streaming"
    summary["micro_batches"] = state["batches"]
    summary["window_commits"] = result.batches
    summary.update(_figures(totals, windows, in_windows, dead, state["pipeline_seconds"]))
    return summary


# -- the command line ---------------------------------------------------------------------------------


def _print_summary(summary: dict[str, Any]) -> None:
    where = summary.get("pipeline_python_pids") or []
    jvms = summary.get("pipeline_jvm_pids") or []
    lines: list[tuple[str, str]] = [
        ("mode", f"{summary['mode']}, " + {"executors": "pipeline on the executors", "driver": "pipeline in the driver",
                                            "local": "whole job in the driver (rstreams windows)"}[summary["placement"]]),
        ("master", str(summary["master"])),
        ("driver", f"python pid {summary['driver_pid']}, JVM pid {summary['driver_jvm_pid']}"),
        ("pipeline ran in", f"{len(where)} Python process(es) {where}, JVM(s) {jvms}"),
        ("executors", str(summary["executors"])),
    ]
    if "micro_batches" in summary:
        lines.append(("micro-batches", f"{summary['micro_batches']:,} (windows landed in {summary['window_commits']} commits)"))
    lines += [
        ("records in", f"{summary['records_in']:,}"),
        ("valid", f"{summary['valid']:,}"),
        ("dead-lettered", f"{summary['dead_lettered']:,} ({summary['bad']:,} bad, {summary['late']:,} late)"),
        ("late", f"{summary['late']:,}"),
        ("pipeline stage", f"{summary['pipeline_seconds']} s, {summary['records_per_second']:,} records/s"),
        ("windows landed", f"{summary['windows_landed']:,} ({summary['events_in_windows']:,} events)"),
        ("peak driver RSS", f"Python {summary['peak_driver_rss_mb']} MB, JVM {summary['peak_driver_jvm_rss_mb']} MB"),
        ("spark start", f"{summary['spark_start_seconds']} s"),
        ("total", f"{summary['total_seconds']} s"),
        ("output", str(summary["output"])),
    ]
    width = max(len(k) for k, _ in lines)
    print("\nrstreams demo: summary")
    print("-" * 72)
    for k, v in lines:
        print(f"{k:<{width}}  {v}")
    print("-" * 72)


def _positive_int(text: str) -> int:
    n = _non_negative_int(text)
    if n == 0:
        raise argparse.ArgumentTypeError("must be > 0")
    return n


def _non_negative_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {n}")
    return n


def build_parser() -> argparse.ArgumentParser:
    """The ``rstreams demo`` command line."""
    p = argparse.ArgumentParser(prog="rstreams demo", description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--rows", type=_non_negative_int,
                   help=f"synthetic events to generate (default {_DEFAULT_ROWS}; {_DEFAULT_STREAM_ROWS} with --streaming; not with --input)")
    p.add_argument("--input", help="read records from a .csv, .jsonl (.json, .ndjson) or .parquet file instead"
                                   " (--streaming: also a directory of such files, one micro-batch each)")
    p.add_argument("--master", help="Spark master URL, e.g. local[4], local-cluster[2,1,1024] or spark://host:7077"
                                    " (default: the active session, else $SPARK_MASTER or local[*])")
    p.add_argument("--pipeline", choices=("executors", "driver", "local"), default="executors",
                   help="where the per-record pipeline runs: on the executors (run_on_spark, the default),"
                        " or in this process (to_spark) followed by the same Spark stages, for comparison;"
                        " local: the whole job in this process, windows by the tumbling_window operator")
    p.add_argument("--streaming", action="store_true",
                   help="Structured Streaming (rate-micro-batch or a file source) with Spark's watermark, for a bounded number of micro-batches")
    p.add_argument("--batch-rows", type=_positive_int, default=_DEFAULT_BATCH_ROWS,
                   help=f"--streaming: synthetic records per micro-batch (default {_DEFAULT_BATCH_ROWS})")
    p.add_argument("--out", default="out/demo", help="output directory (default out/demo); a re-run replaces its previous output")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    return p


def main(argv: list[str] | None = None) -> int:
    """``rstreams demo``: run the main job and print its summary.

    Returns 0 on success, 2 on a usage error (said in one line on stderr), 130 when interrupted."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.rows is not None and args.input is not None:
        parser.error("--rows and --input exclude each other: --input reads all the records of the file")
    from .spark import SparkUnavailableError

    try:
        summary = run(
            args.rows, args.out, args.master, args.input, args.quiet,
            placement=args.pipeline, streaming=args.streaming, batch_rows=args.batch_rows,
        )
    except (SparkUnavailableError, DemoError) as e:
        print(f"rstreams demo: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\nrstreams demo: interrupted; the output in {os.path.abspath(args.out)} is incomplete"
              " (a re-run replaces it)", file=sys.stderr)
        return 130
    _print_summary(summary)
    return 0

