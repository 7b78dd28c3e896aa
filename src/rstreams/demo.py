"""``rstreams demo``: the main job, end to end, with backpressure at every step.

    fast producer (synthetic events, or --input CSV / JSON lines / Parquet)
      -> parse and validate (bad records go to a dead-letter file, with the reason)
      -> enrich with bounded-concurrency async lookups (map_async over batches)
      -> tumbling event-time windows, aggregated per (window, country, kind)
      -> landed as Parquet through embedded Spark, in committed micro-batches (to_spark)
      -> read back with from_dataframe
      -> a summary: records in, landed, dead-lettered, rows/s, peak driver memory.

Nothing in the chain holds more than a bounded number of records: the producer runs only as fast
as Spark commits.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import random
import resource
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from . import Flowable

__all__ = ["main", "run"]

COUNTRIES = ("DE", "FR", "US", "JP", "BR", "IN", "NG", "GB", "CA", "AU")
KINDS = ("view", "click", "cart", "buy", "refund")
EVENTS_PER_SECOND = 5000  # of event time, in the synthetic stream
WINDOW_SECONDS = 10


def synthetic_events(n: int, seed: int = 7) -> Iterator[str]:
    """JSON lines of events; about 1% are malformed on purpose."""
    rng = random.Random(seed)
    rand = rng.random
    t0 = 1_700_000_000.0
    for i in range(n):
        roll = rand()
        if roll < 0.004:
            yield "{not json"
            continue
        ts = t0 + i / EVENTS_PER_SECOND
        user = int(rand() * 50_000)
        kind = KINDS[int(rand() * 5)]
        amount = -1.0 if 0.004 <= roll < 0.007 else round(rand() * 100, 2)  # negative: invalid
        if 0.007 <= roll < 0.010:  # missing field: invalid
            yield f'{{"id": {i}, "ts": {ts}, "kind": "{kind}", "amount": {amount}}}'
        else:
            yield f'{{"id": {i}, "ts": {ts}, "user": {user}, "kind": "{kind}", "amount": {amount}}}'


def read_input(path: str) -> Iterator[Any]:
    """Records from a CSV, JSON lines or Parquet file (lazily)."""
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(path).iter_batches(batch_size=10_000):
            yield from batch.to_pylist()
    elif path.endswith((".jsonl", ".json", ".ndjson")):
        with open(path) as f:
            for line in f:
                if line.strip():
                    yield line
    elif path.endswith(".csv"):
        with open(path, newline="") as f:
            yield from csv.DictReader(f)
    else:
        raise ValueError(f"--input: unsupported file type {path!r} (use .csv, .jsonl or .parquet)")


def parse(raw: Any) -> tuple[str, Any]:
    """``("ok", event)`` or ``("bad", (reason, raw))``."""
    try:
        ev = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except (ValueError, TypeError) as e:
        return "bad", (f"unparsable: {e}", str(raw)[:200])
    for key in ("id", "ts", "user", "kind", "amount"):
        if ev.get(key) in (None, ""):
            return "bad", (f"missing field {key!r}", str(raw)[:200])
    try:
        ev["id"] = int(ev["id"])
        ev["ts"] = float(ev["ts"])
        ev["user"] = int(ev["user"])
        ev["amount"] = float(ev["amount"])
    except (TypeError, ValueError) as e:
        return "bad", (f"bad value: {e}", str(raw)[:200])
    if ev["amount"] < 0:
        return "bad", ("negative amount", str(raw)[:200])
    if ev["kind"] not in KINDS:
        return "bad", (f"unknown kind {ev['kind']!r}", str(raw)[:200])
    return "ok", ev


class DeadLetters:
    """The dead-letter sink: bad records with their reason, as JSON lines (bounded buffer)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.count = 0
        self._buf: list[str] = []
        self._lock = threading.Lock()  # records may arrive from the enrichment loop thread
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").close()

    def add(self, reason: str, raw: str) -> None:
        with self._lock:
            self.count += 1
            self._buf.append(json.dumps({"reason": reason, "record": raw}))
            if len(self._buf) >= 1000:
                self._flush()

    def _flush(self) -> None:
        with open(self.path, "a") as f:
            f.write("\n".join(self._buf) + "\n")
        self._buf = []

    def close(self) -> None:
        with self._lock:
            if self._buf:
                self._flush()


async def lookup_countries(users: list[int]) -> list[str]:
    """Stands for an async lookup service: one round trip per batch of users."""
    await asyncio.sleep(0.0005)
    return [COUNTRIES[u % len(COUNTRIES)] for u in users]


