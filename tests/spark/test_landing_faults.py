"""The exactly-once landing of to_spark, proved with the pyarrow engine (no JVM): the landing's identity, one writer per name,
one schema per path and the error contract, under interruptions, re-runs, concurrent writers,
killed processes, a full disk and a read-only path.

What a reader sees is read the way Spark reads it: the files listed by ``<path>/_spark_metadata``
(:class:`~rstreams.spark._landing.SparkFileLog`). The Spark readers themselves are in
``test_landing_spark.py``.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rstreams import Flowable
from rstreams.spark import (
    InputMismatchError,
    LandingInUseError,
    SchemaMismatchError,
    SinkWriteError,
    WritePolicy,
    path_schema,
    to_spark,
)
from rstreams.spark._landing import Landing, SparkFileLog
from rstreams.spark._sink import SparkSink


class Boom(Exception):
    pass


# -- helpers -------------------------------------------------------------------------------------
def listed_files(path: Path) -> list[str]:
    """The data files a Spark reader of ``path`` lists (through ``_spark_metadata``)."""
    return [unquote(urlparse(str(f["path"])).path) for f in SparkFileLog(str(path)).all_files()]


def visible(path: Path, column: str = "id") -> list[Any]:
    """The values of ``column`` a Spark reader of ``path`` sees (in file order)."""
    out: list[Any] = []
    for f in listed_files(path):
        out.extend(pq.read_table(f).column(column).to_pylist())
    return out


def assert_exactly(path: Path, expected: Any) -> None:
    ids = visible(path)
    assert len(ids) == len(set(ids)), f"{len(ids) - len(set(ids))} duplicate rows"
    assert sorted(ids) == sorted(expected)


def assert_nothing_half_written(path: Path) -> None:
    """Every data file in the path is listed by the log (no stray, unlisted or partial file), and
    no temp file is left anywhere in the landing's directories."""
    listed = set(listed_files(path))
    data = {str(path / n) for n in os.listdir(path) if not n.startswith(("_", "."))}
    assert data == listed
    for f in listed:
        pq.read_metadata(f)  # a whole Parquet file
    tmp = [os.path.join(d, n) for d, _, names in os.walk(path) for n in names if n.endswith(".tmp")]
    assert tmp == []


def ids(lo: int, n: int) -> Flowable[dict[str, int]]:
    return Flowable.range(lo, n).map(lambda i: {"id": i})


def land(source: Any, path: Path, **kw: Any) -> Any:
    kw.setdefault("engine", "pyarrow")
    kw.setdefault("progress", False)
    kw.setdefault("timeout", 60)
    return to_spark(source, path=str(path), **kw)


def sink(path: Path, batch_rows: int, *, name: str | None = None, hook: Callable[[int], Any] | None = None,
         attempts: int = 2, **kw: Any) -> SparkSink:
    """The Subscriber behind to_spark, for the tests that need its write hook or cancel()."""
    return SparkSink(
        spark=None, path=str(path), table=None, format="parquet", mode="append", batch_rows=batch_rows,
        max_batch_seconds=None, schema=kw.pop("schema", None), name=name, policy=WritePolicy(attempts, 0.0),
        progress=None, write_hook=hook, engine="pyarrow", **kw,
    )


_LAND_SCRIPT = """
import json, sys
import pyarrow.parquet  # imported before "started": the time after it is the landing's
from rstreams import Flowable
from rstreams.spark import to_spark
path, name, lo, n, batch, hold = sys.argv[1], sys.argv[2] or None, int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
src = Flowable.range(lo, n).map(lambda i: {"id": i})
if hold == "hold":
    src = src.concat_with(Flowable.never())  # keeps the landing (and its lease) alive
fut = to_spark(src, path=path, name=name, batch_rows=batch, engine="pyarrow", progress=False, block=False)
print("started", flush=True)
r = fut.result()
print(json.dumps({"rows": r.rows, "skipped": r.skipped_rows, "complete": r.already_complete}), flush=True)
"""


