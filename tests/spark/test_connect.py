"""rstreams.spark over Spark Connect: a local Connect server, and a client session reached through
``rstreams.spark.session("sc://...")``.

A Connect DataFrame has no JVM handle in this process, so ``from_dataframe`` takes its
``mapInArrow`` transport, and ``to_spark`` must not reach for a SparkContext. The server is started
in a subprocess (one SparkContext per process; the shared test session lives in this one), as
pyspark does for ``SparkSession.builder.remote("local[2]")``; ``session("sc://localhost:15002")``
then hands back that server's client session with our runtime settings applied. 25-50 s on 2 cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="the spark extra is not installed (pip install '.[spark]')")
pytest.importorskip("grpc", reason="pyspark's connect extra is not installed (pip install '.[dev]')")

pytestmark = pytest.mark.spark

_SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    from pyspark.sql import SparkSession
    from rstreams import Flowable
    from rstreams.spark import from_dataframe, run_on_spark, session, to_spark
    from rstreams.spark._source import _open_jvm_arrow

    report = {}

    out_dir = sys.argv[1]
    # a local Connect server in this process (pyspark starts it for a "local" remote); the sc:// URL
    # then goes through rstreams' own Connect path (builder.remote, runtime settings), which gets
    # the client session of that server
    local = SparkSession.builder.remote("local[2]").getOrCreate()
    spark = session("sc://localhost:15002", spark_sql_shuffle_partitions=2)
    report["same_server"] = spark is local
    report["partitions_setting"] = spark.conf.get("spark.sql.shuffle.partitions")
    report["kind"] = type(spark).__module__
    df = spark.range(0, 5000, numPartitions=4).selectExpr("id", "cast(id % 97 as double) / 7 as x", "cast(id as string) as s")
    report["jvm_transport"] = _open_jvm_arrow(df, False, lambda: None) is not None

    expected = [tuple(r) for r in df.orderBy("id").collect()]
    rows = from_dataframe(df, as_="rows").to_list().blocking_first(timeout=120)
    report["rows_equal"] = sorted(rows) == expected
    batches = from_dataframe(df).to_list().blocking_first(timeout=120)
    report["arrow_rows"] = sum(b.num_rows for b in batches)
    report["arrow_schema"] = [f.name for f in batches[0].schema]
    report["take3"] = from_dataframe(df, as_="rows").take(3).to_list().blocking_first(timeout=120)

    landed = to_spark(Flowable.range(0, 3000).map(lambda i: {"id": i}), path=os.path.join(out_dir, "landed"),
                      spark=spark, batch_rows=1000, progress=False)
    back = spark.read.parquet(os.path.join(out_dir, "landed"))
    report["landed"] = [landed.rows, landed.batches, back.count(), back.selectExpr("sum(id)").collect()[0][0]]

    def pipeline(fl):
        return fl.map(lambda r: (r[0] * 2,)).filter(lambda r: r[0] % 3 == 0)

    out = run_on_spark(spark.range(0, 1000, numPartitions=2), pipeline, as_="rows", schema="id long")
    report["scaled"] = sorted(r[0] for r in out.collect()) == [i * 2 for i in range(1000) if (i * 2) % 3 == 0]

    # cancel mid-query: the server operation is interrupted by the fetch's tag (no job group here)
    import time
    slow = spark.range(0, 10**12, numPartitions=2).selectExpr("sum(hash(id)) as h")
    ts = from_dataframe(slow).test()
    time.sleep(4)
    ts.cancel()
    time.sleep(3)
    report["left_running"] = len(spark.interruptAll())  # what the cancel did not stop
    report["cancel_clean"] = not ts.values and not ts.errors
    print("@@REPORT " + json.dumps(report))
    spark.stop()
    """
)


def test_spark_connect_source_sink_and_scale_out(tmp_path: Path) -> None:
    script = tmp_path / "connect_job.py"
    script.write_text(_SCRIPT)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    env.pop("PYTEST_CURRENT_TEST", None)
    proc = subprocess.run(
        [sys.executable, str(script), str(tmp_path)],
        capture_output=True, text=True, timeout=240, env=env,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("@@REPORT ")]
    assert proc.returncode == 0 and lines, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    report = json.loads(lines[-1].removeprefix("@@REPORT "))
    assert report["kind"].startswith("pyspark.sql.connect")
    assert report["same_server"] is True and report["partitions_setting"] == "2"
    assert report["jvm_transport"] is False  # no JVM handle over Connect: the mapInArrow transport
    assert report["rows_equal"] is True
    assert report["arrow_rows"] == 5000 and report["arrow_schema"] == ["id", "x", "s"]
    assert report["take3"] == [[0, 0.0, "0"], [1, 1 / 7, "1"], [2, 2 / 7, "2"]]
    assert report["left_running"] == 0  # the cancel interrupted the server operation (its tag)
    assert report["cancel_clean"] is True
    assert report["landed"] == [3000, 3, 3000, sum(range(3000))]
    assert report["scaled"] is True


def test_connect_url_without_the_connect_extra_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    from rstreams.spark import SparkUnavailableError, session

    real_import = builtins.__import__

    def no_connect(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith("pyspark.sql.connect"):
            raise ImportError("No module named 'grpc'")
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_connect)
    with pytest.raises(SparkUnavailableError, match=r"Spark Connect URL.*pyspark\[connect\]"):
        session("sc://localhost:1")