async def enrich(batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
    countries = await lookup_countries([e["user"] for e in batch])
    for e, c in zip(batch, countries, strict=True):
        e["country"] = c
    return batch


def window_aggregates(events: Flowable[dict[str, Any]]) -> Flowable[dict[str, Any]]:
    """Tumbling event-time windows of WINDOW_SECONDS, aggregated per (window, country, kind).
    Events arrive in time order; a window is emitted when the first event of the next arrives."""

    def per_subscription() -> Flowable[dict[str, Any]]:
        state: dict[str, Any] = {"window": None, "agg": {}}

        def rows(window: int, agg: dict[tuple[str, str], list[float]]) -> list[dict[str, Any]]:
            return [
                {"window_start": window * WINDOW_SECONDS, "country": c, "kind": k, "events": int(v[0]), "amount": round(v[1], 2)}
                for (c, k), v in sorted(agg.items())
            ]

        def step(ev: dict[str, Any]) -> list[dict[str, Any]]:
            w = int(ev["ts"] // WINDOW_SECONDS)
            out: list[dict[str, Any]] = []
            if state["window"] is not None and w != state["window"]:
                out = rows(state["window"], state["agg"])
                state["agg"] = {}
            state["window"] = w
            acc = state["agg"].setdefault((ev["country"], ev["kind"]), [0, 0.0])
            acc[0] += 1
            acc[1] += ev["amount"]
            return out

        def flush() -> Flowable[dict[str, Any]]:
            if state["window"] is None:
                return Flowable.empty()
            return Flowable.from_iterable(rows(state["window"], state["agg"]))

        return events.flat_map_iterable(step).concat_with(Flowable.defer(flush))

    return Flowable.defer(per_subscription)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run(rows: int = 500_000, out: str = "out/demo", master: str | None = None, input_path: str | None = None,
        quiet: bool = False) -> dict[str, Any]:
    """Run the demo pipeline; returns the summary figures."""
    from . import spark as rspark

    t_start = time.monotonic()
    s = rspark.session(master or os.environ.get("SPARK_MASTER", "local[*]"), app_name="rstreams-demo")
    spark_ready = time.monotonic()
    out = os.path.abspath(out)
    dead = DeadLetters(os.path.join(out, "dead_letter.jsonl"))
    counts = {"in": 0, "valid": 0}
    source = Flowable.from_iterable(read_input(input_path)) if input_path else Flowable.from_iterable(synthetic_events(rows))

    def counted_parse(raw: Any) -> tuple[str, Any]:
        counts["in"] += 1
        return parse(raw)

    def route(tagged: tuple[str, Any]) -> bool:
        tag, payload = tagged
        if tag == "bad":
            dead.add(*payload)
            return False
        counts["valid"] += 1
        return True

    # source -> parse -> validate -> batches of 1000 all fuse into one C-level iterator chain
    pipeline = (
        source.map(counted_parse)
        .filter(route)
        .map(lambda tagged: tagged[1])
        .buffer(1000)
        .map_async(enrich, max_concurrency=8)
        .flat_map_iterable(lambda batch: batch)
    )
    aggregates = window_aggregates(pipeline)
    agg_path = os.path.join(out, "aggregates")
    t_pipe = time.monotonic()
    result = rspark.to_spark(aggregates, path=agg_path, mode="overwrite", batch_rows=5_000, spark=s, progress=False if quiet else None)
    t_landed = time.monotonic()
    dead.close()
    back = (
        rspark.from_dataframe(s.read.parquet(agg_path), as_="rows")
        .map(lambda r: r)
        .to_list()
        .blocking_first(timeout=300)
    )
    cols = s.read.parquet(agg_path).columns
    events_idx = cols.index("events")
    landed_events = sum(r[events_idx] for r in back)
    summary = {
        "records_in": counts["in"],
        "valid": counts["valid"],
        "dead_lettered": dead.count,
        "aggregate_rows_landed": result.rows,
        "micro_batches": result.batches,
        "events_in_landed_aggregates": landed_events,
        "aggregate_rows_read_back": len(back),
        "pipeline_seconds": round(t_landed - t_pipe, 2),
        "records_per_second": round(counts["in"] / max(t_landed - t_pipe, 1e-9)),
        "spark_start_seconds": round(spark_ready - t_start, 2),
        "total_seconds": round(time.monotonic() - t_start, 2),
        "peak_driver_rss_mb": round(_peak_rss_mb(), 1),
        "output": out,
    }
    if summary["events_in_landed_aggregates"] != summary["valid"] or summary["valid"] + dead.count != counts["in"]:
        raise RuntimeError(f"demo: the counts do not add up: {summary}")
    return summary


def _print_summary(summary: dict[str, Any]) -> None:
    width = max(len(k) for k in summary)
    print("\nrstreams demo: summary")
    print("-" * (width + 24))
    for k, v in summary.items():
        val = f"{v:,}" if isinstance(v, int) else str(v)
        print(f"{k.replace('_', ' '):<{width}}  {val:>20}")
    print("-" * (width + 24))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="rstreams demo", description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--rows", type=int, default=500_000, help="synthetic events to generate (default 500000)")
    p.add_argument("--input", help="read records from a .csv, .jsonl or .parquet file instead")
    p.add_argument("--master", help="Spark master URL (default local[*], or $SPARK_MASTER)")
    p.add_argument("--out", default="out/demo", help="output directory (default out/demo)")
    p.add_argument("--quiet", action="store_true", help="no live progress line")
    args = p.parse_args(argv)
    from .spark import SparkUnavailableError

    try:
        summary = run(args.rows, args.out, args.master, args.input, args.quiet)
    except SparkUnavailableError as e:
        print(f"rstreams demo: {e}", file=sys.stderr)
        return 2
    _print_summary(summary)
    return 0