def land_process(path: Path, name: str | None, lo: int, n: int, batch: int, *, hold: bool = False,
                 **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _LAND_SCRIPT, str(path), name or "", str(lo), str(n), str(batch),
         "hold" if hold else "-"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, **env),
    )


def finish(proc: subprocess.Popen[str], timeout: float = 60) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)  # the guard against a hang
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the landing subprocess hung: {err[-2000:]}")
    return proc.returncode, out, err


def result_of(out: str) -> dict[str, Any]:
    return dict(json.loads(out.strip().splitlines()[-1]))


# -- 1. an interrupted landing, then an unrelated one ------------------------------------------------
@pytest.mark.parametrize("how", ["upstream-error", "write-error", "cancel"])
def test_unrelated_unnamed_landing_after_an_interrupted_one_skips_no_row(tmp_path: Path, how: str) -> None:
    hook: Callable[[int], Any] | None = None
    s: SparkSink | None = None
    if how == "write-error":
        def hook(b: int) -> None:
            if b == 2:
                raise OSError("injected write failure")
    elif how == "cancel":
        def hook(b: int) -> None:
            if b == 2:
                assert s is not None
                s.cancel()  # the batch being written still commits; nothing after it
    s = sink(tmp_path, 100, hook=hook)
    src = ids(0, 1000) if how != "upstream-error" else Flowable.concat(ids(0, 200), Flowable.error(Boom()))
    src.subscribe(s)
    with contextlib.suppress(Boom, SinkWriteError):
        s.result(30)
    first = visible(tmp_path)  # committed before the interruption (a cancel lets batch 2 commit)
    assert sorted(first) == list(range(300 if how == "cancel" else 200))

    r = land(ids(10_000, 500), tmp_path, batch_rows=100)  # different data, no name: a new landing
    assert r.skipped_rows == 0 and r.rows == 500 and not r.already_complete
    assert_exactly(tmp_path, first + list(range(10_000, 10_500)))


# -- 2. named landings: re-runs ----------------------------------------------------------------------
def test_completed_named_landing_rerun_lands_nothing_and_duplicates_nothing(tmp_path: Path) -> None:
    first = land(ids(0, 500), tmp_path, name="ids", batch_rows=100)
    assert first.rows == 500 and not first.already_complete
    again = land(ids(0, 500), tmp_path, name="ids", batch_rows=100)
    assert again.already_complete and again.rows == 0 and again.batches == 0
    assert_exactly(tmp_path, range(500))


def test_completed_named_landing_rerun_with_a_different_input_is_input_mismatch(tmp_path: Path) -> None:
    land(ids(0, 500), tmp_path, name="ids", batch_rows=100)
    with pytest.raises(InputMismatchError, match="input differs") as ei:
        land(ids(7000, 500), tmp_path, name="ids", batch_rows=100)
    assert ei.value.landing == "ids" and ei.value.committed_rows == 500
    assert_exactly(tmp_path, range(500))


def test_named_landing_rerun_with_fewer_elements_than_committed_is_input_mismatch(tmp_path: Path) -> None:
    with pytest.raises(Boom):
        land(Flowable.concat(ids(0, 300), Flowable.error(Boom())), tmp_path, name="ids", batch_rows=100)
    assert_exactly(tmp_path, range(300))
    with pytest.raises(InputMismatchError, match="ended after 200 rows") as ei:
        land(ids(0, 200), tmp_path, name="ids", batch_rows=100)
    assert ei.value.committed_rows == 300
    assert_exactly(tmp_path, range(300))  # nothing skipped silently, nothing landed twice


