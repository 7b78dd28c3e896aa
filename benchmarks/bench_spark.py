"""9. Spark source and sink: rstreams.spark against Spark's own read/write (long, double, string rows).

Excluded from ``--quick`` unless ``--only spark`` is given. Without pyspark every variant is
``n/a (pyspark not installed)`` at once (nothing starts); with pyspark but without ``rstreams.spark``
the Spark baselines run and the rstreams variants are ``n/a (rstreams.spark missing)``.

The Arrow-source pair runs in subprocesses (one per run) so the peak RSS of the driver's Python
process can be compared; each starts its own SparkSession, which is not timed. The data is written
once as Parquet under the temp dir (``rstreams-bench-spark-<N>``) and re-used.

Uses ``rstreams.spark``: ``from_dataframe(df)`` (Arrow record batches), ``from_dataframe(df,
as_="rows")``, ``to_spark(publisher, path=..., spark=...)`` and ``run_on_spark(df, pipeline,
as_="rows", schema=...)``. Spark's start-up is slow on a loaded 2-core machine, so this benchmark
has a longer time limit.
"""

from __future__ import annotations

import operator
import os
import shutil
import sys
import tempfile
import uuid
from dataclasses import dataclass
from typing import Any

from benchmarks._common import flowable
from benchmarks._harness import Context, Target, Unavailable, benchmark

add = operator.add
BATCH_ROWS = 1_000_000


@dataclass
class SparkData:
    spark: Any
    path: str
    rows: int
    id_sum: int
    out_dir: str
    _table: Any = None

    @property
    def table(self) -> Any:
        """The same rows as a pyarrow.Table (read on first use), for the sinks."""
        if self._table is None:
            import pyarrow.parquet as pq  # type: ignore[import-untyped,unused-ignore]

            self._table = pq.read_table(self.path)
        return self._table


def f(x: int) -> int:
    return x * 3


def p(x: int) -> bool:
    return x % 2 == 0


