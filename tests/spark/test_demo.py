"""``rstreams demo``, the main job: exact counts end to end, every input format with bad records,
clear errors for a bad ``--input`` / ``--out``, re-runs that replace their output, and the CLI.

All runs share the session of ``conftest.spark``: ``demo.run`` must reuse the active session (and
leave its configuration alone) instead of building another one.
"""

from __future__ import annotations

import csv
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

from rstreams import cli, demo

pytestmark = pytest.mark.spark

T0 = 1_700_000_000  # a multiple of the window length: window starts are T0, T0 + 10, ...

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
LATE = (8, T0 + 3, 1, "view", 1.0)  # > 60 s behind T0 + 200: its window was already landed
# (window_start, country, kind) -> (events, amount)
EXPECTED_AGGREGATES = {
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
    """The landed aggregates, keyed by (window_start, country, kind); fails on a duplicate key."""
    rows = spark.read.parquet(str(out / "aggregates")).collect()
    landed = {(r.window_start, r.country, r.kind): (r.events, r.amount) for r in rows}
    assert len(landed) == len(rows), f"duplicate (window, country, kind) rows landed: {rows}"
    return landed


def _dead_letters(out: Path) -> list[dict[str, Any]]:
    lines = (out / "dead_letter.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line]


def _run(out: Path, **kw: Any) -> dict[str, Any]:
    return demo.run(out=str(out), quiet=True, **kw)


def _no_running_jobs(spark: Any) -> None:
    tracker = spark.sparkContext.statusTracker()
    deadline = time.monotonic() + 10
    while tracker.getActiveJobsIds() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert tracker.getActiveJobsIds() == []


# -- the synthetic stream ------------------------------------------------------------------------


def _expected_synthetic(n: int) -> Counter[str]:
    """Independent of demo.parse: which synthetic lines are bad, by kind of fault."""
    faults: Counter[str] = Counter()
    for line in demo.synthetic_events(n):
        try:
            ev = json.loads(line)
        except ValueError:
            faults["unparsable"] += 1
            continue
        if "user" not in ev:
            faults["missing field 'user'"] += 1
        elif ev["amount"] < 0:
            faults["negative amount"] += 1
        else:
            faults["ok"] += 1
    return faults


def test_synthetic_run_counts_add_up_exactly(spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import SparkSession

    shuffle_partitions = spark.conf.get("spark.sql.shuffle.partitions")
    n = 20_000
    expected = _expected_synthetic(n)
    s = _run(tmp_path, rows=n)

    # the demo used the shared session and did not reconfigure it
    assert spark.conf.get("spark.sql.shuffle.partitions") == shuffle_partitions
    assert SparkSession.getActiveSession() is spark

    assert s["records_in"] == n
    assert s["valid"] == expected["ok"]
    assert s["dead_lettered"] == n - expected["ok"] > 0
    assert s["valid"] + s["dead_lettered"] == s["records_in"]
    assert s["late_events"] == 0  # the synthetic stream is in time order

    landed = _landed(spark, tmp_path)
    assert len(landed) == s["aggregate_rows_landed"] == s["aggregate_rows_read_back"] > 0
    assert sum(events for events, _ in landed.values()) == s["events_in_landed_aggregates"] == s["valid"]
    assert {w for w, _, _ in landed} == {T0 + 10 * i for i in range(math.ceil(n / demo.EVENTS_PER_SECOND / 10))}

    dead = _dead_letters(tmp_path)
    assert len(dead) == s["dead_lettered"]
    by_reason: Counter[str] = Counter()
    for d in dead:
        assert isinstance(d["record"], str) and d["record"]
        reason = "unparsable" if d["reason"].startswith("unparsable") else d["reason"]
        by_reason[reason] += 1
    assert by_reason == Counter({k: v for k, v in expected.items() if k != "ok"})

    # the summary's own figures
    assert s["micro_batches"] >= 1 and s["records_per_second"] > 0 and s["peak_driver_rss_mb"] > 0
    assert s["output"] == str(tmp_path)


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


@pytest.mark.parametrize(
    ("name", "writer"),
    [("events.jsonl", _write_jsonl), ("events.csv", _write_csv), ("events.parquet", _write_parquet)],
)
def test_input_file_exact_counts(spark: Any, tmp_path: Path, name: str, writer: Any) -> None:
    src = tmp_path / name
    reasons = writer(src)
    out = tmp_path / "out"
    s = _run(out, input_path=str(src))

    assert s["records_in"] == len(GOOD) + len(reasons)
    assert s["valid"] == len(GOOD)
    assert s["dead_lettered"] == len(reasons)
    assert s["late_events"] == 1
    assert _landed(spark, out) == EXPECTED_AGGREGATES
    assert s["aggregate_rows_landed"] == s["aggregate_rows_read_back"] == len(EXPECTED_AGGREGATES)
    assert s["events_in_landed_aggregates"] == len(GOOD)

    dead = _dead_letters(out)
    assert len(dead) == len(reasons)
    got = [d["reason"] for d in dead]
    for want, have in zip(reasons, got, strict=True):
        assert have.startswith(want), (want, got)
    # each dead letter holds the whole record as it was read
    late = dead[-1]["record"]
    assert (late["id"], late["ts"], late["user"], late["kind"]) == (8, T0 + 3, 1, "view")
    if name.endswith(".jsonl"):
        assert dead[0]["record"] == "{not json"
        assert json.loads(dead[2]["record"])["user"] == "abc"
    elif name.endswith(".csv"):
        assert dead[0]["record"]["id"] == "garbage"
        assert dead[2]["record"] == {"id": "101", "ts": str(T0 + 1), "user": "abc", "kind": "view", "amount": "1.0"}
    else:
        assert dead[0]["record"] == {"id": 100, "ts": T0 + 1, "user": None, "kind": "view", "amount": 1.0}


def test_input_with_no_valid_record_lands_an_empty_result(spark: Any, tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    s = _run(tmp_path / "out0", input_path=str(empty))
    assert (s["records_in"], s["dead_lettered"], s["aggregate_rows_read_back"]) == (0, 0, 0)

    src = tmp_path / "bad.jsonl"
    src.write_text("{oops\nnull\n" + json.dumps({"id": 1, "ts": "Infinity", "user": 1, "kind": "view", "amount": 1}) + "\n")
    s = _run(tmp_path / "out", input_path=str(src))
    assert (s["records_in"], s["valid"], s["dead_lettered"]) == (3, 0, 3)
    assert s["aggregate_rows_landed"] == s["aggregate_rows_read_back"] == s["events_in_landed_aggregates"] == 0
    assert [d["reason"].split(":")[0] for d in _dead_letters(tmp_path / "out")] == [
        "unparsable",
        "not a JSON object but NoneType",
        "bad value for 'ts'",
    ]


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
    precious = tmp_path / "aggregates" / "precious.txt"
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
    first = _run(tmp_path, rows=6_000)
    landed_first = _landed(spark, tmp_path)
    dead_first = _dead_letters(tmp_path)

    again = _run(tmp_path, rows=6_000)  # the same job again: the same output, not doubled
    assert _landed(spark, tmp_path) == landed_first
    assert _dead_letters(tmp_path) == dead_first
    for key in ("records_in", "valid", "dead_lettered", "aggregate_rows_landed", "aggregate_rows_read_back"):
        assert again[key] == first[key], key

    # an interrupted earlier run (no completion marker) is replaced too, not resumed or added to
    markers = list((tmp_path / "aggregates" / "_rstreams_commits").rglob("_COMPLETE"))
    assert markers
    for m in markers:
        m.unlink()
    src = tmp_path / "events.jsonl"
    reasons = _write_jsonl(src)
    other = _run(tmp_path, input_path=str(src))
    assert _landed(spark, tmp_path) == EXPECTED_AGGREGATES
    assert len(_dead_letters(tmp_path)) == other["dead_lettered"] == len(reasons)


# -- the command line ----------------------------------------------------------------------------


def test_cli_runs_the_demo_and_prints_the_summary(spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", "--rows", "3000", "--out", str(tmp_path), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "rstreams demo: summary" in printed
    for label in ("records in", "valid", "dead lettered", "aggregate rows landed", "records per second", "peak driver rss mb"):
        assert label in printed, label
    assert "3,000" in printed
    assert _landed(spark, tmp_path)


def test_cli_passes_every_option(spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rstreams.spark as rspark

    seen: dict[str, Any] = {}
    calls: list[tuple[Any, ...]] = []

    def fake_session(master: str | None = None, **kw: Any) -> Any:
        calls.append((master, kw))
        return spark

    def fake_to_spark(publisher: Any, **kw: Any) -> Any:
        seen.update(kw)
        return real_to_spark(publisher, **kw)

    real_to_spark = rspark.to_spark
    monkeypatch.setattr(rspark, "session", fake_session)
    monkeypatch.setattr(rspark, "to_spark", fake_to_spark)
    src = tmp_path / "events.csv"
    _write_csv(src)
    out = tmp_path / "o"
    assert cli.main(["demo", "--input", str(src), "--master", "local[3]", "--out", str(out), "--quiet"]) == 0
    assert calls == [("local[3]", {"app_name": "rstreams-demo"})]
    assert seen["progress"] is False and seen["path"] == str(out / "aggregates")
    assert _landed(spark, out) == EXPECTED_AGGREGATES

    args = demo.build_parser().parse_args([])
    assert (args.rows, args.input, args.master, args.out, args.quiet) == (None, None, None, "out/demo", False)
    args = demo.build_parser().parse_args(["--rows", "7", "--master", "local[1]", "--out", "d", "--quiet"])
    assert (args.rows, args.input, args.master, args.out, args.quiet) == (7, None, "local[1]", "d", True)


def test_cli_usage_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["demo", "--rows", "-5"])
    assert info.value.code == 2 and "must be >= 0" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["demo", "--rows", "many"])
    assert "not an integer" in capsys.readouterr().err
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
    for opt in ("--rows", "--input", "--master", "--out", "--quiet", "replaces its previous output"):
        assert opt in helptext, opt
    assert cli.main(["demo", "--input", str(tmp_path / "x.xlsx"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rstreams demo: --input") and "unsupported file type '.xlsx'" in err


def test_console_script_bad_input_exits_cleanly(tmp_path: Path) -> None:
    """The one subprocess: the installed entry point, a missing file; no traceback, no JVM wait."""
    exe = Path(sys.executable).with_name("rstreams")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "rstreams.cli"]
    t = time.monotonic()
    proc = subprocess.run(
        [*cmd, "demo", "--input", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o")],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip() == f"rstreams demo: --input {str(tmp_path / 'missing.jsonl')!r}: no such file"
    assert time.monotonic() - t < 30  # failed before starting Spark
