"""The driver placement's job (demo_pipeline.local_job): event-time windows with tumbling_window
and dead letters through its side channel, checked against an independent model of the watermark
(no Spark needed)."""

from __future__ import annotations

import json
import math
import time
from typing import Any

import pytest

from rstreams import Flowable
from rstreams.demo_pipeline import (
    ALLOWED_LATENESS_SECONDS as LATENESS,
)
from rstreams.demo_pipeline import (
    COUNTRIES,
    FIELDS,
    local_job,
    pipeline,
    synthetic_event,
)
from rstreams.demo_pipeline import (
    WINDOW_SECONDS as W,
)
from rstreams.testing import TestSubscriber

N = 12_000


def _model(n: int) -> tuple[dict[tuple[int, str, str], tuple[int, float]], int, int, list[tuple[float, float]]]:
    """(windows, bad, late, [(late event time, the event time that closed its window)])."""
    latest = -math.inf
    bad = 0
    windows: dict[tuple[int, str, str], list[Any]] = {}
    late: list[tuple[float, float]] = []
    valid: list[float] = []
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
        start = int(math.floor(ts / W) * W)
        if start + W <= latest - LATENESS:
            closer = next(t for t in valid if t - LATENESS >= start + W)  # the first record past its end
            late.append((ts, closer))
        else:
            acc = windows.setdefault((start, COUNTRIES[ev["user"] % len(COUNTRIES)], ev["kind"]), [0, 0.0])
            acc[0] += 1
            acc[1] += ev["amount"]
        valid.append(ts)
        latest = max(latest, ts)
    return {k: (v[0], round(v[1], 2)) for k, v in windows.items()}, bad, len(late), late


def _source(n: int, hidden: bool = False) -> Flowable[tuple[int, str]]:
    f = Flowable.range(0, n).map(lambda i: (i, synthetic_event(i)))
    return f.hide() if hidden else f


def _split(rows: list[tuple[Any, ...]]) -> tuple[dict[tuple[int, str, str], tuple[int, float]], list[dict[str, Any]]]:
    windows = {(r[1], r[2], r[3]): (r[4], r[5]) for r in rows if r[0] is None}
    assert len(windows) == sum(1 for r in rows if r[0] is None), "a window landed twice"
    dead = [json.loads(r[6]) for r in sorted((r for r in rows if r[0] is not None), key=lambda r: r[0])]
    return windows, dead


def test_local_job_lands_the_model_windows_and_every_bad_and_late_record() -> None:
    windows, bad, late, late_pairs = _model(N)
    ts: TestSubscriber[tuple[Any, ...]] = local_job(pipeline(_source(N))).test()
    ts.await_done(30).assert_complete().assert_no_violations()
    got, dead = _split(ts.values)
    assert got == windows
    assert len(dead) == bad + late and late > 0 and bad > 0
    late_letters = [d for d in dead if d["reason"].startswith("late event")]
    assert len(late_letters) == late
    for d, (t, closer) in zip(late_letters, late_pairs, strict=True):
        assert set(d["record"]) == set(FIELDS) and d["record"]["ts"] == t
        assert f"the record at event time {closer:.3f} arrived" in d["reason"], d["reason"]


@pytest.mark.parametrize("hidden", [False, True], ids=["fused-source", "hidden-source"])
def test_local_job_gives_the_same_rows_one_at_a_time_and_unfused(hidden: bool) -> None:
    n = 4_000
    whole: TestSubscriber[tuple[Any, ...]] = local_job(pipeline(_source(n))).test()
    whole.await_done(30).assert_complete().assert_no_violations()
    one: TestSubscriber[tuple[Any, ...]] = TestSubscriber(0)
    local_job(pipeline(_source(n, hidden))).subscribe(one)
    while not one.is_terminated:
        had = len(one.values)
        one.request(1)
        deadline = time.monotonic() + 10  # the pipeline's lookups answer on another thread
        while len(one.values) == had and not one.is_terminated and time.monotonic() < deadline:
            time.sleep(0.0005)
    one.assert_complete().assert_no_violations()
    assert _split(one.values) == _split(whole.values)


def test_local_job_cancelled_stops_the_pipeline() -> None:
    pulled: list[int] = []
    src = Flowable.range(0, 10**9).map(lambda i: (pulled.append(i), (i, synthetic_event(i)))[1])
    ts: TestSubscriber[tuple[Any, ...]] = local_job(pipeline(src)).test(5)
    ts.await_count(5, 30)
    ts.cancel()
    n = len(pulled)
    ts.assert_no_errors().assert_no_violations()
    assert n < 200_000, f"the pipeline ran on after the cancel: {n} records"