def _session() -> Any:
    try:
        import pyarrow  # type: ignore[import-untyped,unused-ignore]  # noqa: F401
        from pyspark.sql import SparkSession
    except ImportError:
        raise Unavailable("pyspark not installed") from None
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (
        SparkSession.builder.master("local[*]")
        .appName("rstreams-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(BATCH_ROWS // (os.cpu_count() or 2)))
        .config("spark.sql.execution.arrow.localRelationThreshold", "0")
        # local mode: the driver JVM is also the executor; with Spark's default 1g, 1 M-row partition
        # results are lost from the block manager (TaskResultLost) - as rstreams.spark.session() does
        # 6g: the one-shot baselines (createDataFrame of the whole 10 M-row table, toLocalIterator
        # with prefetch) run a 2g driver out of heap; rstreams' variants do not need it
        .config("spark.driver.memory", "6g")
        # local mode: task results over 1 MB go through the block manager, where they can be lost
        # (TaskResultLost); in one JVM a direct result is just a message
        .config("spark.task.maxDirectResultSize", str(256 * 1024 * 1024))
        .config("spark.rpc.message.maxSize", "256")
        # ~1 M rows (about 16 MB of Parquet) per read partition, as the files were written: with
        # Spark's 128 MB default the 10 M rows are read as two 5 M-row partitions, and the
        # toLocalIterator baseline then runs the driver out of heap and hangs
        .config("spark.sql.files.maxPartitionBytes", str(16 * 1024 * 1024))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _setup(n: int, quick: bool) -> SparkData:
    spark = _session()
    path = os.path.join(tempfile.gettempdir(), f"rstreams-bench-spark-{n}")
    if not os.path.exists(os.path.join(path, "_SUCCESS")):
        (
            spark.range(0, n, numPartitions=max(2, n // 1_000_000))
            .selectExpr("id AS l", "CAST(id AS DOUBLE) * 0.5 AS d", "CAST(id AS STRING) AS s")
            .write.mode("overwrite")
            .parquet(path)
        )
    # Import now what the variants use, so an isolated run's RSS growth does not count imports.
    import pyarrow.compute  # type: ignore[import-untyped,unused-ignore]  # noqa: F401

    try:
        import rstreams.spark  # noqa: F401
        from rstreams import Flowable, schedulers  # noqa: F401
    except ImportError:
        pass
    out_dir = tempfile.mkdtemp(prefix="rstreams-bench-spark-out-")
    return SparkData(spark, path, n, n * (n - 1) // 2, out_dir)


def _teardown(data: SparkData) -> None:
    shutil.rmtree(data.out_dir, ignore_errors=True)
    data.spark.stop()


def _spark_api() -> Any:
    try:
        import rstreams.spark as rs
    except ImportError:
        raise Unavailable("rstreams.spark missing") from None
    return rs


def _d(ctx: Context) -> SparkData:
    data: SparkData = ctx.data
    return data


def _df(ctx: Context) -> Any:
    d = _d(ctx)
    return d.spark.read.parquet(d.path)


def _new_out(ctx: Context) -> str:
    return os.path.join(_d(ctx).out_dir, uuid.uuid4().hex)


def _rows_and_sum(ctx: Context) -> tuple[int, int]:
    d = _d(ctx)
    return d.rows, d.id_sum


def _rows(ctx: Context) -> int:
    return _d(ctx).rows


def _scale_sum(ctx: Context) -> int:
    return sum(filter(p, map(f, range(_d(ctx).rows))))


B = benchmark(
    "spark",
    "rstreams.spark source / sink / scale-out vs toArrow, toLocalIterator, createDataFrame+write, mapInArrow",
    n=10_000_000,
    quick_n=10_000,
    order=90,
    setup=_setup,
    teardown=_teardown,
    in_quick=False,
    child_warmup=0,
    scalable=False,
    timeout_s=900.0,
)


# -- source, Arrow batches (own process each: peak driver RSS) ----------------------------------------


def _batches_rows_and_sum(batches: Any) -> tuple[int, int]:
    import pyarrow.compute as pc  # type: ignore[import-untyped,unused-ignore]

    rows = total = 0
    for b in batches:
        rows += b.num_rows
        total += pc.sum(b.column(0)).as_py() or 0
    return rows, total


@B.variant("source: df.toArrow()", baseline=True, isolated=True, expect=_rows_and_sum)
def _to_arrow(ctx: Context) -> tuple[int, int]:
    return _batches_rows_and_sum(_df(ctx).toArrow().to_batches())


def _count_and_sum_in_worker(batches: Any) -> Any:
    import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]
    import pyarrow.compute as pc  # type: ignore[import-untyped,unused-ignore]

    for b in batches:
        yield pa.RecordBatch.from_pydict({"rows": [b.num_rows], "total": [pc.sum(b.column(0)).as_py() or 0]})


FLOOR = "source floor: df.mapInArrow(count and sum) (the Python-worker pass every bounded transport pays)"


@B.variant(FLOOR, isolated=True, expect=_rows_and_sum)
def _worker_floor(ctx: Context) -> tuple[int, int]:
    """What streaming a partition from its task costs at least: each row passes through a Python
    worker (Spark's row-to-Arrow conversion for it, the worker reading it); here the worker only
    counts and sums, and the driver collects one row per batch. toArrow() has no such pass (the
    JVM converts and ships whole partitions), which is why it cannot bound the driver's memory."""
    out = _df(ctx).mapInArrow(_count_and_sum_in_worker, "rows long, total long").groupBy().sum().collect()[0]
    return int(out[0] or 0), int(out[1] or 0)


@B.variant(
    "source: from_dataframe(df) Arrow batches",
    isolated=True,
    expect=_rows_and_sum,
    targets=[
        Target(">= 0.8x the worker-pass floor", min_ratio=0.8, against=FLOOR),
        Target("RSS <= 1/4 of toArrow's", max_rss_ratio=0.25),
    ],
)
def _from_dataframe_arrow(ctx: Context) -> tuple[int, int]:
    rs = _spark_api()
    return _batches_rows_and_sum(rs.from_dataframe(_df(ctx)).blocking_iterable())


@B.variant(
    "source: from_dataframe(df, max_bytes_in_flight=None) Arrow batches (whole partitions via the JVM)",
    isolated=True,
    expect=_rows_and_sum,
    targets=[Target(">= 0.8x", min_ratio=0.8)],
)
def _from_dataframe_arrow_jvm(ctx: Context) -> tuple[int, int]:
    rs = _spark_api()
    return _batches_rows_and_sum(rs.from_dataframe(_df(ctx), max_bytes_in_flight=None).blocking_iterable())


# -- source, rows -------------------------------------------------------------------------------------


@B.variant("source rows: toLocalIterator(prefetchPartitions=True)", baseline=True, expect=_rows_and_sum)
def _local_iterator(ctx: Context) -> tuple[int, int]:
    rows = total = 0
    for r in _df(ctx).toLocalIterator(prefetchPartitions=True):
        rows += 1
        total += r[0]
    return rows, total


@B.variant(
    "source rows: from_dataframe(df, as_='rows')",
    expect=_rows_and_sum,
    targets=[Target(">= 2x", min_ratio=2.0)],
)
def _from_dataframe_rows(ctx: Context) -> tuple[int, int]:
    rs = _spark_api()
    rows = total = 0
    for r in rs.from_dataframe(_df(ctx), as_="rows").blocking_iterable():
        rows += 1
        total += r[0]
    return rows, total


# -- sink ---------------------------------------------------------------------------------------------


@B.variant("sink: createDataFrame(arrow_table).write.parquet (one shot)", baseline=True, expect=_rows)
def _create_and_write(ctx: Context) -> int:
    d, out = _d(ctx), _new_out(ctx)
    d.spark.createDataFrame(d.table).write.parquet(out)
    n: int = d.spark.read.parquet(out).count()
    shutil.rmtree(out, ignore_errors=True)
    return n


@B.variant(
    "sink: Flowable of record batches -> to_spark(path, parquet)",
    expect=_rows,
    targets=[Target(">= 0.8x", min_ratio=0.8)],
)
def _to_spark(ctx: Context) -> int:
    rs, F = _spark_api(), flowable()
    d, out = _d(ctx), _new_out(ctx)
    batches = d.table.to_batches(max_chunksize=BATCH_ROWS)
    rs.to_spark(F.from_iterable(batches), path=out, format="parquet", spark=d.spark, progress=False)
    n: int = d.spark.read.parquet(out).count()
    shutil.rmtree(out, ignore_errors=True)
    return n


# -- scale-out: per-element map + filter on the executors ---------------------------------------------
# "A hand-written mapInArrow doing the same work": the same per-row functions on the same
# rows. A DataFrame row reaches a per-row function as a tuple, so the baseline turns each Arrow batch
# into row tuples, applies the row functions below and builds the output columns back, as
# run_on_spark(as_="rows") does. The former baseline (scalar column values through f and p, no row
# tuples: half the Python calls per row) stays as a peer for reference.


def row_map(r: tuple[int, ...]) -> tuple[int, ...]:
    return (f(r[0]),)


def row_filter(r: tuple[int, ...]) -> bool:
    return p(r[0])


def _map_filter_rows(it: Any) -> Any:
    import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]

    for b in it:
        rows = zip(*[c.to_pylist() for c in b.columns], strict=True)
        out = [y for y in map(row_map, rows) if row_filter(y)]
        cols = list(zip(*out, strict=True)) if out else [()]
        yield pa.RecordBatch.from_arrays([pa.array(cols[0], pa.int64())], names=["l"])


def _map_filter_scalars(it: Any) -> Any:
    import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]

    for b in it:
        ys = [y for y in map(f, b.column(0).to_pylist()) if p(y)]
        yield pa.RecordBatch.from_arrays([pa.array(ys, pa.int64())], names=["l"])


@B.variant("scale-out: hand-written mapInArrow, the same row functions", baseline=True, expect=_scale_sum)
def _map_in_arrow(ctx: Context) -> int:
    df = _df(ctx).select("l").mapInArrow(_map_filter_rows, "l long")
    return int(df.groupBy().sum("l").collect()[0][0] or 0)


@B.variant(
    "scale-out: run_on_spark(df, map(row_map).filter(row_filter)) on rows",
    expect=_scale_sum,
    targets=[Target(">= 0.8x", min_ratio=0.8)],
)
def _run_on_spark(ctx: Context) -> int:
    rs = _spark_api()

    def pipeline(fl: Any) -> Any:
        return fl.map(row_map).filter(row_filter)

    df = rs.run_on_spark(_df(ctx).select("l"), pipeline, as_="rows", schema="l long")
    return int(df.groupBy().sum("l").collect()[0][0] or 0)


@B.variant("scale-out peer: hand-written mapInArrow on scalar column values (no row tuples)", expect=_scale_sum)
def _map_in_arrow_scalars(ctx: Context) -> int:
    df = _df(ctx).select("l").mapInArrow(_map_filter_scalars, "l long")
    return int(df.groupBy().sum("l").collect()[0][0] or 0)


# -- source, one 1 GB partition: the driver JVM's heap stays bounded -----------------------------------
# The issue (#16): from_dataframe collected a whole partition in the driver JVM before its first row
# (+1.3 GB of heap for one 5 M-row partition). Here one partition of ~1 GiB of Arrow data (3.5 M rows
# of ~310 bytes: an id and a 300-character string, made by Spark, not read from the Parquet files)
# goes through from_dataframe; the growth of the driver JVM's old generation (where a collected
# partition lives: large arrays go there directly) is measured around it and printed above the table.
# The baseline is Spark computing the same partition with no transfer at all (the "noop" sink).

JVM_HEAP_TARGET_MB = 256


def _one_partition(ctx: Context) -> Any:
    return _d(ctx).spark.range(0, ctx.n, 1, 1).selectExpr("id", "concat(cast(id as string), repeat('x', 290)) AS s")


def _old_gen_pools(spark: Any) -> list[Any]:
    """The heap pools that are not the young generation's (G1 Old Gen, Tenured Gen, ...)."""
    mf = spark.sparkContext._jvm.java.lang.management.ManagementFactory
    pools = []
    for pool in mf.getMemoryPoolMXBeans():
        name = str(pool.getName())
        if str(pool.getType().toString()) == "Heap memory" and not any(w in name for w in ("Eden", "Survivor", "Nursery")):
            pools.append(pool)
    return pools


def _heap_growth_mb(spark: Any, run: Any) -> tuple[Any, float]:
    """``run()``'s result, and the peak growth of the driver JVM's old generation during it (MB):
    a full GC first, then the pools' own peak counters (exact, no sampling)."""
    spark.sparkContext._jvm.java.lang.System.gc()
    pools = _old_gen_pools(spark)
    base = 0
    for pool in pools:
        base += int(pool.getUsage().getUsed())
        pool.resetPeakUsage()
    result = run()
    peak = sum(int(pool.getPeakUsage().getUsed()) for pool in pools)
    return result, max(0, peak - base) / 2**20


def _one_partition_expect(ctx: Context) -> tuple[int, int, bool]:
    return ctx.n, ctx.n * (ctx.n - 1) // 2, True


@B.variant("one 1 GB partition: Spark computing it, write.format('noop') (no transfer)", baseline=True, scale=0.35)
def _one_partition_noop(ctx: Context) -> None:
    _one_partition(ctx).write.format("noop").mode("overwrite").save()


@B.variant(
    "one 1 GB partition: from_dataframe(df) Arrow batches",
    scale=0.35,
    expect=_one_partition_expect,
    targets=[Target(f"driver JVM heap +< {JVM_HEAP_TARGET_MB} MB (result check; figure printed above)")],
)
def _one_partition_from_dataframe(ctx: Context) -> tuple[int, int, bool]:
    rs = _spark_api()
    spark = _d(ctx).spark
    (rows, total), growth = _heap_growth_mb(spark, lambda: _batches_rows_and_sum(rs.from_dataframe(_one_partition(ctx)).blocking_iterable()))
    ok = growth < JVM_HEAP_TARGET_MB
    print(
        f"   one {ctx.n:,}-row partition through from_dataframe: driver JVM old generation +{growth:.0f} MB "
        f"(target < {JVM_HEAP_TARGET_MB} MB: {'ok' if ok else 'MISSED'})",
        flush=True,
    )
    return rows, total, ok
