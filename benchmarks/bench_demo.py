"""10. The main job (``rstreams demo``, batch mode) on ``local[2]``: where the per-record pipeline runs.

Three ways to run the same job over N synthetic events made from ``spark.range`` (parse and
validate, enrich with async lookups in batches of 1000, 8 in flight; then Spark's watermark,
windows and dead letters, written as Parquet and JSON lines):

* baseline: a hand-written plain PySpark job, the same per-record Python logic in
  ``mapInPandas`` (pandas frames in, ``asyncio`` for the lookups with a semaphore of 8), then the
  demo's own Spark stages;
* ``rstreams demo --pipeline driver``: the pipeline in this process, landed with ``to_spark``,
  then the same Spark stages;
* ``rstreams demo --pipeline local`` (informational): the whole job in this process (the
  pipeline, then the ``tumbling_window`` operator and the dead letters), landed with ``to_spark``;
* ``rstreams demo`` (``--pipeline executors``): ``pipeline`` on every partition with
  ``run_on_spark``.

Each run is the whole job on a running session (its start is not timed); items/s is records in
over its wall time. Every run's counts are checked against a model computed here (records, bad,
late, events in windows). Excluded from ``--quick`` unless ``--only demo``.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import tempfile
import uuid
from dataclasses import dataclass
from typing import Any

from benchmarks._harness import Context, Target, Unavailable, benchmark

PARTITIONS = 8  # the demo's default on 2 cores: 4 per core


@dataclass
class DemoData:
    spark: Any
    out_dir: str
    expected: tuple[int, int, int, int]


def _model(n: int) -> tuple[int, int, int, int]:
    """(records, bad, late, events in windows) of n synthetic events, computed here: the
    watermark is the latest earlier event time minus the allowed lateness."""
    from rstreams.demo_pipeline import ALLOWED_LATENESS_SECONDS, WINDOW_SECONDS, synthetic_event

    bad = late = 0
    latest = -math.inf
    for i in range(n):
        try:
            ev = json.loads(synthetic_event(i))
        except ValueError:
            bad += 1
            continue
        if "user" not in ev or ev["amount"] < 0:
            bad += 1
            continue
        ts = float(ev["ts"])
        if (math.floor(ts / WINDOW_SECONDS) + 1) * WINDOW_SECONDS <= latest - ALLOWED_LATENESS_SECONDS:
            late += 1
        latest = max(latest, ts)
    return n, bad, late, n - bad - late


def _setup(n: int, quick: bool) -> DemoData:
    try:
        import pyarrow  # type: ignore[import-untyped,unused-ignore]  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError:
        raise Unavailable("pyspark not installed") from None
    from rstreams import demo
    from rstreams.spark import session

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    log = f"-Dlog4j2.configurationFile=file:{demo._log4j_conf()}"
    spark = session("local[2]", app_name="rstreams-bench-demo", spark_driver_extraJavaOptions=log)
    return DemoData(spark, tempfile.mkdtemp(prefix="rstreams-bench-demo-"), _model(n))


def _teardown(data: DemoData) -> None:
    shutil.rmtree(data.out_dir, ignore_errors=True)
    data.spark.stop()


def _d(ctx: Context) -> DemoData:
    data: DemoData = ctx.data
    return data


def _out(ctx: Context) -> str:
    return os.path.join(_d(ctx).out_dir, uuid.uuid4().hex)


def _expected(ctx: Context) -> tuple[int, int, int, int]:
    return _d(ctx).expected


def _figures(s: dict[str, Any]) -> tuple[int, int, int, int]:
    return s["records_in"], s["bad"], s["late"], s["events_in_windows"]


B = benchmark(
    "demo",
    "rstreams demo (batch): pipeline on the executors vs in the driver vs plain PySpark mapInPandas",
    n=500_000,
    quick_n=5_000,
    order=95,
    setup=_setup,
    teardown=_teardown,
    expect=_expected,
    in_quick=False,
    scalable=False,
    timeout_s=1800.0,
)


# -- the hand-written plain PySpark job ----------------------------------------------------------------


def _pandas_pipeline(frames: Any) -> Any:
    """What a PySpark user writes for the same per-record work: for each pandas frame of ids,
    make the events, parse and validate them, then enrich the valid ones with the async lookup in
    batches of 1000, at most 8 lookups at once (an asyncio loop per task)."""
    import asyncio

    import pandas as pd  # type: ignore[import-untyped,unused-ignore]

    from rstreams.demo_pipeline import (
        ENRICH_BATCH,
        ENRICH_CONCURRENCY,
        EVENT_COLUMNS,
        enrich,
        parse_record,
        synthetic_event,
    )

    loop = asyncio.new_event_loop()

    async def enrich_all(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        sem = asyncio.Semaphore(ENRICH_CONCURRENCY)

        async def one(chunk: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
            async with sem:
                return await enrich(chunk)

        chunks = [rows[k : k + ENRICH_BATCH] for k in range(0, len(rows), ENRICH_BATCH)]
        done = await asyncio.gather(*(one(c) for c in chunks))
        return [r for c in done for r in c]

    try:
        for pdf in frames:
            rows = [parse_record((i, synthetic_event(i))) for i in pdf["id"].tolist()]
            rows = loop.run_until_complete(enrich_all(rows))
            yield pd.DataFrame.from_records(rows, columns=list(EVENT_COLUMNS))
    finally:
        loop.close()


@B.variant("plain PySpark job: the same per-record logic in mapInPandas", baseline=True)
def _plain_pyspark(ctx: Context) -> tuple[int, int, int, int]:
    from pyspark import StorageLevel

    from rstreams import demo
    from rstreams.demo_pipeline import EVENT_DDL

    d = _d(ctx)
    paths = demo._prepare_out(_out(ctx))
    events = d.spark.range(0, ctx.n, numPartitions=PARTITIONS).mapInPandas(_pandas_pipeline, EVENT_DDL)
    events = events.persist(StorageLevel.MEMORY_AND_DISK)
    counts, closers = demo._batch_events_stats(events)
    demo._land_batch(d.spark, events, closers, paths, in_input_order=True)
    _windows, in_windows, dead = demo._read_back(d.spark, paths)
    events.unpersist()
    shutil.rmtree(paths.out, ignore_errors=True)
    return counts.records_in, counts.bad, dead - counts.bad, in_windows


@B.variant("rstreams demo --pipeline driver (pipeline in this process, to_spark)")
def _driver(ctx: Context) -> tuple[int, int, int, int]:
    from rstreams import demo

    out = _out(ctx)
    s = demo.run(ctx.n, out, quiet=True, placement="driver", partitions=PARTITIONS)
    shutil.rmtree(out, ignore_errors=True)
    return _figures(s)


@B.variant("rstreams demo --pipeline local (the whole job in this process: tumbling_window, to_spark)")
def _local(ctx: Context) -> tuple[int, int, int, int]:
    from rstreams import demo

    out = _out(ctx)
    s = demo.run(ctx.n, out, quiet=True, placement="local", partitions=PARTITIONS)
    shutil.rmtree(out, ignore_errors=True)
    return _figures(s)


@B.variant(
    "rstreams demo (pipeline on the executors, run_on_spark)",
    targets=[
        Target(">= 1.0x plain PySpark", min_ratio=1.0),
        Target(">= 1.3x driver", min_ratio=1.3, against="rstreams demo --pipeline driver (pipeline in this process, to_spark)"),
    ],
)
def _executors(ctx: Context) -> tuple[int, int, int, int]:
    from rstreams import demo

    out = _out(ctx)
    s = demo.run(ctx.n, out, quiet=True, partitions=PARTITIONS)
    shutil.rmtree(out, ignore_errors=True)
    return _figures(s)
