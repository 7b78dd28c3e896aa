"""The exactly-once landing of to_spark, proved with Spark's own readers and the Spark engine (the shared ``spark`` session):
a reader never sees part of a batch (during a landing, between two renames of one batch, after a
crash before the batch's ``_spark_metadata`` entry), Spark's log compaction, drifted schemas that
stay readable, a row too large for the driver JVM, a killed driver JVM, and SIGKILLs at random
moments of a named landing."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow.parquet as pq
import pytest

from rstreams import Flowable
from rstreams.spark import (
    SchemaMismatchError,
    SinkWriteError,
    landed_stream,
    to_spark,
)
from rstreams.spark._landing import SparkFileLog

pytestmark = pytest.mark.spark


def ids(lo: int, n: int) -> Flowable[dict[str, int]]:
    return Flowable.range(lo, n).map(lambda i: {"id": i})


def spark_ids(spark: Any, path: Path) -> list[int]:
    return [r[0] for r in spark.read.parquet(str(path)).select("id").collect()]


def log_ids(path: Path) -> list[int]:
    """The ids in the files ``_spark_metadata`` lists (what Spark's readers see)."""
    out: list[int] = []
    for f in SparkFileLog(str(path)).all_files():
        out.extend(pq.read_table(unquote(urlparse(str(f["path"])).path)).column("id").to_pylist())
    return out


def assert_exactly(got: list[int], expected: Any) -> None:
    assert len(got) == len(set(got)), f"{len(got) - len(set(got))} duplicate rows"
    assert sorted(got) == sorted(expected)


_LAND_SCRIPT = """
import json, sys
import pyarrow.parquet  # imported before "started": the time after it is the landing's
from rstreams import Flowable
from rstreams.spark import to_spark
path, name, n, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
fut = to_spark(Flowable.range(0, n).map(lambda i: {"id": i}), path=path, name=name, batch_rows=batch,
               engine="pyarrow", progress=False, block=False)
print("started", flush=True)
r = fut.result()
print(json.dumps({"rows": r.rows, "skipped": r.skipped_rows}), flush=True)
"""


def land_process(path: Path, name: str, n: int, batch: int, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _LAND_SCRIPT, str(path), name, str(n), str(batch)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, **env),
    )


# -- 4. readers see whole batches only ------------------------------------------------------------------
def test_concurrent_spark_reader_only_ever_sees_whole_committed_batches(spark: Any, tmp_path: Path) -> None:
    batch, n = 100, 400
    fut = to_spark(ids(0, n), path=str(tmp_path), name="reader", batch_rows=batch, spark=spark, progress=False,
                   block=False)
    seen: list[int] = []
    while True:
        done = fut.done()
        seen.append(spark.read.schema("id long").parquet(str(tmp_path)).count())
        if done:
            break
    r = fut.result(60)
    assert r.rows == n and r.batches == n // batch
    # the Spark engine writes each batch as several part files (one per task)
    commits = tmp_path / "_rstreams" / "landings" / "reader" / "commits"
    files_per_batch = [len(json.loads(p.read_text())["files"]) for p in commits.iterdir()]
    assert len(files_per_batch) == n // batch and min(files_per_batch) >= 2
    assert all(c % batch == 0 for c in seen), sorted(set(seen))
    assert seen == sorted(seen) and seen[-1] == n
    assert_exactly(spark_ids(spark, tmp_path), range(n))