@pytest.mark.parametrize(("step", "committed"), [("commit", 200), ("committed", 300), ("publish", 300), ("metadata", 300)])
def test_crashed_named_landing_rerun_resumes_exactly(tmp_path: Path, step: str, committed: int) -> None:
    crashed = land_process(tmp_path, "ids", 0, 500, 100, RSTREAMS_SINK_FAULT=f"{step}:2")
    code, _, err = finish(crashed)
    assert code == 70, err[-2000:]
    # readers see whole batches: 0-1, plus batch 2 once its metadata entry is written
    assert_exactly(tmp_path, range(300 if step == "metadata" else 200))
    code, out, err = finish(land_process(tmp_path, "ids", 0, 500, 100))
    assert code == 0, err[-2000:]
    assert result_of(out) == {"rows": 500 - committed, "skipped": committed, "complete": False}
    assert_exactly(tmp_path, range(500))
    assert_nothing_half_written(tmp_path)
    assert os.listdir(tmp_path / "_rstreams" / "landings" / "ids" / "staging") == []


# -- 3. concurrent writers -----------------------------------------------------------------------------
def test_second_writer_of_one_name_fails_fast_naming_the_holder_and_a_killed_holder_frees_it_at_once(
    tmp_path: Path,
) -> None:
    holder = land_process(tmp_path, "ids", 0, 100, 50, hold=True)
    try:
        assert holder.stdout is not None
        line = holder.stdout.readline()  # the hang guard is the test timeout
        assert line.strip() == "started", holder.stderr.read() if holder.stderr else ""
        with pytest.raises(LandingInUseError, match=rf"pid {holder.pid}\b") as ei:
            land(ids(0, 300), tmp_path, name="ids", batch_rows=50)
        assert ei.value.landing == "ids" and ei.value.step == "start"
        assert f"pid {holder.pid}" in ei.value.holder
        # a different name is a different landing: it appends alongside the live holder
        other = land(ids(1000, 50), tmp_path, name="other", batch_rows=50)
        assert other.rows == 50
    finally:
        holder.kill()
        holder.wait(30)
    # the kernel dropped the flock with the process: the lease is free now, not after a timeout
    r = land(ids(0, 300), tmp_path, name="ids", batch_rows=50)
    assert r.rows + r.skipped_rows == 300
    assert_exactly(tmp_path, list(range(300)) + list(range(1000, 1050)))


def test_second_writer_of_one_name_in_another_thread_fails_fast(tmp_path: Path) -> None:
    import threading

    release = threading.Event()
    s1 = sink(tmp_path, 50, name="ids", hook=lambda b: release.wait(30))
    ids(0, 100).subscribe(s1)
    try:
        with pytest.raises(LandingInUseError, match=rf"pid {os.getpid()}\b"):
            land(ids(0, 100), tmp_path, name="ids", batch_rows=50)
    finally:
        release.set()
    assert s1.result(30).rows == 100
    assert_exactly(tmp_path, range(100))


def test_two_concurrent_writers_of_two_names_land_the_exact_union(tmp_path: Path) -> None:
    n = 20_000
    a = land_process(tmp_path, "a", 0, n, 500)
    b = land_process(tmp_path, "b", n, n, 500)
    for p in (a, b):
        code, out, err = finish(p, 120)
        assert code == 0, err[-2000:]
        assert result_of(out)["rows"] == n
    assert_exactly(tmp_path, range(2 * n))
    assert_nothing_half_written(tmp_path)


# -- 5. key drift -------------------------------------------------------------------------------------
def test_first_batch_all_keys_become_columns_with_nulls_elsewhere(tmp_path: Path) -> None:
    rows = [{"id": 0}, {"id": 1, "b": "x"}, {"id": 2, "c": 2.5}, {"id": 3}]
    land(Flowable.from_iterable(rows), tmp_path, batch_rows=10)
    t = pa.concat_tables(pq.read_table(f) for f in listed_files(tmp_path)).sort_by("id")
    assert t.column_names == ["id", "b", "c"]
    assert t.to_pylist() == [
        {"id": 0, "b": None, "c": None},
        {"id": 1, "b": "x", "c": None},
        {"id": 2, "b": None, "c": 2.5},
        {"id": 3, "b": None, "c": None},
    ]


