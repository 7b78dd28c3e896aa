"""The sink's commit protocol, exercised with the pyarrow engine (no JVM): exactly-once across
a write failure, a crash between write and commit, and a crash between commit and publish (killed
subprocesses); uncommitted data is never visible in the path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rstreams import Flowable
from rstreams.spark import SinkWriteError, WritePolicy
from rstreams.spark._sink import SparkSink
from rstreams.testing import TestPublisher

pytestmark = pytest.mark.spark


def _read_ids(path: Path) -> list[int]:
    files = sorted(p for p in path.iterdir() if p.name.startswith("part-"))
    ids: list[int] = []
    for f in files:
        ids.extend(pq.read_table(f).column("id").to_pylist())
    return ids


def _sink(path: Path, batch_rows: int, hook=None, attempts: int = 3, name: str | None = "default") -> SparkSink:  # type: ignore[no-untyped-def]
    return SparkSink(
        spark=None, path=str(path), table=None, format="parquet", mode="append", batch_rows=batch_rows,
        max_batch_seconds=None, schema=None, name=name, policy=WritePolicy(attempts, 0.0),
        progress=None, write_hook=hook, engine="pyarrow",
    )


def test_sink_lands_every_row_in_committed_batches(tmp_path: Path) -> None:
    s = _sink(tmp_path, 100)
    Flowable.range(0, 1050).map(lambda i: {"id": i}).subscribe(s)
    r = s.result(30)
    assert r.rows == 1050 and r.batches == 11
    assert sorted(_read_ids(tmp_path)) == list(range(1050))
    assert len(os.listdir(tmp_path / "_rstreams" / "landings" / "default" / "commits")) == 11
    assert (tmp_path / "_rstreams" / "landings" / "default" / "_COMPLETE").exists()


def test_sink_requests_only_after_commit(tmp_path: Path) -> None:
    tp: TestPublisher[dict[str, int]] = TestPublisher.create()
    s = _sink(tmp_path, 10)
    tp.subscribe(s)
    assert tp.requested == 1  # one element first: what an element is (a row, a record batch)
    tp.next({"id": 0})
    assert tp.requested == 9  # then the rest of one micro-batch of demand, never more
    tp.next(*[{"id": i} for i in range(1, 10)])
    assert tp.requested <= 10  # batch 0 handed to the writer; batch 1 may fill meanwhile
    tp.complete()
    assert s.result(30).rows == 10


def test_sink_first_request_is_one_element_so_big_batches_are_not_each_a_job(tmp_path: Path) -> None:
    import pyarrow as pa

    tp: TestPublisher[pa.RecordBatch] = TestPublisher.create()
    s = _sink(tmp_path, 100)
    tp.subscribe(s)
    assert tp.requested == 1
    tp.next(pa.record_batch({"id": list(range(0, 250))}))  # one element is 2.5 batches of rows
    tp.complete()
    r = s.result(30)
    assert r.rows == 250 and r.batches == 1
    assert sorted(_read_ids(tmp_path)) == list(range(250))


def test_sink_pending_batch_takes_the_size_chosen_at_the_last_commit(tmp_path: Path) -> None:
    """The batch that fills while one is written is sealed only when the writer takes it, so a
    size grown at a commit applies to it (no one-batch lag), and memory holds two batches at most."""
    import threading
    import time

    import pyarrow as pa

    release = threading.Event()
    s = _sink(tmp_path, 100, hook=lambda b: release.wait(10) if b == 0 else None)
    tp: TestPublisher[pa.RecordBatch] = TestPublisher.create()
    tp.subscribe(s)

    def batch(start: int) -> pa.RecordBatch:
        return pa.record_batch({"id": list(range(start, start + 100))})

    tp.next(batch(0))  # batch 0 goes to the (blocked) writer; one more element is requested
    assert tp.requested == 1
    tp.next(batch(100))  # a full pending batch: nothing more is requested while batch 0 is written
    assert tp.requested == 0
    s._batch_rows = 300  # as growth at batch 0's commit would (the adaptive path)
    release.set()
    deadline = time.monotonic() + 10
    while tp.requested == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert tp.requested == 2  # the pending 100 rows wait for 200 more instead of being a batch
    tp.next(batch(200), batch(300))
    tp.complete()
    r = s.result(30)
    assert r.rows == 400 and r.batches == 2
    assert sorted(_read_ids(tmp_path)) == list(range(400))


def test_write_failure_is_retried_then_succeeds(tmp_path: Path) -> None:
    failures = {2: 1}

    def hook(batch_id: int) -> None:
        if failures.get(batch_id, 0) > 0:
            failures[batch_id] -= 1
            raise OSError("disk hiccup")

    s = _sink(tmp_path, 50, hook)
    Flowable.range(0, 300).map(lambda i: {"id": i}).subscribe(s)
    assert s.result(30).rows == 300
    assert sorted(_read_ids(tmp_path)) == list(range(300))


def test_persistent_failure_names_the_batch_then_rerun_resumes_exactly(tmp_path: Path) -> None:
    def hook(batch_id: int) -> None:
        if batch_id == 3:
            raise OSError("disk full")

    cancelled: list[bool] = []
    s = _sink(tmp_path, 50, hook, attempts=2)
    Flowable.range(0, 400).map(lambda i: {"id": i}).do_on_cancel(lambda: cancelled.append(True)).subscribe(s)
    with pytest.raises(SinkWriteError, match=r"micro-batch 3 \(rows 150\.\.199\).*Rows 0\.\.149 are committed"):
        s.result(30)
    assert cancelled == [True]
    assert sorted(_read_ids(tmp_path)) == list(range(150))
    s2 = _sink(tmp_path, 50)
    Flowable.range(0, 400).map(lambda i: {"id": i}).subscribe(s2)
    r = s2.result(30)
    assert r.skipped_rows == 150 and r.rows == 250
    assert sorted(_read_ids(tmp_path)) == list(range(400))


_CRASH_SCRIPT = """
import sys
from rstreams import Flowable
from rstreams.spark import to_spark
r = to_spark(Flowable.range(0, 500).map(lambda i: {{"id": i}}), path={path!r}, name="default",
             batch_rows=100, engine="pyarrow", progress=False)