def test_spark_reader_between_two_renames_of_one_batch_sees_whole_batches_only(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worst moment for a reader that lists the directory: one file of a multi-file batch is in
    the path, the next is not yet. Spark reads at exactly that moment, from inside the rename."""
    batch = 100
    real_replace = os.replace
    seen: list[tuple[int, int]] = []
    renamed = [0]

    def replace(src: Any, dst: Any, *a: Any, **k: Any) -> None:
        real_replace(src, dst, *a, **k)
        if os.path.dirname(os.path.abspath(dst)) == str(tmp_path) and os.path.basename(dst).startswith("part-"):
            renamed[0] += 1
            seen.append((renamed[0], spark.read.schema("id long").parquet(str(tmp_path)).count()))

    monkeypatch.setattr(os, "replace", replace)
    r = to_spark(ids(0, 3 * batch), path=str(tmp_path), batch_rows=batch, spark=spark, progress=False, timeout=120)
    monkeypatch.undo()
    assert r.rows == 3 * batch
    assert len(seen) > r.batches  # some batch had several files: a read happened between two renames
    assert all(c % batch == 0 for _, c in seen), seen
    assert_exactly(spark_ids(spark, tmp_path), range(3 * batch))


def test_crash_after_renaming_a_batch_before_its_log_entry_is_invisible_until_the_next_landing_rolls_it_forward(
    spark: Any, tmp_path: Path
) -> None:
    proc = land_process(tmp_path, "ids", 500, 100, RSTREAMS_SINK_FAULT="publish:2")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 70, err[-2000:]
    in_dir = [n for n in os.listdir(tmp_path) if n.startswith("part-")]
    assert any("-b00000002-" in n for n in in_dir)  # batch 2's files are in the path...
    assert_exactly(spark_ids(spark, tmp_path), range(200))  # ...but not listed: Spark sees batches 0-1
    assert_exactly(log_ids(tmp_path), range(200))
    # the next landing into the path, under any name, publishes the dead landing's committed batch
    r = to_spark(ids(1000, 50), path=str(tmp_path), engine="pyarrow", progress=False)
    assert r.rows == 50 and r.skipped_rows == 0
    assert_exactly(spark_ids(spark, tmp_path), list(range(300)) + list(range(1000, 1050)))


def test_more_than_ten_batches_read_back_exactly_through_spark_and_landed_stream(spark: Any, tmp_path: Path) -> None:
    # two landings of 13 and 12 batches: log ids 0..25, compactions at 9 and 19
    to_spark(ids(0, 1300), path=str(tmp_path), name="a", batch_rows=100, engine="pyarrow", progress=False)
    to_spark(ids(1300, 1200), path=str(tmp_path), name="b", batch_rows=100, engine="pyarrow", progress=False)
    meta = os.listdir(tmp_path / "_spark_metadata")
    assert {"9.compact", "19.compact"} <= set(meta) and "25" in meta
    assert_exactly(spark_ids(spark, tmp_path), range(2500))
    assert spark.read.parquet(str(tmp_path)).count() == 2500
    q = (
        landed_stream(str(tmp_path), spark=spark)
        .writeStream.format("memory").queryName("landed_15_compaction").trigger(availableNow=True).start()
    )
    try:
        q.awaitTermination(120)
        assert_exactly([r[0] for r in spark.sql("SELECT id FROM landed_15_compaction").collect()], range(2500))
    finally:
        q.stop()


# -- 5./6. drifted schemas stay readable by Spark ---------------------------------------------------------
def test_key_and_type_drift_leave_the_path_readable_by_spark(spark: Any, tmp_path: Path) -> None:
    typed = tmp_path / "typed"
    rows = [{"id": i, "v": i} for i in range(10)] + [{"id": 10, "v": "three"}]
    with pytest.raises(SchemaMismatchError, match="'v'"):
        to_spark(Flowable.from_iterable(rows), path=str(typed), batch_rows=10, engine="pyarrow", progress=False)
    df = spark.read.parquet(str(typed))
    assert dict(df.dtypes)["v"] == "bigint"
    assert sorted((r["id"], r["v"]) for r in df.collect()) == [(i, i) for i in range(10)]

    merged = tmp_path / "merged"
    rows = [{"id": i} for i in range(25)] + [{"id": 25, "extra": "x"}] + [{"id": i} for i in range(26, 40)]
    to_spark(Flowable.from_iterable(rows), path=str(merged), batch_rows=10, merge_schema=True, engine="pyarrow",
             progress=False)
    got = spark.read.option("mergeSchema", "true").parquet(str(merged)).collect()
    assert sorted(r["id"] for r in got) == list(range(40))
    assert {r["id"]: r["extra"] for r in got if r["extra"] is not None} == {25: "x"}


# -- 7. the error contract, where the JVM is involved --------------------------------------------------------
def test_one_row_larger_than_the_write_bound_is_a_sink_write_error_naming_the_row(spark: Any, tmp_path: Path) -> None:
    rows = [{"id": 0, "s": "a"}, {"id": 1, "s": "b"}, {"id": 2, "s": "c"}, {"id": 3, "s": "x" * (2 << 20)}]
    with pytest.raises(SinkWriteError, match=r"row 3 holds 2\.0 MiB") as ei:
        to_spark(Flowable.from_iterable(rows), path=str(tmp_path), batch_rows=2, max_batch_bytes=1 << 20,
                 spark=spark, progress=False, timeout=120)
    assert ei.value.batch_id == 1 and ei.value.committed_rows == 2
    assert_exactly(spark_ids(spark, tmp_path), [0, 1])
    assert spark.range(3).count() == 3  # the driver JVM is fine


_JVM_SCRIPT = """
import os, sys
from rstreams import Flowable
from rstreams.spark import session, to_spark, SinkWriteError
from rstreams.spark._jvm import driver_jvm_process
s = session("local[1]", spark_ui_enabled=False, spark_sql_shuffle_partitions=1, spark_driver_memory="512m",
            spark_driver_extraJavaOptions="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
print("jvm", driver_jvm_process(s).pid, flush=True)
try:
    to_spark(Flowable.range(0, 10**9).map(lambda i: {"id": i}), path=sys.argv[1], name="endless",
             batch_rows=500, spark=s, progress=False)
    print("completed?!", flush=True)
    os._exit(1)
except SinkWriteError as e:
    print("error", type(e).__name__, type(e.__cause__).__name__, type(e.cause).__name__, e.landing, flush=True)
    n = e.committed_rows + 1000
# re-run at once, in this process (pyarrow engine: the session is gone): the lease is free
r = to_spark(Flowable.range(0, n).map(lambda i: {"id": i}), path=sys.argv[1], name="endless", batch_rows=500,
             engine="pyarrow", progress=False)
print("rerun", r.rows + r.skipped_rows, n, flush=True)
os._exit(0)  # the JVM is gone: no atexit talk to it
"""


def test_killed_driver_jvm_is_a_sink_write_error_caused_by_spark_jvm_died_and_an_immediate_rerun_resumes(tmp_path: Path) -> None:
    import time

    path = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-c", _JVM_SCRIPT, str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the session started (the test timeout guards this)
        assert line.startswith("jvm "), proc.stderr.read() if proc.stderr else ""
        pid = int(line.split()[1])
        assert b"java" in Path(f"/proc/{pid}/cmdline").read_bytes()
        deadline = time.monotonic() + 90
        while not (path.is_dir() and any(n.startswith("part-") for n in os.listdir(path))):
            assert proc.poll() is None and time.monotonic() < deadline, "the landing never published a batch"
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)  # while the landing runs: a batch is being written or filling
        try:
            out, err = proc.communicate(timeout=30)  # the guard: a dead JVM must not hang to_spark
        except subprocess.TimeoutExpired:
            pytest.fail("to_spark still runs 30 s after its driver JVM was killed")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "error SinkWriteError SparkJvmDiedError SparkJvmDiedError endless\n" in out, err[-3000:]
    rerun = out.strip().splitlines()[-1].split()
    assert rerun[0] == "rerun" and rerun[1] == rerun[2], err[-3000:]
    assert_exactly(log_ids(path), range(int(rerun[2])))


# -- 8. SIGKILL at random moments of a named landing -------------------------------------------------------------
def test_named_landing_killed_at_random_moments_then_rerun_lands_exactly_n_distinct_ids(
    spark: Any, tmp_path: Path
) -> None:
    """Five SIGKILLs at seeded random delays: after the start (odd runs: anywhere, the roll-forward
    of the last crash included) or after the run's first new commit (even runs: mid-landing, even
    on a slow machine); then a run to the end. Exactly N distinct ids, whole batches throughout."""
    import time

    n, batch, kills = 6_000, 200, 5
    rng = random.Random(15)
    commits = tmp_path / "_rstreams" / "landings" / "ids" / "commits"

    def committed() -> int:
        return len([c for c in os.listdir(commits) if c.endswith(".json") and not c.startswith(".")]) if commits.is_dir() else 0

    outcomes: list[str] = []
    for i in range(kills):
        before = committed()
        proc = land_process(tmp_path, "ids", n, batch)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "started", proc.communicate(timeout=30)[1][-2000:]
        if i % 2 == 0:
            deadline = time.monotonic() + 60
            while committed() == before and proc.poll() is None:
                assert time.monotonic() < deadline, "the landing made no progress"
                time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.5))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        outcomes.append("killed" if proc.returncode == -signal.SIGKILL else f"exit {proc.returncode}")
        assert proc.returncode in (0, -signal.SIGKILL), outcomes
        visible = log_ids(tmp_path)
        assert len(visible) == len(set(visible)) and len(visible) % batch == 0, outcomes  # whole batches, no duplicate
    final = land_process(tmp_path, "ids", n, batch)
    out, err = final.communicate(timeout=120)
    assert final.returncode == 0, err[-2000:]
    r = json.loads(out.strip().splitlines()[-1])
    assert r["rows"] + r["skipped"] == n
    assert_exactly(log_ids(tmp_path), range(n))
    assert_exactly(spark_ids(spark, tmp_path), range(n))
    assert "killed" in outcomes  # at least one kill hit a running landing
    assert os.listdir(commits.parent / "staging") == []