def test_key_first_seen_in_a_later_batch_is_schema_mismatch_and_earlier_batches_stay(tmp_path: Path) -> None:
    rows = [{"id": i} for i in range(25)] + [{"id": 25, "extra": "x"}] + [{"id": i} for i in range(26, 40)]
    with pytest.raises(SchemaMismatchError, match="'extra'") as ei:
        land(Flowable.from_iterable(rows), tmp_path, name="drift", batch_rows=10)
    assert ei.value.batch_id == 2 and ei.value.committed_rows == 20
    assert_exactly(tmp_path, range(20))  # nothing of batch 2
    assert_nothing_half_written(tmp_path)
    assert path_schema(str(tmp_path)).names == ["id"]


def test_merge_schema_adds_a_nullable_column_for_a_later_key(tmp_path: Path) -> None:
    rows = [{"id": i} for i in range(25)] + [{"id": 25, "extra": "x"}] + [{"id": i} for i in range(26, 40)]
    r = land(Flowable.from_iterable(rows), tmp_path, batch_rows=10, merge_schema=True)
    assert r.rows == 40
    schema = path_schema(str(tmp_path))
    assert schema.names == ["id", "extra"] and schema.field("extra").nullable
    assert_exactly(tmp_path, range(40))
    extra = {}
    for f in listed_files(tmp_path):
        t = pq.read_table(f)
        if "extra" in t.column_names:
            extra.update(zip(t.column("id").to_pylist(), t.column("extra").to_pylist(), strict=True))
    assert {k: v for k, v in extra.items() if v is not None} == {25: "x"}


# -- 6. type drift --------------------------------------------------------------------------------------
def test_type_drift_between_batches_is_schema_mismatch_before_commit_and_the_path_stays_readable(
    tmp_path: Path,
) -> None:
    rows = [{"id": i, "v": i} for i in range(10)] + [{"id": 10, "v": "three"}]
    with pytest.raises(SchemaMismatchError, match="'v'") as ei:
        land(Flowable.from_iterable(rows), tmp_path, batch_rows=10)
    assert ei.value.batch_id == 1 and ei.value.committed_rows == 10
    t = pq.read_table(tmp_path)  # pyarrow reads the whole path: one type per column
    assert t.schema.field("v").type == pa.int64() and sorted(t.column("id").to_pylist()) == list(range(10))
    assert_exactly(tmp_path, range(10))


def test_type_drift_within_one_batch_names_the_row(tmp_path: Path) -> None:
    rows = [{"id": 0, "v": 1}, {"id": 1, "v": 2}, {"id": 2, "v": "three"}]
    with pytest.raises(SchemaMismatchError, match=r"row 2 has 'three'") as ei:
        land(Flowable.from_iterable(rows), tmp_path, batch_rows=10)
    assert ei.value.batch_id == 0 and ei.value.committed_rows == 0
    assert visible(tmp_path) == []


def test_type_drift_across_landings_into_one_path_is_refused(tmp_path: Path) -> None:
    land(Flowable.from_iterable([{"id": 0, "v": 1}]), tmp_path)
    with pytest.raises(SchemaMismatchError, match="'v'"):
        land(Flowable.from_iterable([{"id": 1, "v": "one"}]), tmp_path)
    assert_exactly(tmp_path, [0])
    assert pq.read_table(tmp_path).schema.field("v").type == pa.int64()


def test_int_into_a_float_column_is_cast(tmp_path: Path) -> None:
    rows = [{"id": 0, "v": 1.5}, {"id": 1, "v": 2}]
    land(Flowable.from_iterable(rows), tmp_path, batch_rows=1)
    t = pq.read_table(tmp_path).sort_by("id")
    assert t.schema.field("v").type == pa.float64() and t.column("v").to_pylist() == [1.5, 2.0]


