"""The Performance page's charts are drawn from committed benchmark JSON (``docs/perf/data``), and
each committed SVG is exactly what ``docs/_tools/benchplot.py`` draws from its JSON today."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "_tools"))

import benchplot  # noqa: E402

RUNS = benchplot.runs()


def test_at_least_one_measured_run_is_committed() -> None:
    assert any(not benchplot.load(r).get("quick") for r in RUNS), "no full (non --quick) benchmark run in docs/perf/data"


@pytest.mark.parametrize("run", RUNS)
def test_a_run_says_its_machine_and_date(run: str) -> None:
    doc = benchplot.load(run)
    assert doc["date"] and doc["machine"]["cpu_count"] and doc["machine"]["python"]
    assert doc["date"][:4] in benchplot.run_label(doc) and "cores" in benchplot.run_label(doc)


@pytest.mark.parametrize("run", RUNS)
def test_the_committed_charts_match_their_json(run: str) -> None:
    for name, svg in benchplot.charts(run).items():
        path = ROOT / "docs" / "perf" / name
        assert path.is_file(), f"{name} not committed: run python docs/_tools/benchplot.py"
        assert path.read_text(encoding="utf-8") == svg, f"{name} differs from its JSON: run python docs/_tools/benchplot.py"


def test_a_chart_has_a_bar_per_measured_variant_and_the_baseline_line() -> None:
    doc = benchplot.load(RUNS[0])
    bench = next(b for b in doc["benchmarks"] if b["results"])
    svg = benchplot.chart(doc, bench)
    measured = [r for r in bench["results"] if r["status"] == "ok" and r["ratio"] is not None]
    assert svg.count("<rect x=") == len(measured)
    assert "1.0x its baseline" in svg


def test_the_performance_page_shows_the_charts(built_site: Path) -> None:
    html = (built_site / "performance.html").read_text(encoding="utf-8")
    for run in RUNS:
        for name in benchplot.charts(run):
            assert f'src="perf/{name}"' in html
        assert f"perf/data/{run}.json" in html
    assert "cores" in html  # the machine
