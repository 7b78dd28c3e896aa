"""Every program in examples/ runs, as a user would run it, and prints what it says it does."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def run(name: str, *args: str, timeout: float = 60) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, str(EXAMPLES / name), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"examples/{name} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def test_every_example_has_a_test() -> None:
    tested = {"quickstart.py", "slow_consumer.py", "async_crawler.py", "tck_publisher.py", "spark_pipeline.py"}
    assert {p.name for p in EXAMPLES.glob("*.py")} == tested


def test_quickstart() -> None:
    out = run("quickstart.py")
    assert "squares divisible by 3: [0, 9, 36, 81, 144]" in out
    assert "sum of 1, 2, 3: 6" in out
    assert "delivered: [0, 1, 2, 3, 4]" in out


def test_slow_consumer_bridge_holds_the_producer_to_the_prefetch() -> None:
    out = run("slow_consumer.py")
    assert "consumed 200 of 200 readings" in out
    ahead = int(out.split("at most ")[1].split()[0])
    assert ahead <= 16, out


def test_async_crawler_bounds_its_concurrency() -> None:
    out = run("async_crawler.py")
    assert "crawled 39 pages ok" in out
    peak = int(out.split("at most ")[1].split()[0])
    assert 1 <= peak <= 4, out


def test_the_hand_written_publisher_passes_the_tck() -> None:
    out = run("tck_publisher.py", timeout=120)
    assert re.search(r"RangePublisher: \d+ TCK tests, 0 required failures", out), out
    assert "FAILED" not in out, out


@pytest.mark.spark
@pytest.mark.skipif(importlib.util.find_spec("pyspark") is None, reason="pyspark is not installed (the spark extra)")
def test_spark_pipeline(tmp_path: Path) -> None:
    out = run("spark_pipeline.py", str(tmp_path / "out"), timeout=400)
    assert "landed 1000 rows in 4 batches; re-run landed 0 (already complete: True)" in out
    assert "pipeline on the driver: 666 rows" in out
    assert "pipeline on the executors: 666 rows, max sq 996004" in out