def test_fraction_into_an_int_column_is_refused(tmp_path: Path) -> None:
    rows = [{"id": 0, "v": 1}, {"id": 1, "v": 1.5}]
    with pytest.raises(SchemaMismatchError, match="'v'") as ei:
        land(Flowable.from_iterable(rows), tmp_path, batch_rows=1)
    assert ei.value.batch_id == 1
    assert pq.read_table(tmp_path).column("v").to_pylist() == [1]


# -- 7. the error contract -------------------------------------------------------------------------------
class Disk:
    """A directory that can be made full (and freed again): a real tmpfs, or a double that makes
    every write under it fail with ENOSPC (os.write for the commit entries and logs, pyarrow's
    Parquet writer for the data, leaving a partial file as a full disk does)."""

    def __init__(self, root: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.kind = kind
        self.full = False
        if kind == "double":
            real_write, real_write_table = os.write, pq.write_table

            def under_root(fd: int) -> bool:
                with contextlib.suppress(OSError):
                    return os.readlink(f"/proc/self/fd/{fd}").startswith(str(root))
                return False

            def write(fd: int, data: Any) -> int:
                if self.full and under_root(fd):
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                return real_write(fd, data)

            def write_table(table: Any, where: Any, *a: Any, **k: Any) -> None:
                if self.full and str(where).startswith(str(root)):
                    with open(where, "wb") as f:
                        f.write(b"PAR1\0\0")  # a partial file, as a writer that ran out of space leaves
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(where))
                real_write_table(table, where, *a, **k)

            monkeypatch.setattr(os, "write", write)
            monkeypatch.setattr(pq, "write_table", write_table)

    def fill(self) -> None:
        if self.full:
            return
        if self.kind == "double":
            self.full = True
            return
        fd = os.open(self.root / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            for chunk in (1 << 16, 1 << 12, 1):
                data = b"\0" * chunk
                with contextlib.suppress(OSError):
                    while True:
                        os.write(fd, data)
        finally:
            os.close(fd)
        self.full = True

    def free(self) -> None:
        self.full = False
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.root / "filler")


@contextlib.contextmanager
def tmpfs(where: Path, size: str = "4m") -> Iterator[Path]:
    """A small tmpfs mounted at ``where`` (root only); skips the test when it cannot be mounted."""
    if os.geteuid() != 0:
        pytest.skip("a real tmpfs needs root (mount); the 'double' variant of this test covers the same path")
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"mount -t tmpfs failed ({done.stderr.strip()}); the 'double' variant covers the same path")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@contextlib.contextmanager
def disk(tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Disk]:
    if kind == "tmpfs":
        with tmpfs(tmp_path / "mnt") as root:
            d = Disk(root, kind, monkeypatch)
            try:
                yield d
            finally:
                d.free()
    else:
        root = tmp_path / "dbl"
        root.mkdir()
        yield Disk(root, kind, monkeypatch)


