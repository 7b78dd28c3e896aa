"""The benchmark suite still runs (``python -m benchmarks --quick``), and its harness math is right.

Nothing here asserts anything about speed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import _harness as h  # noqa: E402


def test_quick_run_exits_zero_and_prints_every_benchmark(tmp_path: Path) -> None:
    out_json = tmp_path / "quick.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--json", str(out_json)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    for b in h.load_all():
        assert b.header(quick=True) in proc.stdout, f"missing header of {b.name}"
    doc = json.loads(out_json.read_text())
    assert doc["quick"] is True and doc["machine"]["cpu_count"] == os.cpu_count()
    names = {b["name"] for b in doc["benchmarks"]}
    assert names == {b.name for b in h.load_all()}
    # every benchmark that ran measured something (each has a plain-Python baseline or peer)
    for b in doc["benchmarks"]:
        if not b["skipped"]:
            assert any(r["status"] == "ok" for r in b["results"]), b["name"]


def test_median_spread_ratio() -> None:
    assert h.median([3.0]) == 3.0
    assert h.median([5.0, 1.0, 3.0]) == 3.0
    assert h.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    with pytest.raises(ValueError):
        h.median([])
    assert h.spread([2.0]) == 0.0
    assert h.spread([1.0, 2.0, 4.0]) == pytest.approx((4.0 - 1.0) / 2.0)
    assert h.ratio(300.0, 100.0) == pytest.approx(3.0)
    assert h.ratio(None, 100.0) is None and h.ratio(1.0, None) is None and h.ratio(1.0, 0.0) is None


def test_results_ratio_and_targets_use_throughput() -> None:
    b = h.Benchmark("t", "test", n=100, quick_n=10)
    b.variant("base", baseline=True)(lambda ctx: None)
    b.variant("half", scale=0.5, targets=[h.Target(">= 0.8x", min_ratio=0.8)])(lambda ctx: None)
    b.variant("vs-half", targets=[h.Target(">= 1x half", min_ratio=1.0, against="half")])(lambda ctx: None)
    b.variant("mem", targets=[h.Target("<= 5 MB", max_rss_mb=5.0)])(lambda ctx: None)
    res = {v.name: h.Result(v.name, v.items(100), v.baseline, v.ref) for v in b.variants}
    assert [v.ref for v in b.variants] == [None, "base", "base", "base"]
    res["base"].times = [1.0, 1.2, 0.8]  # 100 items in 1.0 s -> 100/s
    res["half"].times = [1.0]  # 50 items in 1.0 s -> 50/s
    res["vs-half"].times = [0.4, 0.6]  # 100 items in 0.5 s -> 200/s
    res["mem"].times, res["mem"].rss_mb = [1.0], [7.5]
    h.evaluate(b.variants, res)
    assert res["base"].ratio == 1.0 and res["base"].spread == pytest.approx(0.4)
    assert res["half"].ratio == pytest.approx(0.5) and res["half"].targets_met == [False]
    assert res["vs-half"].ratio == pytest.approx(2.0) and res["vs-half"].targets_met == [True]
    assert res["mem"].targets_met == [False]
    res["base"].status = h.NA
    h.evaluate(b.variants, res)
    assert res["half"].ratio is None and res["half"].targets_met == [None]
    assert "n/a" not in h.format_table(b, res).splitlines()[2]  # 'half' row is still measured


def test_ratio_of_ratio_target_compares_each_ratio_to_its_own_baseline() -> None:
    b = h.Benchmark("t", "test", n=100, quick_n=10)
    b.variant("base small", baseline=True)(lambda ctx: None)
    b.variant("small", targets=[])(lambda ctx: None)
    b.variant("base big", baseline=True)(lambda ctx: None)
    flat = h.Target(">= 0.5x the small ratio", against="small", min_ratio_of_ratio=0.5)
    b.variant("big", targets=[flat])(lambda ctx: None)
    res = {v.name: h.Result(v.name, v.items(100), v.baseline, v.ref) for v in b.variants}
    res["base small"].times = [1.0]  # 100/s
    res["small"].times = [2.0]  # 50/s: ratio 0.5
    res["base big"].times = [4.0]  # 25/s: the baseline itself slowed 4x
    res["big"].times = [10.0]  # 10/s: ratio 0.4 >= 0.5 * 0.5, though only 0.2x the small rate
    h.evaluate(b.variants, res)
    assert res["big"].ratio == pytest.approx(0.4) and res["big"].targets_met == [True]
    res["big"].times = [20.0]  # 5/s: ratio 0.2 < 0.25
    h.evaluate(b.variants, res)
    assert res["big"].targets_met == [False]


def test_excluded_time_is_subtracted_from_a_run() -> None:
    b = h.Benchmark("t", "test", n=10, quick_n=10)

    def variant(ctx: h.Context) -> None:
        time.sleep(0.05)
        ctx.excluded_s = 0.05  # the variant's own set-up, measured by itself

    b.variant("v", baseline=True)(variant)
    ctx = h.Context(n=10, quick=True)
    dt, _ = h._run_in_process(b, b.variants[0], ctx)
    assert 0 <= dt < 0.04


class _Thing:
    pass


def test_classification_na_vs_error() -> None:
    assert h.classify(ImportError("No module named 'reactivex'"))[0] == h.NA
    assert h.classify(ModuleNotFoundError("No module named 'rstreams.spark'"))[0] == h.NA
    assert h.classify(NotImplementedError("later"))[0] == h.NA
    assert h.classify(h.Unavailable("pyspark not installed")) == (h.NA, "pyspark not installed")
    assert h.classify(h.WrongResult("got 1, expected 2"))[0] == h.ERROR
    assert h.classify(ValueError("boom"))[0] == h.ERROR
    assert h.classify(TimeoutError("hung"))[0] == h.ERROR
    # a missing public attribute of a module -> n/a
    try:
        _ = os.no_such_function  # type: ignore[attr-defined]
    except AttributeError as exc:
        assert h.classify(exc)[0] == h.NA
    # an AttributeError on an arbitrary object (a bug, not a missing feature) -> ERROR
    try:
        _ = _Thing().missing  # type: ignore[attr-defined]
    except AttributeError as exc:
        assert h.classify(exc)[0] == h.ERROR
    # a missing private name is never "not written yet"
    try:
        _ = os._no_such_private  # type: ignore[attr-defined]
    except AttributeError as exc:
        assert h.classify(exc)[0] == h.ERROR


def test_na_and_error_variants_in_a_run() -> None:
    b = h.Benchmark("t", "test", n=10, quick_n=10, expect=lambda ctx: ctx.n)
    b.variant("base", baseline=True)(lambda ctx: ctx.n)

    def missing(ctx: h.Context) -> int:
        raise NotImplementedError("not yet")

    def wrong(ctx: h.Context) -> int:
        return ctx.n + 1

    def broken(ctx: h.Context) -> int:
        raise KeyError("bug")

    b.variant("missing")(missing)
    b.variant("wrong")(wrong)
    b.variant("broken")(broken)
    res = h.run_benchmark(b, quick=True, repeats=3, warmup=True, echo=lambda s: None)
    assert res["base"].status == h.OK and len(res["base"].times) == 3
    assert (res["missing"].status, res["missing"].reason) == (h.NA, "NotImplementedError: not yet")
    assert res["wrong"].status == h.ERROR and "WrongResult" in res["wrong"].reason
    assert res["broken"].status == h.ERROR and "KeyError" in res["broken"].reason
    table = h.format_table(b, res)
    assert "n/a (NotImplementedError: not yet)" in table and "ERROR (KeyError" in table


def test_compare_reports_change() -> None:
    old = {
        "date": "d0",
        "benchmarks": [
            {"name": "x", "results": [{"variant": "v", "status": "ok", "items_per_s": 100.0, "ratio": 0.5}]}
        ],
    }
    new = {
        "date": "d1",
        "benchmarks": [
            {"name": "x", "results": [{"variant": "v", "status": "ok", "items_per_s": 150.0, "ratio": 0.75}]}
        ],
    }
    text = h.format_compare(old, new)
    assert "x / v" in text and "+50.0%" in text and "0.75x" in text
