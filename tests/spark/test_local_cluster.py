"""Scale-out in ``local-cluster`` mode: separate executor JVMs and Python workers, as on a real cluster.

The shared test session is ``local[2]`` (the driver JVM is the executor). The one test here starts
its own Spark application in a subprocess (one SparkContext per process) with
``local-cluster[2,1,1024]``: a standalone master, a worker and two executor JVMs on this machine.
One cluster start serves every check, since each start costs tens of seconds:

* ``rstreams demo`` as the command line runs it (the demo starts the session with its own log
  settings), batch mode with the pipeline on the executors, then the streaming mode: exact
  counts against the model of test_demo.py, the pipeline ran in the executor JVMs' Python
  workers, and the whole run, including the ordered shutdown, prints no ERROR line and no stack
  trace (the pipeline in the driver is the same there as in ``local[2]``: test_demo.py runs it);
* ``run_on_spark`` gives exactly the local pipeline's result, ``from_dataframe`` streams the same
  rows back to the driver, and ``to_spark`` lands what it is given.

It takes 60-120 s on 2 cores. If the cluster cannot start here (no launcher in the pip package, no
free ports), the test is skipped with Spark's own message; a cluster that starts but gives a wrong
answer fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from .test_demo import _check_run, _synthetic

pytest.importorskip("pyspark", reason="the spark extra is not installed (pip install '.[spark]')")

pytestmark = [pytest.mark.spark, pytest.mark.local_cluster]

MASTER = "local-cluster[2,1,1024]"
BATCH_ROWS, STREAM_ROWS, STREAM_BATCH = 10_000, 2_000, 1_000

_SCRIPT = textwrap.dedent(
    """
    import json, os, sys, time
    from rstreams import Flowable, demo
    from rstreams.spark import SparkUnavailableError, from_dataframe, run_on_spark, session, to_spark

    out_dir, master = sys.argv[1], sys.argv[2]
    rows, stream_rows, stream_batch = map(int, sys.argv[3:6])
    t0 = time.monotonic()
    report = {"started": True}
    try:
        # as `rstreams demo --master local-cluster[...]` runs it: the demo starts the session
        report["batch"] = demo.run(rows, os.path.join(out_dir, "batch"), master, partitions=4, stop_spark=False)
    except SparkUnavailableError as e:
        print(json.dumps({"started": False, "error": str(e)[:2000]}))
        sys.exit(0)
    report["stream"] = demo.run(stream_rows, os.path.join(out_dir, "stream"), streaming=True, batch_rows=stream_batch,
                                stop_spark=False)
    spark = session()
    report["master"] = spark.sparkContext.master
    report["executors"] = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1

    df = spark.range(0, 20000, numPartitions=4).selectExpr("id", "cast(id % 97 as double) / 7 as x")

    def pipeline(fl):
        return fl.map(lambda r: (r[0], r[1] * 2.0)).filter(lambda r: r[0] % 3 != 1)

    remote = sorted(tuple(r) for r in run_on_spark(df, pipeline, schema="id long, x double").collect())
    rows_ = [tuple(r) for r in df.collect()]
    local = sorted(pipeline(Flowable.from_iterable(rows_)).to_list().blocking_first())
    report["remote_equals_local"] = remote == local
    report["remote_rows"], report["local_rows"] = len(remote), len(local)
    streamed = from_dataframe(df.orderBy("id"), as_="rows").to_list().blocking_first()
    report["streamed_equals_rows"] = [tuple(r) for r in streamed] == sorted(rows_)
    result = to_spark(Flowable.from_iterable(rows_[:5000]), path=os.path.join(out_dir, "landed"),
                      spark=spark, batch_rows=1000, progress=False)
    report["landed"] = spark.read.parquet(os.path.join(out_dir, "landed")).count()
    report["sink_rows"] = result.rows
    report["seconds"] = round(time.monotonic() - t0, 1)
    spark.stop()  # the ordered shutdown rstreams demo does at its end
    print(json.dumps(report))
    """
)


def _landed(out: Path) -> dict[tuple[int, str, str], tuple[int, float]]:
    import pyarrow.dataset as ds

    rows = ds.dataset(str(out / "windows"), format="parquet").to_table().to_pylist()
    landed = {(r["window_start"], r["country"], r["kind"]): (r["events"], r["amount"]) for r in rows}
    assert len(landed) == len(rows)
    return landed


def test_local_cluster_runs_the_demo_and_run_on_spark_on_separate_processes_with_the_local_results(tmp_path: Path) -> None:
    script = tmp_path / "cluster_job.py"
    script.write_text(_SCRIPT)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    env.pop("PYTEST_CURRENT_TEST", None)
    proc = subprocess.run(
        [sys.executable, str(script), str(tmp_path), MASTER, *map(str, (BATCH_ROWS, STREAM_ROWS, STREAM_BATCH))],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert proc.returncode == 0 and lines, f"the cluster job crashed (exit {proc.returncode}):\n{proc.stderr[-4000:]}"
    report: dict[str, Any] = json.loads(lines[-1])
    if not report["started"]:
        pytest.skip(f"local-cluster mode does not start here: {report['error']}")
    assert report["master"].startswith("local-cluster")
    assert report["executors"] == 2, report

    # a clean run looks clean: the demo's phase lines, and nothing from Spark but the JVM's
    # one-line notice about the incubator module it is started with
    err = [ln for ln in proc.stderr.splitlines() if ln.strip() and "jdk.incubator.vector" not in ln]
    assert err and all(ln.startswith("rstreams demo: ") for ln in err), proc.stderr[-4000:]
    assert "rstreams demo: starting Spark (local-cluster[2,1,1024])..." in err

    batch, stream = report["batch"], report["stream"]
    for s in (batch, stream):
        assert s["master"].startswith("local-cluster") and s["executors"] == 2
    # the pipeline ran in Python workers of both executor JVMs, neither of them the driver's
    for s in (batch, stream):
        assert len(s["pipeline_jvm_pids"]) == 2 and s["driver_jvm_pid"] not in s["pipeline_jvm_pids"], s

    for key, s, n, micro_batch in (("batch", batch, BATCH_ROWS, None), ("stream", stream, STREAM_ROWS, STREAM_BATCH)):
        faults, model = _synthetic(n, micro_batch)
        _check_run(_landed(tmp_path / key), tmp_path / key, s, n, faults, model)

    assert report["remote_rows"] == report["local_rows"] > 0, report
    assert report["remote_equals_local"], report
    assert report["streamed_equals_rows"], report
    assert report["landed"] == report["sink_rows"] == 5000, report