@pytest.mark.parametrize("kind", ["tmpfs", "double"])
@pytest.mark.parametrize("step", ["write", "commit", "publish"])
def test_full_disk_is_a_sink_write_error_naming_the_batch_and_a_rerun_lands_exactly_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, step: str
) -> None:
    """The disk fills before batch k's data files are written, before its commit entry is
    written (its files are), or before it is listed in _spark_metadata (it is committed)."""
    n, batch, k = 1000, 100, 3
    committed = (k + 1) * batch if step == "publish" else k * batch
    with disk(tmp_path, kind, monkeypatch) as d:
        path = d.root / "data"

        def fill_before_write(b: int) -> None:
            if step == "write" and b == k:
                d.fill()

        if step != "write":
            real = getattr(Landing, step)

            def fill_first(self: Landing, entry: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
                if entry["batch_id"] == k:
                    d.fill()
                return real(self, entry, *args, **kwargs)

            monkeypatch.setattr(Landing, step, fill_first)
        s = sink(path, batch, name="load", hook=fill_before_write)
        payload = "x" * 200
        Flowable.range(0, n).map(lambda i: {"id": i, "p": payload}).subscribe(s)
        with pytest.raises(SinkWriteError) as ei:
            s.result(30)
        e = ei.value
        assert type(e) is SinkWriteError
        assert (e.batch_id, e.step, e.committed_rows, e.landing) == (k, step, committed, "load")
        assert isinstance(e.__cause__, OSError) and e.__cause__.errno == errno.ENOSPC
        assert f"micro-batch {k}" in str(e) and "name='load'" in str(e)
        assert_exactly(path, range(k * batch))  # what readers see: whole batches before k
        if step == "publish":
            assert "committed and visible" not in str(e)
            # batch k's files were renamed in before the log append failed: whole files, unlisted
            unlisted = {n for n in os.listdir(path) if not n.startswith("_")} - {
                os.path.basename(f) for f in listed_files(path)
            }
            assert unlisted and all(f"-b{k:08d}-" in n for n in unlisted)
            assert sum(pq.read_metadata(path / n).num_rows for n in unlisted) == batch
        else:
            assert_nothing_half_written(path)

        d.free()
        monkeypatch.undo()  # the disk double and the fill hooks: a plain re-run from here
        r = land(Flowable.range(0, n).map(lambda i: {"id": i, "p": payload}), path, name="load", batch_rows=batch)
        assert r.skipped_rows == committed and r.rows == n - committed
        assert_exactly(path, range(n))
        assert_nothing_half_written(path)


@pytest.mark.parametrize("kind", ["tmpfs", "double"])
def test_read_only_path_is_a_sink_write_error_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    with contextlib.ExitStack() as stack:
        if kind == "tmpfs":
            root = stack.enter_context(tmpfs(tmp_path / "mnt"))
        else:
            root = tmp_path / "dbl"
            root.mkdir()
        land(ids(0, 100), root / "data", name="ids", batch_rows=50)
        if kind == "tmpfs":
            done = subprocess.run(["mount", "-o", "remount,ro", str(root)], capture_output=True, text=True)
            assert done.returncode == 0, f"remount,ro failed (a file still open for writing?): {done.stderr}"
        else:
            real_open, real_mkdir = os.open, os.mkdir

            def ro_open(p: Any, flags: int, *a: Any, **k: Any) -> int:
                if str(p).startswith(str(root)) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
                    raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(p))
                return real_open(p, flags, *a, **k)

            def ro_mkdir(p: Any, *a: Any, **k: Any) -> None:
                if str(p).startswith(str(root)):
                    raise OSError(errno.EEXIST if os.path.exists(p) else errno.EROFS, "read-only", str(p))
                real_mkdir(p, *a, **k)

            monkeypatch.setattr(os, "open", ro_open)
            monkeypatch.setattr(os, "mkdir", ro_mkdir)
        for target, name in ((root / "data", "ids"), (root / "data", None), (root / "new", None)):
            with pytest.raises(SinkWriteError) as ei:
                land(ids(100, 100), target, name=name, batch_rows=50)
            assert ei.value.step == "start" and ei.value.batch_id is None, str(ei.value)
            assert isinstance(ei.value.__cause__, OSError) and ei.value.__cause__.errno == errno.EROFS
        monkeypatch.undo()
        assert_exactly(root / "data", range(100))  # still readable, nothing changed


def test_tuples_of_different_widths_are_a_schema_mismatch_naming_the_row(tmp_path: Path) -> None:
    rows = [(0, "a"), (1, "b"), (2,)]
    with pytest.raises(SchemaMismatchError, match=r"row 2 is a tuple of 1 values") as ei:
        land(Flowable.from_iterable(rows), tmp_path, batch_rows=10)
    assert ei.value.batch_id == 0 and ei.value.committed_rows == 0


def test_a_value_arrow_cannot_convert_is_a_schema_mismatch_naming_the_row(tmp_path: Path) -> None:
    rows = [{"v": 1}, {"v": 2**70}]
    with pytest.raises(SchemaMismatchError, match=r"row 1 has 1180591620717411303424"):
        land(Flowable.from_iterable(rows), tmp_path, batch_rows=10)


