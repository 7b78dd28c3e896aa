"""``rstreams demo``, the main job on Spark: the same pipeline function locally and on the executors,
exact counts for both placements and both modes (synthetic and file inputs with bad and late
records) checked against an independent model of the watermark, Spark's windows and the dead
letters, clear errors for a bad ``--input`` / ``--out``, re-runs that replace their output, the
CLI and the progress lines.

All runs share the session of ``conftest.spark`` (``demo.run`` reuses a running session, leaves
its configuration alone and does not stop it). ``local-cluster`` runs are in test_local_cluster.py.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from rstreams import Flowable, cli, demo
from rstreams.demo_pipeline import COUNTRIES, EVENT_DDL, pipeline, synthetic_event
from rstreams.spark import run_on_spark
from rstreams.spark._progress import StatusBoard
from rstreams.testing import TestSubscriber

pytestmark = pytest.mark.spark

T0 = 1_700_000_000  # a multiple of the window length: window starts are T0, T0 + 10, ...
W = demo.WINDOW_SECONDS
LATENESS = demo.ALLOWED_LATENESS_SECONDS

# (id, ts, user, kind, amount); users 0 / 1 / 2 are looked up as DE / FR / US
GOOD: list[tuple[int, float, int, str, float]] = [
    (1, T0 + 1, 0, "view", 1.5),
    (2, T0 + 2, 1, "click", 2.25),
    (3, T0 + 12, 0, "view", 3.0),
    (4, T0 + 5, 0, "view", 4.0),  # out of order, within the allowed lateness: still in window T0
    (5, T0 + 25, 2, "buy", 10.0),
    (6, T0 + 21, 2, "buy", 0.0),  # zero is a valid amount
    (7, T0 + 200, 1, "cart", 1.0),
]
LATE = (8, T0 + 3, 1, "view", 1.0)  # after T0 + 200: the watermark (T0 + 140) is past its window's end
# (window_start, country, kind) -> (events, amount)
EXPECTED_WINDOWS = {
    (T0, "DE", "view"): (2, 5.5),
    (T0, "FR", "click"): (1, 2.25),
    (T0 + 10, "DE", "view"): (1, 3.0),
    (T0 + 20, "US", "buy"): (2, 10.0),
    (T0 + 200, "FR", "cart"): (1, 1.0),
}
FIELDS = ("id", "ts", "user", "kind", "amount")


def _event(row: tuple[int, float, int, str, float]) -> dict[str, Any]:
    return dict(zip(FIELDS, row, strict=True))


def _landed(spark: Any, out: Path) -> dict[tuple[int, str, str], tuple[int, float]]:
    """The landed windows, keyed by (window_start, country, kind); fails on a duplicate key."""
    rows = spark.read.parquet(str(out / "windows")).collect()
    landed = {(r.window_start, r.country, r.kind): (r.events, r.amount) for r in rows}
    assert len(landed) == len(rows), f"duplicate (window, country, kind) rows landed: {rows}"
    return landed


def _run(out: Path, **kw: Any) -> dict[str, Any]:
    return demo.run(out=str(out), quiet=True, **kw)


def _no_running_jobs(spark: Any) -> None:
    tracker = spark.sparkContext.statusTracker()
    deadline = time.monotonic() + 10
    while tracker.getActiveJobsIds() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert tracker.getActiveJobsIds() == []


# -- an independent model of what the job must produce --------------------------------------------


def _reason_kind(reason: str) -> str:
    return "unparsable" if reason.startswith("unparsable") else reason


class Model:
    """Valid events in arrival order, grouped in micro-batches (batch mode: one event per
    micro-batch, i.e. the watermark moves with every event); the watermark is the latest event
    time of the earlier micro-batches minus the allowed lateness, and an event is late when its
    window ended at or before it."""

    def __init__(self, batches: list[list[tuple[float, int, str, float]]]) -> None:
        latest = -math.inf
        self.late = 0
        self.windows: dict[tuple[int, str, str], list[float]] = {}
        for batch in batches:
            watermark = latest - LATENESS
            for ts, user, kind, amount in batch:
                start = int(math.floor(ts / W) * W)
                if start + W <= watermark:
                    self.late += 1
                    continue
                acc = self.windows.setdefault((start, COUNTRIES[user % len(COUNTRIES)], kind), [0, 0.0])
                acc[0] += 1
                acc[1] += amount
            latest = max([latest, *(e[0] for e in batch)])
        self.on_time = sum(int(v[0]) for v in self.windows.values())

    def assert_windows(self, landed: dict[tuple[int, str, str], tuple[int, float]]) -> None:
        assert set(landed) == set(self.windows)
        for key, (events, amount) in landed.items():
            assert events == self.windows[key][0], key
            assert amount == pytest.approx(self.windows[key][1], abs=0.011), key


def _synthetic(n: int, micro_batch: int | None = None) -> tuple[Counter[str], Model]:
    """What ``n`` synthetic events must give: the bad ones by reason (classified here, not by
    the demo's parser) and the model of the valid ones (in micro-batches of ``micro_batch``
    records, or one event at a time)."""
    faults: Counter[str] = Counter()
    batches: list[list[tuple[float, int, str, float]]] = [[] for _ in range(math.ceil(n / (micro_batch or 1)))]
    for i in range(n):
        try:
            ev = json.loads(synthetic_event(i))
        except ValueError:
            faults["unparsable"] += 1
            continue
        if "user" not in ev:
            faults["missing field 'user'"] += 1
        elif ev["amount"] < 0:
            faults["negative amount"] += 1
        else:
            batches[i // (micro_batch or 1)].append((float(ev["ts"]), ev["user"], ev["kind"], float(ev["amount"])))
    return faults, Model(batches)


def _check_run(landed: dict[tuple[int, str, str], tuple[int, float]], out: Path, s: dict[str, Any], n: int,
               faults: Counter[str], model: Model) -> None:
    """The summary, the landed windows and the dead letters of a run over ``n`` synthetic events."""
    bad = sum(faults.values())
    assert s["records_in"] == n
    assert s["bad"] == bad > 0
    assert s["valid"] == n - bad
    assert s["late"] == model.late > 0
    assert s["dead_lettered"] == bad + model.late
    assert s["events_in_windows"] == model.on_time == s["valid"] - s["late"]
    assert len(landed) == s["windows_landed"]
    model.assert_windows(landed)
    dead = demo.read_dead_letters(str(out))
    assert len(dead) == s["dead_lettered"]
    kinds = Counter(_reason_kind(d["reason"]) for d in dead if not d["reason"].startswith("late event"))
    assert kinds == faults
    late = [d for d in dead if d["reason"].startswith("late event")]
    assert len(late) == model.late
    for d in late:  # a late record is dead-lettered as the parsed event, with its window and watermark
        assert set(d["record"]) == set(FIELDS)
        assert "had closed: the watermark" in d["reason"]


# -- one pipeline function, two placements -----------------------------------------------------------


def test_pipeline_on_the_executors_gives_the_rows_of_the_local_pipeline(spark: Any) -> None:
    records: list[tuple[int, Any]] = [(i, synthetic_event(i)) for i in range(9_000)]
    records += [(20_000, "{oops"), (20_001, "[1]"), (20_002, json.dumps(_event(GOOD[0])))]
    df = spark.createDataFrame(records, "seq long, raw string").repartition(1)  # > 8192 rows in a partition

    on_spark = sorted(tuple(r) for r in run_on_spark(df, pipeline, schema=EVENT_DDL).collect())

    ts: TestSubscriber[tuple[Any, ...]] = TestSubscriber()
    pipeline(Flowable.from_iterable(records)).subscribe(ts)
    ts.await_done(60).assert_complete().assert_no_errors().assert_no_violations()
    local = sorted(ts.values)
    assert on_spark == local
    assert len(local) == len(records)  # one row per record: nothing dropped
    assert {r[7] is None for r in local} == {True, False}


def test_pipeline_keeps_input_order_and_marks_each_bad_record(spark: Any) -> None:
    ts: TestSubscriber[tuple[Any, ...]] = TestSubscriber(initial_request=3)
    records = [(0, "{oops"), (1, json.dumps(_event(GOOD[1]))), (2, {"id": "x", "ts": 1, "user": 1, "kind": "view", "amount": 1})]
    pipeline(Flowable.from_iterable(records)).subscribe(ts)
    ts.await_done(30).assert_complete().assert_no_violations()
    rows = ts.values
    assert [r[0] for r in rows] == [0, 1, 2]
    assert rows[0][7].startswith("unparsable") and json.loads(rows[0][8]) == {"reason": rows[0][7], "record": "{oops"}
    assert rows[1][6] == "FR" and rows[1][7] is None and rows[1][8] is None
    assert rows[2][7].startswith("bad value for 'id'") and json.loads(rows[2][8])["record"]["id"] == "x"


# -- batch mode: exact counts ----------------------------------------------------------------------------


def test_batch_on_the_executors_synthetic_exact_counts(spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import SparkSession

    shuffle_partitions = spark.conf.get("spark.sql.shuffle.partitions")
    n = 20_000
    faults, model = _synthetic(n)
    s = _run(tmp_path, rows=n, partitions=3)

    # the demo used the shared session, did not reconfigure it and did not stop it
    assert spark.conf.get("spark.sql.shuffle.partitions") == shuffle_partitions
    assert SparkSession.getActiveSession() is spark
    assert spark.range(1).count() == 1

    _check_run(_landed(spark, tmp_path), tmp_path, s, n, faults, model)
    assert (s["mode"], s["placement"]) == ("batch", "executors")
    # the pipeline ran in Spark's Python workers, not in this process
    assert s["pipeline_python_pids"] and os.getpid() not in s["pipeline_python_pids"]
    assert s["driver_pid"] == os.getpid()
    assert s["records_per_second"] > 0 and s["peak_driver_rss_mb"] > 0
    assert s["output"] == str(tmp_path)


@pytest.mark.parametrize("placement", ["driver", "local"])
def test_batch_in_the_driver_gives_the_output_of_the_executors(spark: Any, tmp_path: Path, placement: str) -> None:
    # driver: the pipeline here, then the Spark stages; local: the whole job here (tumbling_window)
    n = 6_000
    faults, model = _synthetic(n)
    drv = _run(tmp_path / "driver", rows=n, placement=placement)
    exe = _run(tmp_path / "executors", rows=n, partitions=4)
    _check_run(_landed(spark, tmp_path / "driver"), tmp_path / "driver", drv, n, faults, model)
    assert drv["pipeline_python_pids"] == [os.getpid()]
    for key in ("records_in", "valid", "bad", "late", "dead_lettered", "windows_landed", "events_in_windows"):
        assert drv[key] == exe[key], key
    assert _landed(spark, tmp_path / "driver") == _landed(spark, tmp_path / "executors")
    key = json.dumps
    assert sorted(map(key, demo.read_dead_letters(str(tmp_path / "driver")))) == sorted(
        map(key, demo.read_dead_letters(str(tmp_path / "executors")))
    )


# -- --input: CSV, JSON lines, Parquet -----------------------------------------------------------


def _write_jsonl(path: Path) -> list[str]:
    """Known content; returns the expected dead-letter reasons, in file order."""
    lines = [json.dumps(_event(r)) for r in GOOD]
    lines += [
        "{not json",
        json.dumps({"id": 100, "ts": T0 + 1, "kind": "view", "amount": 1.0}),
        json.dumps({"id": 101, "ts": T0 + 1, "user": "abc", "kind": "view", "amount": 1.0}),
        json.dumps({"id": 102, "ts": T0 + 1, "user": 1, "kind": "view", "amount": -3.5}),
        json.dumps({"id": 103, "ts": T0 + 1, "user": 1, "kind": "teleport", "amount": 1.0}),
        "[1, 2, 3]",
        "",  # blank lines are skipped, not records
        "  \t",
        json.dumps(_event(LATE)),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8-sig")  # a BOM is not part of line 1
    return [
        "unparsable",
        "missing field 'user'",
        "bad value for 'user'",
        "negative amount",
        "unknown kind 'teleport'",
        "not a JSON object",
        "late event",
    ]


def _write_csv(path: Path) -> list[str]:
    with open(path, "w", newline="", encoding="utf-8-sig") as f:  # with a BOM, as spreadsheets write
        w = csv.writer(f)
        w.writerow(FIELDS)
        w.writerows(GOOD)
        w.writerow(["garbage"])  # malformed: one field where five belong
        w.writerow([100, T0 + 1, "", "view", 1.0])
        w.writerow([101, T0 + 1, "abc", "view", 1.0])
        w.writerow([102, T0 + 1, 1, "view", -3.5])
        w.writerow([103, T0 + 1, 1, "teleport", 1.0])
        w.writerow(LATE)
    return [
        "missing field 'ts'",
        "missing field 'user'",
        "bad value for 'user'",
        "negative amount",
        "unknown kind 'teleport'",
        "late event",
    ]


def _write_parquet(path: Path) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    records = [_event(r) for r in GOOD] + [
        {"id": 100, "ts": T0 + 1, "user": None, "kind": "view", "amount": 1.0},
        {"id": 101, "ts": math.nan, "user": 1, "kind": "view", "amount": 1.0},
        {"id": 102, "ts": T0 + 1, "user": 1, "kind": "view", "amount": -3.5},
        {"id": 103, "ts": T0 + 1, "user": 1, "kind": "teleport", "amount": 1.0},
        _event(LATE),
    ]
    schema = pa.schema(
        [("id", pa.int64()), ("ts", pa.float64()), ("user", pa.int64()), ("kind", pa.string()), ("amount", pa.float64())]
    )
    pq.write_table(pa.Table.from_pylist(records, schema=schema), path, row_group_size=4)
    return ["missing field 'user'", "bad value for 'ts'", "negative amount", "unknown kind 'teleport'", "late event"]


def _check_file_run(spark: Any, out: Path, s: dict[str, Any], name: str, reasons: list[str]) -> None:
    assert s["records_in"] == len(GOOD) + len(reasons)
    assert s["valid"] == len(GOOD) + 1
    assert s["bad"] == len(reasons) - 1 and s["late"] == 1
    assert s["dead_lettered"] == len(reasons)
    assert _landed(spark, out) == EXPECTED_WINDOWS
    assert s["windows_landed"] == len(EXPECTED_WINDOWS)
    assert s["events_in_windows"] == len(GOOD)

    dead = demo.read_dead_letters(str(out))
    got = [d["reason"] for d in dead]
    assert len(got) == len(reasons)
    for want, have in zip(reasons, got, strict=True):
        assert have.startswith(want), (want, got)
    # each bad record is dead-lettered whole, as it was read; a late one as the parsed event
    late = dead[-1]["record"]
    assert (late["id"], late["ts"], late["user"], late["kind"], late["amount"]) == (8, T0 + 3, 1, "view", 1.0)
    assert dead[-1]["reason"].startswith(
        f"late event: its window [{T0}, {T0 + 10}) had closed: the watermark passed its end when the record at event time {T0 + 200}.000 arrived"
    )
    if name.endswith(".jsonl"):
        assert dead[0]["record"] == "{not json"
        assert json.loads(dead[2]["record"])["user"] == "abc"
    elif name.endswith(".csv"):
        assert dead[0]["record"]["id"] == "garbage" and dead[0]["record"]["ts"] is None
        assert dead[2]["record"] == {"id": "101", "ts": str(T0 + 1), "user": "abc", "kind": "view", "amount": "1.0"}
    else:
        assert dead[0]["record"] == {"id": 100, "ts": T0 + 1, "user": None, "kind": "view", "amount": 1.0}


@pytest.mark.parametrize(
    ("name", "writer"),
    [("events.jsonl", _write_jsonl), ("events.csv", _write_csv), ("events.parquet", _write_parquet)],
)
def test_input_file_on_the_executors_exact_counts(spark: Any, tmp_path: Path, name: str, writer: Any) -> None:
    src = tmp_path / name
    reasons = writer(src)
    out = tmp_path / "out"
    s = _run(out, input_path=str(src))
    _check_file_run(spark, out, s, name, reasons)


@pytest.mark.parametrize(("name", "writer"), [("events.jsonl", _write_jsonl), ("events.parquet", _write_parquet)])
def test_input_file_whole_job_in_this_process_exact_counts(spark: Any, tmp_path: Path, name: str, writer: Any) -> None:
    # --pipeline local: the windows by tumbling_window, the late record through its late= channel,
    # with the same reason (naming the record whose event time closed the window) as Spark's stages
    src = tmp_path / name
    reasons = writer(src)
    out = tmp_path / "out"
    s = _run(out, input_path=str(src), placement="local")
    assert s["placement"] == "local"
    _check_file_run(spark, out, s, name, reasons)


def test_local_placement_has_no_streaming_mode(tmp_path: Path) -> None:
    with pytest.raises(demo.DemoError, match="batch mode only"):
        _run(tmp_path / "out", rows=10, streaming=True, placement="local")


def test_input_with_no_valid_record_lands_no_window(spark: Any, tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    s = _run(tmp_path / "out0", input_path=str(empty))
    assert (s["records_in"], s["dead_lettered"], s["windows_landed"]) == (0, 0, 0)

    src = tmp_path / "bad.jsonl"
    src.write_text("{oops\nnull\n" + json.dumps({"id": 1, "ts": "Infinity", "user": 1, "kind": "view", "amount": 1}) + "\n")
    s = _run(tmp_path / "out", input_path=str(src), placement="driver")
    assert (s["records_in"], s["valid"], s["dead_lettered"]) == (3, 0, 3)
    assert s["windows_landed"] == s["events_in_windows"] == 0
    assert [d["reason"].split(":")[0] for d in demo.read_dead_letters(str(tmp_path / "out"))] == [
        "unparsable",
        "not a JSON object but NoneType",
        "bad value for 'ts'",
    ]


# -- streaming mode: exact counts ------------------------------------------------------------------------


def test_streaming_rate_source_on_the_executors_exact_counts(spark: Any, tmp_path: Path) -> None:
    n, per_batch = 2_000, 1_000
    faults, model = _synthetic(n, micro_batch=per_batch)
    s = _run(tmp_path, rows=n, streaming=True, batch_rows=per_batch)
    assert (s["mode"], s["placement"]) == ("streaming", "executors")
    assert s["micro_batches"] == n // per_batch == 2
    _check_run(_landed(spark, tmp_path), tmp_path, s, n, faults, model)
    assert os.getpid() not in s["pipeline_python_pids"]
    assert not [q for q in spark.streams.active], "the demo's streaming queries are stopped"


def test_streaming_file_source_in_the_driver_exact_counts(spark: Any, tmp_path: Path) -> None:
    """One file per micro-batch: Spark's watermark moves between files, so an event late in the
    batch mode (the watermark moves with every event) may be on time here, and a window ending
    exactly at the watermark is closed."""
    src = tmp_path / "in"
    src.mkdir()
    files = [
        [_event(GOOD[0]), _event(GOOD[1]), "{oops", _event(GOOD[2]), _event(GOOD[3])],
        [_event(GOOD[4]), _event(GOOD[5]), _event(GOOD[6]), _event((20, T0 + 4, 0, "view", 1.0))],  # T0 + 4: on time (watermark T0 - 48)
        [_event(LATE), _event((9, T0 + 145, 2, "view", 2.0)), _event((10, T0 + 131, 2, "view", 1.0))],  # watermark T0 + 140
    ]
    for k, records in enumerate(files):
        p = src / f"part-{k}.jsonl"
        p.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
        os.utime(p, (T0 + k, T0 + k))  # Spark's file source takes the oldest file first
    s = _run(tmp_path / "out", input_path=str(src), streaming=True, placement="driver")
    assert (s["mode"], s["placement"], s["micro_batches"]) == ("streaming", "driver", 3)
    assert (s["records_in"], s["bad"], s["late"]) == (12, 1, 2)
    expected = dict(EXPECTED_WINDOWS)
    expected[(T0, "DE", "view")] = (3, 6.5)
    expected[(T0 + 140, "US", "view")] = (1, 2.0)
    assert _landed(spark, tmp_path / "out") == expected
    dead = demo.read_dead_letters(str(tmp_path / "out"))
    assert [d["reason"].split(":")[0] for d in dead] == ["unparsable", "late event", "late event"]
    assert sorted(d["record"]["id"] for d in dead[1:]) == [8, 10]  # T0 + 131: its window ends at the watermark
    assert s["pipeline_python_pids"] == [os.getpid()]


# -- bad --input / --out: a clear error before Spark does anything --------------------------------


def _parquet_without_user(path: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": [1], "ts": [1.0], "kind": ["view"], "amount": [1.0]}), path)
    return path


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: (d / "events.txt").write_text("x\n") and d / "events.txt", "unsupported file type '.txt'"),
        (lambda d: d / "missing.csv", "no such file"),
        (lambda d: (d / "dir.jsonl").mkdir() or d / "dir.jsonl", "not a regular file"),
        (lambda d: (d / "fake.parquet").write_text("not parquet") and d / "fake.parquet", "not a readable Parquet file"),
        (lambda d: (d / "e.csv").write_text("id,ts,usr,kind\n1,2,3,view\n") and d / "e.csv", "no column(s) 'user', 'amount'"),
        (lambda d: _parquet_without_user(d / "e.parquet"), "no column(s) 'user'"),
        (lambda d: (d / "e.json").write_text(' [\n {"id": 1}\n]\n') and d / "e.json", "a JSON array; the demo reads JSON lines"),
    ],
    ids=["extension", "missing", "directory", "not-parquet", "csv-columns", "parquet-columns", "json-array"],
)
def test_bad_input_is_a_clear_error(
    spark: Any, tmp_path: Path, make: Any, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import rstreams.spark as rspark

    def no_spark(*args: Any, **kw: Any) -> Any:
        raise AssertionError("Spark was asked for although the input is unusable")

    monkeypatch.setattr(rspark, "session", no_spark)
    src = make(tmp_path)
    out = tmp_path / "out"
    with pytest.raises(demo.DemoError, match="--input") as info:
        _run(out, input_path=str(src))
    assert message in str(info.value) and str(src) in str(info.value)
    assert not out.exists()  # checked before anything was written
    _no_running_jobs(spark)


def test_bad_streaming_input_directory_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(demo.DemoError, match="an empty directory"):
        _run(tmp_path / "out", input_path=str(tmp_path / "empty"), streaming=True)
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "a.jsonl").write_text("{}\n")
    (mixed / "b.csv").write_text("id\n1\n")
    with pytest.raises(demo.DemoError, match="must all be .csv, all JSON lines or all .parquet"):
        _run(tmp_path / "out", input_path=str(mixed), streaming=True)
    assert not (tmp_path / "out").exists()


def test_error_while_reading_input_is_a_clear_error(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "huge_field.csv"
    with open(src, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(FIELDS)
        w.writerows(GOOD[:3])
        w.writerow([9, T0 + 1, 1, "view", "9" * (csv.field_size_limit() + 1)])  # csv cannot read on
    with pytest.raises(demo.DemoError, match="reading failed after 3 records: Error: field larger than field limit"):
        _run(tmp_path / "out", input_path=str(src))
    _no_running_jobs(spark)
    assert cli.main(["demo", "--input", str(src), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert "rstreams demo: --input" in capsys.readouterr().err


def test_out_that_is_not_demo_output_is_left_alone(spark: Any, tmp_path: Path) -> None:
    precious = tmp_path / "windows" / "precious.txt"
    precious.parent.mkdir()
    precious.write_text("keep me")
    with pytest.raises(demo.DemoError, match="not the output of an earlier demo run"):
        _run(tmp_path, rows=10)
    assert precious.read_text() == "keep me"
    (tmp_path / "file").write_text("")
    with pytest.raises(demo.DemoError, match="not a directory"):
        _run(tmp_path / "file", rows=10)


# -- re-runs replace the previous output ---------------------------------------------------------


def test_rerun_replaces_the_previous_output(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "events.csv"
    reasons = _write_csv(src)
    first = _run(tmp_path / "out", input_path=str(src))
    again = _run(tmp_path / "out", input_path=str(src), placement="driver")  # not doubled, nor mixed
    _check_file_run(spark, tmp_path / "out", again, "events.csv", reasons)
    for key in ("records_in", "valid", "dead_lettered", "windows_landed"):
        assert again[key] == first[key], key


# -- the command line ----------------------------------------------------------------------------


def test_cli_runs_the_demo_and_prints_the_summary(spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "events.jsonl"
    reasons = _write_jsonl(src)
    assert cli.main(["demo", "--input", str(src), "--pipeline", "driver", "--out", str(tmp_path / "o")]) == 0
    captured = capsys.readouterr()
    printed = captured.out
    assert "rstreams demo: summary" in printed
    for label in ("batch, pipeline in the driver", "records in", "valid", "dead-lettered", "late",
                  "pipeline stage", "records/s", "windows landed", "peak driver RSS", "Python", "JVM"):
        assert label in printed, label
    # not a terminal: one short line per phase, on stderr
    assert "rstreams demo: using the running Spark session (local[2])" in captured.err
    assert "rstreams demo: pipeline in the driver, landed with to_spark: 14 records" in captured.err
    assert "Traceback" not in captured.err
    assert _landed(spark, tmp_path / "o") == EXPECTED_WINDOWS
    assert len(demo.read_dead_letters(str(tmp_path / "o"))) == len(reasons)


def test_cli_passes_every_option(spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def fake_run(*args: Any, **kw: Any) -> dict[str, Any]:
        seen["args"], seen["kw"] = args, kw
        raise demo.DemoError("stop here")

    monkeypatch.setattr(demo, "run", fake_run)
    assert cli.main(["demo", "--streaming", "--rows", "7", "--batch-rows", "3", "--master", "local[1]",
                     "--pipeline", "driver", "--out", "d", "--quiet"]) == 2
    assert seen["args"] == (7, "d", "local[1]", None, True)
    assert seen["kw"] == {"placement": "driver", "streaming": True, "batch_rows": 3}

    args = demo.build_parser().parse_args([])
    assert (args.rows, args.input, args.master, args.out, args.quiet) == (None, None, None, "out/demo", False)
    assert (args.pipeline, args.streaming, args.batch_rows) == ("executors", False, 20_000)


def test_cli_usage_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["demo", "--rows", "-5"])
    assert info.value.code == 2 and "must be >= 0" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["demo", "--rows", "many"])
    assert "not an integer" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["demo", "--batch-rows", "0"])
    assert "must be > 0" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["demo", "--pipeline", "gpu"])
    assert "invalid choice: 'gpu'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["demo", "--rows", "10", "--input", str(tmp_path / "e.csv")])
    assert "--rows and --input exclude each other" in capsys.readouterr().err
    assert cli.main(["nope"]) == 2 and "unknown command 'nope'" in capsys.readouterr().err
    assert cli.main([]) == 2 and capsys.readouterr().err.startswith("usage: rstreams {demo,tck}")
    assert cli.main(["--help"]) == 0 and capsys.readouterr().out.startswith("usage: rstreams {demo,tck}")
    with pytest.raises(SystemExit) as info:
        cli.main(["demo", "--help"])
    assert info.value.code == 0
    helptext = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for opt in ("--rows", "--input", "--master", "--pipeline", "--streaming", "--batch-rows", "--out", "--quiet",
                "spark://host:7077", "replaces its previous output"):
        assert opt in helptext, opt
    assert cli.main(["demo", "--input", str(tmp_path / "x.xlsx"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rstreams demo: --input") and "unsupported file type '.xlsx'" in err


def test_console_script_bad_input_exits_cleanly(tmp_path: Path) -> None:
    """The one subprocess: the installed entry point, a missing file; no traceback, no JVM wait."""
    exe = Path(sys.executable).with_name("rstreams")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "rstreams.cli"]
    proc = subprocess.run(
        [*cmd, "demo", "--input", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o")],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    # failed before starting Spark: the first line it would print is never printed
    assert proc.stderr.strip() == f"rstreams demo: --input {str(tmp_path / 'missing.jsonl')!r}: no such file"


# -- progress that tells the truth -----------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_status_board_prints_a_line_per_phase_when_not_live() -> None:
    out = io.StringIO()
    board = StatusBoard("rstreams demo", live=False, stream=out)
    board.say("starting Spark (local[*])...")
    assert out.getvalue() == "rstreams demo: starting Spark (local[*])...\n"  # at once, before any phase
    with board.phase("pipeline on the executors") as ph:
        ph.update(records=1500, tasks=(3, 8))
        ph.update(records=3000, batches=2, tasks=(8, 8), note="12 dead-lettered")
    last = out.getvalue().splitlines()[-1]
    assert last.startswith("rstreams demo: pipeline on the executors: 3,000 records  ")
    assert "records/s  2 micro-batches  8/8 tasks  12 dead-lettered in " in last and last.endswith(" s")
    assert ph.finish() is ph and len(out.getvalue().splitlines()) == 2  # finishing again prints nothing


def test_status_board_live_display_shows_the_figures() -> None:
    pytest.importorskip("rich")
    out = _Terminal()
    board = StatusBoard("rstreams demo", live=True, stream=out)
    ph = board.phase("streaming")
    ph.update(records=42_000, batches=3)
    ph.finish()
    text = out.getvalue()
    assert "streaming" in text and "42,000 records" in text and "3 micro-batches" in text and "records/s" in text


def test_status_board_disabled_prints_nothing() -> None:
    out = _Terminal()
    board = StatusBoard("x", enabled=False, stream=out)
    board.say("hello")
    with board.phase("p") as ph:
        ph.update(records=1)
    assert out.getvalue() == ""
    assert ph.records == 1
