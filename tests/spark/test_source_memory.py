"""from_dataframe's bounded driver memory: each task streams its partition to the subscriber in
slices of at most ``max_bytes_in_flight / 8`` bytes, and waits while nobody asks for more; a task
that waits longer than ``spill_after`` is drained to a local file instead; a driver JVM that dies
(killed, or out of heap) ends the stream with an error instead of a hang.

The memory figures themselves (driver JVM heap over one 1 GB partition) are in
``benchmarks/bench_spark.py``; these tests check behaviour. The two crash tests start their own
sessions in subprocesses (one SparkContext per process, and their JVM dies).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from rstreams.spark import _source, from_dataframe
from rstreams.testing import TestSubscriber

pytestmark = pytest.mark.spark


@pytest.fixture
def fetches(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every _Fetch created while the test runs."""
    made: list[Any] = []
    orig = _source._Fetch.__init__

    def spy(self: Any, *a: Any) -> None:
        orig(self, *a)
        made.append(self)

    monkeypatch.setattr(_source._Fetch, "__init__", spy)
    return made


def _wide(spark: Any, rows: int) -> Any:
    """One partition of ~310-byte rows (an id and a 300-character string)."""
    return spark.range(0, rows, 1, 1).selectExpr("id", "concat(cast(id as string), repeat('x', 290)) AS s")


def _job_running(spark: Any, group: str) -> bool:
    tracker = spark.sparkContext.statusTracker()
    for job in tracker.getJobIdsForGroup(group):
        info = tracker.getJobInfo(job)
        if info is not None and info.status == "RUNNING":
            return True
    return False