print("rows", r.rows, "skipped", r.skipped_rows)
"""


def _run_sink_subprocess(path: Path, **env_extra: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, **env_extra)
    script = _CRASH_SCRIPT.format(path=str(path))
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)


def test_crash_between_write_and_commit_then_rerun_is_exactly_once(tmp_path: Path) -> None:
    crashed = _run_sink_subprocess(tmp_path, RSTREAMS_SINK_FAULT="commit:2")
    assert crashed.returncode == 70, crashed.stderr
    # batch 2's files were written but stay staged: a reader sees exactly the committed batches
    staged = tmp_path / "_rstreams" / "landings" / "default" / "staging" / "batch-00000002"
    assert any("-b00000002-" in n for n in os.listdir(staged))
    assert not any("-b00000002-" in n for n in os.listdir(tmp_path))
    assert sorted(_read_ids(tmp_path)) == list(range(200))
    rerun = _run_sink_subprocess(tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    assert "rows 300 skipped 200" in rerun.stdout
    assert sorted(_read_ids(tmp_path)) == list(range(500))
    assert not os.listdir(tmp_path / "_rstreams" / "landings" / "default" / "staging")


def test_crash_between_commit_and_publish_then_rerun_rolls_forward(tmp_path: Path) -> None:
    crashed = _run_sink_subprocess(tmp_path, RSTREAMS_SINK_FAULT="committed:2")
    assert crashed.returncode == 70, crashed.stderr
    # committed but not yet published: invisible until the re-run moves it in (roll forward)
    assert (tmp_path / "_rstreams" / "landings" / "default" / "commits" / "00000002.json").exists()
    assert sorted(_read_ids(tmp_path)) == list(range(200))
    rerun = _run_sink_subprocess(tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    assert "rows 200 skipped 300" in rerun.stdout  # batch 2 counts as committed: rows 200..299
    ids = _read_ids(tmp_path)
    assert sorted(ids) == list(range(500)) and len(ids) == len(set(ids))
    assert not os.listdir(tmp_path / "_rstreams" / "landings" / "default" / "staging")


def test_runs_and_streams_appending_to_one_path_never_replace_each_others_files(tmp_path: Path) -> None:
    # unnamed landings and named ones, each with its own batch ids from 0
    for lo, name in ((0, None), (100, None), (200, "other"), (300, "third")):
        s = _sink(tmp_path, 30, name=name)  # type: ignore[arg-type]
        Flowable.range(lo, 100).map(lambda i: {"id": i}).subscribe(s)
        assert s.result(30).rows == 100
    ids = _read_ids(tmp_path)
    assert sorted(ids) == list(range(400)) and len(ids) == len(set(ids))


def test_record_batches_and_tuples_are_accepted(tmp_path: Path) -> None:
    import pyarrow as pa

    batches = [pa.RecordBatch.from_pydict({"id": list(range(i, i + 10))}) for i in range(0, 100, 10)]
    s = _sink(tmp_path / "a", 25)
    Flowable.from_iterable(batches).subscribe(s)
    assert s.result(30).rows == 100
    assert sorted(_read_ids(tmp_path / "a")) == list(range(100))
    from collections import namedtuple

    Row = namedtuple("Row", "id name")
    s2 = _sink(tmp_path / "b", 7)
    Flowable.range(0, 20).map(lambda i: Row(i, str(i))).subscribe(s2)
    assert s2.result(30).rows == 20
    assert sorted(_read_ids(tmp_path / "b")) == list(range(20))


def test_upstream_error_fails_the_result_after_committing_full_batches(tmp_path: Path) -> None:
    class Boom(Exception):
        pass

    s = _sink(tmp_path, 10)
    Flowable.concat(Flowable.range(0, 25).map(lambda i: {"id": i}), Flowable.error(Boom())).subscribe(s)
    with pytest.raises(Boom):
        s.result(30)
    assert sorted(_read_ids(tmp_path)) == list(range(20))


def test_memory_is_bounded_by_two_batches_while_a_slow_writer_lands(tmp_path: Path) -> None:
    import time

    produced = [0]
    landed_before_write: list[tuple[int, int]] = []
    batch = 100

    def slow_hook(batch_id: int) -> None:
        # called by the writer before each write: batches 0..batch_id-1 are committed by now
        landed_before_write.append((batch_id, produced[0]))
        time.sleep(0.01)

    def count(_: object) -> None:
        produced[0] += 1

    s = _sink(tmp_path, batch, hook=slow_hook)
    Flowable.range(0, 3000).map(lambda i: {"id": i}).do_on_next(count).subscribe(s)
    assert s.result(60).rows == 3000
    assert len(landed_before_write) == 30
    for batch_id, n in landed_before_write:
        # what the producer was allowed to emit: the committed batches, the one being written, and
        # at most one more filling meanwhile (plus the first 16-element probe request)
        assert n <= (batch_id + 2) * batch + 16, (batch_id, n)
    assert sorted(_read_ids(tmp_path)) == list(range(3000))


def test_adaptive_first_batch_of_arrow_elements_is_sized_by_bytes(tmp_path: Path) -> None:
    """Arrow elements tell their bytes per row: the first adaptive batch holds ~32 MB of them
    (here all 20 small record batches) instead of 100k rows of unknown size, so a stream of small
    record batches does not start with one Spark job per element."""
    import pyarrow as pa

    batches = [pa.record_batch({"id": list(range(i, i + 1000))}) for i in range(0, 20_000, 1000)]
    s = SparkSink(
        spark=None, path=str(tmp_path), table=None, format="parquet", mode="append", batch_rows=None,
        max_batch_seconds=None, schema=None, name="default", policy=WritePolicy(1, 0.0),
        progress=None, engine="pyarrow",
    )
    Flowable.from_iterable(batches).subscribe(s)
    r = s.result(30)
    assert r.rows == 20_000 and r.batches == 1
    assert sorted(_read_ids(tmp_path)) == list(range(20_000))


def test_sink_write_error_pickles_with_its_fields() -> None:
    import copy
    import pickle

    e = SinkWriteError(3, 100, 200, 100, OSError("disk full"))
    for back in (pickle.loads(pickle.dumps(e)), copy.copy(e)):
        assert isinstance(back, SinkWriteError) and str(back) == str(e)
        assert (back.batch_id, back.start_row, back.end_row, back.committed_rows) == (3, 100, 200, 100)
        assert isinstance(back.__cause__, OSError)


@pytest.mark.parametrize(("first", "second"), [("orders/2024", "orders_2024"), ("a b", "a_b"), ("..", "x")])
def test_two_names_that_differ_only_in_unsafe_characters_are_two_landings(tmp_path: Path, first: str, second: str) -> None:
    from rstreams.spark import to_spark

    r1 = to_spark(Flowable.from_iterable([{"id": 0}, {"id": 1}]), path=str(tmp_path), name=first,
                  engine="pyarrow", progress=False)
    r2 = to_spark(Flowable.from_iterable([{"id": 0}, {"id": 2}, {"id": 3}]), path=str(tmp_path), name=second,
                  engine="pyarrow", progress=False)
    assert (r1.rows, r2.rows, r2.already_complete) == (2, 3, False)
    assert sorted(_read_ids(tmp_path)) == [0, 0, 1, 2, 3]
    assert (tmp_path / "_rstreams" / "lock").exists()  # the control directory itself is not a landing's


def test_an_unexpected_failure_at_start_is_a_sink_write_error_and_frees_the_landing(tmp_path: Path) -> None:
    from rstreams.spark import to_spark

    bad = tmp_path / "_rstreams" / "schema" / "00000001.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("{}")  # a schema file without its Arrow schema: reading it is a KeyError
    with pytest.raises(SinkWriteError) as info:
        to_spark(Flowable.from_iterable([{"id": 0}]), path=str(tmp_path), name="ids", engine="pyarrow", progress=False)
    assert info.value.step == "start" and info.value.landing == "ids"
    assert isinstance(info.value.__cause__, KeyError)
    bad.unlink()
    # the failed start released the lease: the same name runs at once in this process
    r = to_spark(Flowable.from_iterable([{"id": 0}]), path=str(tmp_path), name="ids", engine="pyarrow", progress=False)
    assert r.rows == 1


def test_a_missing_value_in_a_non_nullable_column_is_a_schema_mismatch_naming_the_row(tmp_path: Path) -> None:
    import pyarrow as pa

    from rstreams.spark import SchemaMismatchError, to_spark

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])
    rows = [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"v": "c"}]
    with pytest.raises(SchemaMismatchError) as info:  # not a write failure, retried, then "re-run to resume"
        to_spark(Flowable.from_iterable(rows), path=str(tmp_path), schema=schema, engine="pyarrow", progress=False,
                 retry=WritePolicy(3, 0.0))
    assert info.value.step == "convert" and info.value.committed_rows == 0
    assert "'id'" in str(info.value) and "row 2 " in str(info.value)
    assert _read_ids(tmp_path) == []


def test_timeout_cancels_the_landing_and_is_a_sink_write_error(tmp_path: Path) -> None:
    import threading

    from rstreams.spark import to_spark

    cancelled = threading.Event()
    src = Flowable.concat(Flowable.from_iterable([{"id": 0}]), Flowable.never()).do_on_cancel(cancelled.set)
    with pytest.raises(SinkWriteError) as info:
        to_spark(src, path=str(tmp_path), name="slow", engine="pyarrow", progress=False, timeout=0.3)
    assert info.value.step == "timeout" and info.value.landing == "slow"
    assert isinstance(info.value.__cause__, TimeoutError)
    assert cancelled.wait(5)  # not left running in the background
    # the landing is released once the cancel settles: a re-run of the name lands the input
    r = to_spark(Flowable.from_iterable([{"id": 0}, {"id": 1}]), path=str(tmp_path), name="slow", engine="pyarrow",
                 progress=False, timeout=30)
    assert r.rows == 2


def test_a_sink_cancelled_before_its_subscription_cancels_the_subscription_it_gets(tmp_path: Path) -> None:
    import threading

    cancelled = threading.Event()
    s = _sink(tmp_path, 10)
    s.cancel()
    assert s.result(5).rows == 0
    Flowable.never().do_on_cancel(cancelled.set).subscribe(s)
    assert cancelled.is_set()  # never requested from: cancelled, not stranded


def test_an_overwrite_killed_between_the_two_renames_of_its_log_switch_is_finished_at_the_next_start(
    tmp_path: Path,
) -> None:
    import json

    import pyarrow as pa

    from rstreams.spark import to_spark
    from rstreams.spark._landing import SparkFileLog, sink_file_status

    to_spark(Flowable.from_iterable([{"id": 0}, {"id": 1}]), path=str(tmp_path), engine="pyarrow", progress=False)
    old = [p for p in tmp_path.iterdir() if p.name.startswith("part-")]
    new = tmp_path / "part-new.parquet"
    pq.write_table(pa.table({"id": [7]}), new)
    # the state replace_with's fallback (no RENAME_EXCHANGE: macOS, some filesystems) leaves when its
    # writer is killed after moving the old log aside and before moving the new one in
    log = SparkFileLog(str(tmp_path))
    switch = tmp_path / "_rstreams" / "metadata-new-0badc0de"
    switch.mkdir()
    (switch / "0").write_text("v1\n" + json.dumps(sink_file_status(str(new))))
    (tmp_path / "_spark_metadata").rename(str(switch) + "-old")
    to_spark(Flowable.from_iterable([{"id": 9}]), path=str(tmp_path), engine="pyarrow", progress=False)
    listed = {os.path.basename(f["path"]) for f in log.all_files()}
    assert "part-new.parquet" in listed and not listed & {p.name for p in old}  # the overwritten rows stay gone
    assert len(listed) == 2
    assert not [n for n in os.listdir(tmp_path / "_rstreams") if n.startswith("metadata-new-")]