def test_a_path_that_is_a_file_is_a_value_error_at_call_time(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("not a directory")
    subscribed: list[bool] = []
    with pytest.raises(ValueError, match="is a file") as ei:
        land(ids(0, 10).do_on_subscribe(lambda _: subscribed.append(True)), f)
    assert not isinstance(ei.value, SinkWriteError) and subscribed == []
    assert f.read_text() == "not a directory"


def test_a_landing_releases_its_lease_before_its_result_arrives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A re-run started the moment the result (or the error) arrives finds the lease free: a slow
    release widens the window in which a lease released after the result was still held."""
    import time

    real_release = SparkSink._release

    def slow_release(self: SparkSink) -> None:
        time.sleep(0.2)
        real_release(self)

    monkeypatch.setattr(SparkSink, "_release", slow_release)
    assert land(ids(0, 100), tmp_path, name="ids", batch_rows=50).rows == 100
    assert land(ids(0, 100), tmp_path, name="ids", batch_rows=50).already_complete
    with pytest.raises(Boom):
        land(Flowable.concat(ids(100, 100), Flowable.error(Boom())), tmp_path, name="more", batch_rows=50)
    assert land(ids(100, 100), tmp_path, name="more", batch_rows=50).skipped_rows == 100
    assert_exactly(tmp_path, range(200))


# -- leftovers of killed writers, schemas of batches that never landed, lossy temporal values ------
def test_temp_files_left_by_a_killed_writer_are_removed_by_the_next_start(tmp_path: Path) -> None:
    to_spark(ids(0, 30), path=str(tmp_path), name="a", batch_rows=10, engine="pyarrow", progress=False)
    # what a writer killed inside write_atomic leaves: temp files in the Spark log (written under
    # the path lock) and in the landing's commit log (written under its lease)
    meta_tmp = tmp_path / "_spark_metadata" / ".3.deadbeef.tmp"
    commit_tmp = tmp_path / "_rstreams" / "landings" / "a" / "commits" / ".00000003.json.deadbeef.tmp"
    meta_tmp.write_text("v1\n{")
    commit_tmp.write_text("{")
    r = to_spark(ids(0, 30), path=str(tmp_path), name="a", batch_rows=10, engine="pyarrow", progress=False)
    assert r.already_complete and r.rows == 0
    assert not meta_tmp.exists() and not commit_tmp.exists()
    assert_exactly(tmp_path, range(30))
    assert_nothing_half_written(tmp_path)


def test_a_first_batch_that_fails_to_write_does_not_fix_the_paths_schema(tmp_path: Path) -> None:
    def fail(batch_id: int) -> None:
        raise OSError(errno.EIO, "disk gone")

    s = SparkSink(
        spark=None, path=str(tmp_path), table=None, format="parquet", mode="append", batch_rows=10,
        max_batch_seconds=None, schema=None, policy=WritePolicy(1, 0.0), progress=None, write_hook=fail,
        engine="pyarrow",
    )
    Flowable.range(0, 5).map(lambda i: {"v": i}).subscribe(s)
    with pytest.raises(SinkWriteError, match="failed at the write step"):
        s.result(30)
    assert path_schema(str(tmp_path)) is None
    # so a later landing of another type into the still empty path is accepted
    r = to_spark(Flowable.just({"v": "three"}), path=str(tmp_path), engine="pyarrow", progress=False)
    assert r.rows == 1 and visible(tmp_path, "v") == ["three"]


def test_datetimes_that_the_schema_cannot_hold_whole_are_refused_not_truncated(tmp_path: Path) -> None:
    import datetime as dt

    schema = pa.schema([("t", pa.timestamp("s")), ("d", pa.date32())])
    ok = {"t": dt.datetime(2026, 1, 1, 1, 2, 3), "d": dt.date(2026, 1, 2)}
    r = to_spark(Flowable.just(ok), path=str(tmp_path), schema=schema, engine="pyarrow", progress=False)
    assert r.rows == 1
    for bad, column in (
        ({"t": dt.datetime(2026, 1, 1, 1, 2, 3, 500_000), "d": None}, "t"),  # sub-second into timestamp[s]
        ({"t": None, "d": dt.datetime(2026, 1, 1, 13, 0)}, "d"),  # a time of day into date32
    ):
        with pytest.raises(SchemaMismatchError, match=rf"column '{column}': row 0 .* without losing part of it"):
            to_spark(Flowable.just(bad), path=str(tmp_path), engine="pyarrow", progress=False)
    assert pq.read_table(listed_files(tmp_path)[0]).to_pylist() == [ok]


# -- overwrite: what it replaces, with other landings around it ------------------------------------
_OVERWRITE_SCRIPT = """
import sys
from rstreams import Flowable
from rstreams.spark import to_spark
to_spark(Flowable.range(1000, 10).map(lambda i: {"id": i}), path=sys.argv[1], name="ow", mode="overwrite",
         batch_rows=10, engine="pyarrow", progress=False)
"""


def test_overwrite_rolled_forward_late_keeps_what_other_landings_published_after_its_commit(tmp_path: Path) -> None:
    from rstreams.testing import TestPublisher

    land(ids(0, 10), tmp_path, batch_rows=10)  # before the overwrite: replaced by it
    tp: TestPublisher[dict[str, int]] = TestPublisher.create()
    z = SparkSink(
        spark=None, path=str(tmp_path), table=None, format="parquet", mode="append", batch_rows=10,
        max_batch_seconds=None, schema=None, name="z", policy=WritePolicy(1, 0.0), progress=None, engine="pyarrow",
    )
    tp.subscribe(z)  # a landing already running when the overwrite commits
    commits = tmp_path / "_rstreams" / "landings" / "z" / "commits"

    def emit(lo: int, batches_after: int) -> None:
        for i in range(lo, lo + 10):
            tp.next({"id": i})  # one by one: the sink asks for 1 element first, then the rest
        deadline = time.monotonic() + 30
        while len([n for n in os.listdir(commits) if n.endswith(".json")]) < batches_after:
            assert time.monotonic() < deadline, "z's batch was not committed"
            time.sleep(0.01)

    emit(100, 1)
    # the overwrite commits its batch 0 and dies before switching the log
    done = subprocess.run([sys.executable, "-c", _OVERWRITE_SCRIPT, str(tmp_path)], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ, RSTREAMS_SINK_FAULT="committed:0"))
    assert done.returncode == 70, done.stderr
    emit(200, 2)  # published after the overwrite's commit
    tp.complete()
    assert z.result(30).rows == 20
    land(ids(300, 5), tmp_path, batch_rows=10)  # the next landing rolls the dead overwrite forward
    # what readers saw at the overwrite's commit (ids 0..9, z's first batch) is gone; the
    # overwrite's rows and everything published after its commit stay
    seen = sorted(visible(tmp_path))
    assert set(range(1000, 1010)) <= set(seen) and set(range(200, 210)) <= set(seen) and set(range(300, 305)) <= set(seen)
    assert not set(range(0, 10)) & set(seen) and not set(range(100, 110)) & set(seen)
    assert len(seen) == len(set(seen)) == 25
    assert_nothing_half_written(tmp_path)


def test_overwrite_with_an_empty_input_leaves_an_empty_path(tmp_path: Path) -> None:
    land(ids(0, 30), tmp_path, batch_rows=10)
    r = to_spark(Flowable.empty(), path=str(tmp_path), mode="overwrite", engine="pyarrow", progress=False)
    assert r.rows == 0 and visible(tmp_path) == []
    assert_nothing_half_written(tmp_path)


def test_a_named_table_overwrite_is_refused_at_call_time() -> None:
    with pytest.raises(ValueError, match="cannot be resumed; run it without name="):
        to_spark(Flowable.just({"id": 1}), table="t", mode="overwrite", name="daily", spark=object(), progress=False)