def _wait(what: Callable[[], bool], timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if what():
            return True
        time.sleep(0.05)
    return what()


def test_max_bytes_in_flight_and_spill_after_are_checked() -> None:
    class Df:
        isStreaming = False

        def mapInArrow(self) -> None:  # pragma: no cover - never called
            pass

    for bad in (0, 1000, 1.5e6, True, "64m"):
        with pytest.raises(ValueError, match="max_bytes_in_flight"):
            from_dataframe(Df(), max_bytes_in_flight=bad)  # type: ignore[arg-type]
    for bad_s in (-1, True, "10"):
        with pytest.raises(ValueError, match="spill_after"):
            from_dataframe(Df(), spill_after=bad_s)  # type: ignore[arg-type]
    from_dataframe(Df(), max_bytes_in_flight=None, spill_after=None)
    from_dataframe(Df(), max_bytes_in_flight=1 << 20, spill_after=0)


def test_the_task_function_ships_without_rstreams(tmp_path: Path) -> None:
    """The function the executors run is pickled by value: unpickling it needs pyspark and
    pyarrow but not rstreams (which a cluster's executors may not have)."""
    from pyspark import cloudpickle

    fn = _source._task_streamer("127.0.0.1", 9, b"t" * 32, 1 << 20, 1 << 16)
    (tmp_path / "fn.pkl").write_bytes(cloudpickle.dumps(fn))
    script = (
        "import sys, pickle; sys.modules['rstreams'] = None\n"
        f"fn = pickle.loads(open({str(tmp_path / 'fn.pkl')!r}, 'rb').read())\n"
        "print(fn.__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "stream_partition"


# -- a task stream without Spark: a retried task attempt resumes where the first one broke -------------


class _FakeJobs:
    """Stands in for the partition jobs: the test says when a partition's job is done, and with
    which (attempt, rows) result."""

    def __init__(self) -> None:
        self._r, self._w = socket.socketpair()
        self._results: list[list[tuple[int, int]] | None] = []
        self.requests = 0

    def done(self, result: list[tuple[int, int]] | None) -> None:
        """The requested partition's job finished with ``result`` (None: no such partition)."""
        self._results.append(result)
        self._w.send(b"!")

    def fileno(self) -> int:
        return self._r.fileno()

    def request_next(self) -> None:
        self.requests += 1

    def read_result(self) -> list[tuple[int, int]] | None:
        self._r.recv(1)
        return self._results.pop(0)

    def close(self) -> None:
        self._r.close()
        self._w.close()


def _send_attempt(port: int, token: bytes, partition: int, attempt: int, batches: list[Any], end: bool) -> None:
    """What _task_streamer sends, from a plain socket; without ``end`` the connection just breaks."""
    hello, frame = _source._TS_HELLO, _source._TS_FRAME
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(hello.pack(token, partition, attempt))
        schema = batches[0].schema.serialize()
        s.sendall(frame.pack(_source._TS_SCHEMA, schema.size) + schema.to_pybytes())
        for b in batches:
            msg = b.serialize()
            s.sendall(frame.pack(_source._TS_BATCH, msg.size) + msg.to_pybytes())
        if end:
            s.sendall(frame.pack(_source._TS_END, sum(b.num_rows for b in batches)))


def test_a_retried_task_resumes_after_the_rows_already_delivered() -> None:
    import pyarrow as pa

    def ids(lo: int, hi: int) -> Any:
        return pa.RecordBatch.from_pydict({"id": list(range(lo, hi))})

    jobs = _FakeJobs()
    listener = _source._listen("127.0.0.1", 1 << 16)
    port = listener.getsockname()[1]
    token = b"k" * 32
    partitions: list[int] = []
    stream = _source._TaskStream(
        jobs,  # type: ignore[arg-type]
        listener,
        token,
        lambda: partitions.append(1),
        lambda: False,
        1 << 20,
        False,
        None,
    ).start()
    it = stream.batches()
    pool = ThreadPoolExecutor(1)

    def pull() -> Any:
        return pool.submit(next, it, None).result(timeout=30)

    try:
        with socket.create_connection(("127.0.0.1", port)) as stranger:  # a wrong token: ignored
            stranger.sendall(_source._TS_HELLO.pack(b"x" * 32, 0, 0) + b"garbage")
        _send_attempt(port, token, 0, 0, [ids(0, 10), ids(10, 20)], end=False)  # breaks after 20 rows
        got = [pull(), pull()]
        _send_attempt(port, token, 0, 1, [ids(0, 10), ids(10, 25), ids(25, 30)], end=True)  # Spark's retry
        jobs.done([(1, 30)])  # the job kept attempt 1, which sent 30 rows
        got += [pull(), pull()]
        jobs.done(None)  # no partition 1
        assert pull() is None  # the end
    finally:
        stream.close()
        pool.shutdown()
    assert [x for b in got for x in b.column(0).to_pylist()] == list(range(30))
    assert [b.num_rows for b in got] == [10, 10, 5, 5]  # the retry's 10..25 batch, sliced at 20
    assert partitions == [1] and jobs.requests == 2
    assert stream.spilled_bytes == 0


# -- on the shared session ---------------------------------------------------------------------------


def test_batches_are_sliced_to_the_byte_budget_in_order(spark: Any, fetches: list[Any]) -> None:
    budget = 1 << 20  # slices of 128 KB; Spark's own batches would be 10,000 rows (3 MB) here
    ts: TestSubscriber[Any] = from_dataframe(_wide(spark, 20_000), max_bytes_in_flight=budget).test()
    ts.await_done(120).assert_complete().assert_no_violations()
    assert fetches[-1].transport == "task-stream"
    sizes = [b.nbytes for b in ts.values]
    assert max(sizes) <= budget // 8
    assert [x for b in ts.values for x in b.column(0).to_pylist()] == list(range(20_000))
    assert ts.values[3].column(1)[0].as_py().startswith(str(ts.values[3].column(0)[0].as_py()) + "xxx")


def test_a_task_waits_for_demand_then_stops_at_cancel(spark: Any, fetches: list[Any]) -> None:
    # ~60 MB in one partition, 1 MB in flight, never spilled: the task must wait for the subscriber
    ts: TestSubscriber[Any] = TestSubscriber(1)
    from_dataframe(_wide(spark, 200_000), max_bytes_in_flight=1 << 20, spill_after=None).subscribe(ts)
    ts.await_count(1, 120)
    fetch = fetches[-1]
    assert _wait(lambda: _job_running(spark, fetch._group))
    time.sleep(1.0)
    assert _job_running(spark, fetch._group), "the partition's task ran to its end without demand"
    assert len(ts.values) == 1 and fetch.stream.spilled_bytes == 0
    stream = fetch.stream
    ts.cancel()
    assert _wait(lambda: not _job_running(spark, fetch._group))
    assert _wait(lambda: not stream._thread.is_alive())
    assert stream._listener.fileno() == -1  # closed
    assert ts.errors == []
    ts.assert_no_violations()


def test_a_task_left_waiting_past_spill_after_is_drained_to_disk(spark: Any, fetches: list[Any]) -> None:
    ts: TestSubscriber[Any] = TestSubscriber(1)
    from_dataframe(_wide(spark, 100_000), as_="rows", max_bytes_in_flight=1 << 20, spill_after=0.2).subscribe(ts)
    ts.await_count(1, 120)
    fetch = fetches[-1]
    # nobody asks for more: after 0.2 s the rest of the partition goes to a file, and the task ends
    assert _wait(lambda: fetch.stream.spilled_bytes > 25_000_000 and not _job_running(spark, fetch._group))
    ts.request(1 << 40)
    ts.await_done(120).assert_complete().assert_no_violations()
    assert [r[0] for r in ts.values] == list(range(100_000))


def test_prefetch_requests_the_next_partition_when_the_current_one_has_arrived(spark: Any, fetches: list[Any]) -> None:
    df = spark.range(0, 3000, numPartitions=3)
    ts: TestSubscriber[Any] = TestSubscriber(1)
    from_dataframe(df, as_="rows", max_partitions_in_flight=2).subscribe(ts)
    ts.await_count(1, 120)
    assert _wait(lambda: fetches[-1].partitions_fetched == 2)  # the first, and one ahead
    time.sleep(0.5)
    assert fetches[-1].partitions_fetched == 2
    ts.request(1 << 40)
    ts.await_done(120).assert_complete().assert_no_violations()
    assert [r[0] for r in ts.values] == list(range(3000))


# -- in a small driver of its own (a subprocess: one SparkContext per process, and its JVM dies) ------

_SCRIPT = textwrap.dedent(
    """
    import json, os, sys, time
    import pyarrow.compute as pc
    from rstreams.spark import from_dataframe, session
    from rstreams.spark._jvm import driver_jvm_process
    from rstreams.testing import TestSubscriber

    spark = session("local[2]", app_name="rstreams-source-memory-test", spark_driver_memory="512m",
                    spark_sql_shuffle_partitions=2,
                    spark_driver_extraJavaOptions="-XX:+UseSerialGC")
    pid = driver_jvm_process(spark).pid

    # one partition of ~620 MB (2 M rows of 310 bytes): more than the driver JVM's whole heap
    big = spark.range(0, 2_000_000, 1, 1).selectExpr("id", "concat(cast(id as string), repeat('x', 290)) AS s")
    ts = from_dataframe(big).map(lambda b: pc.sum(b.column(0)).as_py()).reduce(lambda a, b: a + b).test()
    ts.await_done(180)
    ts.assert_no_violations()
    streamed, big_errors = ts.values, [repr(e)[:300] for e in ts.errors]

    # far more rows than will ever arrive, and a subscriber that wants them all: the test kills
    # the driver JVM while they flow
    ts = TestSubscriber()
    from_dataframe(spark.range(0, 10**10, 1, 2)).subscribe(ts)
    ts.await_count(3, 120)
    print("@@PID " + str(pid), flush=True)
    sys.stdin.readline()  # killed
    t0 = time.monotonic()
    ts.await_done(60)
    ts.assert_no_violations()
    err = ts.errors[0] if ts.errors else None
    print("@@REPORT " + json.dumps(dict(
        pid=pid, streamed=streamed, big_errors=big_errors, completed=ts.completions,
        error=type(err).__name__ if err else None, message=str(err)[:400] if err else "",
        seconds_to_error=round(time.monotonic() - t0, 1),
    )), flush=True)
    os._exit(0)  # no exit handlers against a dead JVM
    """
)


def test_a_partition_larger_than_the_heap_streams_and_a_killed_jvm_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "small_driver_job.py"
    path.write_text(_SCRIPT)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    env.pop("PYTEST_CURRENT_TEST", None)
    proc = subprocess.Popen(
        [sys.executable, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    timer = threading.Timer(240, proc.kill)  # the job must never hang: that is the point
    timer.start()
    report = None
    try:
        assert proc.stdout is not None and proc.stdin is not None
        for line in proc.stdout:
            if line.startswith("@@PID "):
                os.kill(int(line.split()[1]), signal.SIGKILL)
                proc.stdin.write("killed\n")
                proc.stdin.flush()
            elif line.startswith("@@REPORT "):
                report = json.loads(line.removeprefix("@@REPORT "))
        _, err = proc.communicate()
    finally:
        timer.cancel()
    assert report is not None, f"exit {proc.returncode} (-9: killed after 240 s)\n{err[-4000:]}"
    assert report["big_errors"] == [] and report["streamed"] == [sum(range(2_000_000))], report
    assert report["completed"] == 0, report
    assert report["error"] == "SparkJvmDiedError", report
    assert f"pid {report['pid']}" in report["message"] and "exit code -9" in report["message"], report
