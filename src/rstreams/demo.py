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

``--out DIR`` receives ``aggregates/`` (Parquet) and ``dead_letter.jsonl`` (``{"reason", "record"}``
per line). A re-run replaces both: the job recomputes everything, so its output is never added to
nor resumed from an interrupted earlier run; an ``aggregates/`` that is not demo output is refused.
``--input`` is checked before Spark starts (extension, existence, the event columns); a problem is
one line on stderr and exit status 2. Input files need not be sorted by time: an event up to
ALLOWED_LATENESS_SECONDS behind the latest one still lands in its window; a later one is
dead-lettered as late (each window is landed once, complete).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import math
import os
import random
import resource
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from . import Flowable

__all__ = ["DemoError", "main", "run"]

INPUT_SUFFIXES = {".csv": "csv", ".jsonl": "json", ".json": "json", ".ndjson": "json", ".parquet": "parquet"}
#: the landed aggregates' schema (also what the read-back uses, so an empty result reads back too)
AGGREGATE_DDL = "window_start BIGINT, country STRING, kind STRING, events BIGINT, amount DOUBLE"
#: how far (in event-time seconds) an event may arrive behind the latest one and still be counted
#: in its window; a later one is dead-lettered as late (windows are emitted once, complete)
ALLOWED_LATENESS_SECONDS = 60


class DemoError(ValueError):
    """The demo cannot run as asked (a bad ``--input``, ``--out`` or ``--rows``): says what was wrong."""

COUNTRIES = ("DE", "FR", "US", "JP", "BR", "IN", "NG", "GB", "CA", "AU")
KINDS = ("view", "click", "cart", "buy", "refund")
EVENTS_PER_SECOND = 5000  # of event time, in the synthetic stream
WINDOW_SECONDS = 10
FIELDS = ("id", "ts", "user", "kind", "amount")  # every event has these


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


def input_format(path: str) -> str:
    """Check an ``--input`` file before any work starts; return its format: csv, json or parquet.

    Raises :class:`DemoError` naming the problem (unsupported extension, missing or unreadable
    file, a ``.parquet`` file that is not Parquet, a CSV header or Parquet schema without the
    event's columns (every record would be dead-lettered), a JSON array instead of JSON lines)."""
    suffix = os.path.splitext(path)[1].lower()
    fmt = INPUT_SUFFIXES.get(suffix)
    if fmt is None:
        raise DemoError(
            f"--input {path!r}: unsupported file type {suffix or '(no extension)'!r}"
            " (use .csv, .jsonl / .json / .ndjson, or .parquet)"
        )
    if not os.path.exists(path):
        raise DemoError(f"--input {path!r}: no such file")
    if not os.path.isfile(path):
        raise DemoError(f"--input {path!r}: not a regular file")
    if not os.access(path, os.R_OK):
        raise DemoError(f"--input {path!r}: not readable (permission denied)")
    if fmt != "parquet" and os.path.getsize(path) == 0:
        return fmt  # an empty text file: no records
    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            columns = list(pq.read_schema(path).names)
        except Exception as e:  # pyarrow raises ArrowInvalid / OSError for a non-Parquet file
            raise DemoError(f"--input {path!r}: not a readable Parquet file ({e})") from e
    elif fmt == "csv":
        with open(path, newline="", encoding="utf-8-sig", errors="replace") as f:
            columns = [c.strip() for c in next(csv.reader(f), [])]
    else:
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            start = f.read(4096).lstrip()[:1]
        if start == "[":
            raise DemoError(f"--input {path!r}: a JSON array; the demo reads JSON lines (one object per line)")
        return fmt
    missing = [c for c in FIELDS if c not in columns]
    if missing:
        raise DemoError(
            f"--input {path!r}: no column(s) {', '.join(map(repr, missing))}"
            f" (the {fmt} has {', '.join(map(repr, columns)) or 'no columns'}; an event needs {', '.join(FIELDS)})"
        )
    return fmt


def read_input(path: str) -> Iterator[Any]:
    """Records of a CSV (dicts), JSON lines (lines) or Parquet (dicts) file, read lazily.

    The file is checked eagerly (:func:`input_format`), so a bad ``--input`` fails before Spark
    starts; an error while reading later is a :class:`DemoError` saying how far it got. Undecodable
    bytes in a text file are replaced, so that line goes to the dead letters instead of ending
    the run."""
    return _records(path, input_format(path))


def _records(path: str, fmt: str) -> Iterator[Any]:
    n = 0
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            for batch in pq.ParquetFile(path).iter_batches(batch_size=10_000):
                for rec in batch.to_pylist():
                    n += 1
                    yield rec
        elif fmt == "json":
            with open(path, encoding="utf-8-sig", errors="replace") as f:
                for line in f:
                    if line.strip():
                        n += 1
                        yield line.rstrip("\r\n")
        else:
            with open(path, newline="", encoding="utf-8-sig", errors="replace") as f:
                for rec in csv.DictReader(f):
                    n += 1
                    yield rec
    except (OSError, ValueError, csv.Error) as e:  # pyarrow's errors derive from these
        raise DemoError(f"--input {path!r}: reading failed after {n} records: {type(e).__name__}: {e}") from e


def _as_int(v: Any) -> int:
    if isinstance(v, bool):
        raise ValueError(f"{v!r} is not an integer")
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        return int(v.strip())
    raise ValueError(f"{v!r} is not an integer")


def _as_number(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise ValueError(f"{v!r} is not a number")
    f = float(v)
    if not math.isfinite(f):
        raise ValueError(f"{v!r} is not a finite number")
    return f


_CONVERT: dict[str, Callable[[Any], Any]] = {"id": _as_int, "ts": _as_number, "user": _as_int, "amount": _as_number}


def parse(raw: Any) -> tuple[str, Any]:
    """Parse and validate one record: ``("ok", event)`` or ``("bad", (reason, raw))``.

    ``raw`` is a JSON text line or a dict (a CSV or Parquet record). An event has an integer
    ``id`` and ``user``, a finite ``ts`` (seconds) and non-negative ``amount``, and a ``kind``
    from :data:`KINDS`."""
    if isinstance(raw, str):
        try:
            ev = json.loads(raw)
        except ValueError as e:
            return "bad", (f"unparsable: {e}", raw)
        if not isinstance(ev, dict):
            return "bad", (f"not a JSON object but {type(ev).__name__}", raw)
    elif isinstance(raw, dict):
        ev = dict(raw)
    else:
        return "bad", (f"not a record but {type(raw).__name__}", raw)
    for key in FIELDS:
        if ev.get(key) is None or ev.get(key) == "":
            return "bad", (f"missing field {key!r}", raw)
    for key, convert in _CONVERT.items():
        try:
            ev[key] = convert(ev[key])
        except (TypeError, ValueError) as e:
            return "bad", (f"bad value for {key!r}: {e}", raw)
    if abs(ev["ts"]) >= 1e15:
        return "bad", (f"bad value for 'ts': {ev['ts']!r} is out of range", raw)
    if ev["amount"] < 0:
        return "bad", ("negative amount", raw)
    if not isinstance(ev["kind"], str) or ev["kind"] not in KINDS:
        return "bad", (f"unknown kind {ev['kind']!r}", raw)
    return "ok", ev


class DeadLetters:
    """The dead-letter sink: bad records with their reason, as JSON lines (bounded buffer).

    Each line is ``{"reason": ..., "record": ...}``; ``record`` is the input as it was: the text
    line, or the CSV / Parquet record as an object. The file is replaced on each run."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.count = 0
        self._buf: list[str] = []
        self._lock = threading.Lock()  # records may arrive from the enrichment loop thread
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").close()

    def add(self, reason: str, raw: Any) -> None:
        """Record one bad record and why it was rejected."""
        line = json.dumps({"reason": reason, "record": raw}, default=str)
        with self._lock:
            self.count += 1
            self._buf.append(line)
            if len(self._buf) >= 1000:
                self._flush()

    def _flush(self) -> None:
        with open(self.path, "a") as f:
            f.write("\n".join(self._buf) + "\n")
        self._buf = []

    def close(self) -> None:
        """Write out what is buffered."""
        with self._lock:
            if self._buf:
                self._flush()


async def lookup_countries(users: list[int]) -> list[str]:
    """Stands for an async lookup service: one round trip per batch of users."""
    await asyncio.sleep(0.0005)
    return [COUNTRIES[u % len(COUNTRIES)] for u in users]


async def enrich(batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Add each event's ``country`` (one async lookup per batch)."""
    countries = await lookup_countries([e["user"] for e in batch])
    for e, c in zip(batch, countries, strict=True):
        e["country"] = c
    return batch


def window_aggregates(
    events: Flowable[dict[str, Any]], on_late: Callable[[dict[str, Any], float], None] | None = None
) -> Flowable[dict[str, Any]]:
    """Tumbling event-time windows of WINDOW_SECONDS, aggregated per (window, country, kind).

    Events may arrive out of order (input files need not be sorted): a window stays open until
    the latest event time seen is ALLOWED_LATENESS_SECONDS past its end, then it is emitted once,
    complete, so each (window, country, kind) is one row. An event for an already emitted window
    goes to ``on_late(event, latest_ts)`` (an error when there is no ``on_late``). At most a few
    windows are held at a time."""

    def per_subscription() -> Flowable[dict[str, Any]]:
        windows: dict[int, dict[tuple[str, str], list[float]]] = {}
        state: dict[str, Any] = {"max_ts": -math.inf, "closed": None}  # windows < closed are out

        def rows(window: int, agg: dict[tuple[str, str], list[float]]) -> list[dict[str, Any]]:
            return [
                {"window_start": window * WINDOW_SECONDS, "country": c, "kind": k, "events": int(v[0]), "amount": round(v[1], 2)}
                for (c, k), v in sorted(agg.items())
            ]

        def step(ev: dict[str, Any]) -> list[dict[str, Any]]:
            ts = ev["ts"]
            w = int(ts // WINDOW_SECONDS)
            closed = state["closed"]
            if closed is not None and w < closed:
                if on_late is None:
                    raise ValueError(f"late event: window {w * WINDOW_SECONDS} was already emitted: {ev!r}")
                on_late(ev, state["max_ts"])
                return []
            acc = windows.setdefault(w, {}).setdefault((ev["country"], ev["kind"]), [0, 0.0])
            acc[0] += 1
            acc[1] += ev["amount"]
            if ts <= state["max_ts"]:
                return []
            state["max_ts"] = ts
            limit = math.floor((ts - ALLOWED_LATENESS_SECONDS) / WINDOW_SECONDS)
            if closed is not None and limit <= closed:
                return []
            state["closed"] = limit
            out: list[dict[str, Any]] = []
            for k in sorted(k for k in windows if k < limit):
                out.extend(rows(k, windows.pop(k)))
            return out

        def flush() -> Flowable[dict[str, Any]]:
            out: list[dict[str, Any]] = []
            for k in sorted(windows):
                out.extend(rows(k, windows.pop(k)))
            return Flowable.from_iterable(out)

        return events.flat_map_iterable(step).concat_with(Flowable.defer(flush))

    return Flowable.defer(per_subscription)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _prepare_out(out: str) -> str:
    """Make ``out`` ready for a run and return the aggregates path in it.

    A re-run replaces the previous run's output (aggregates and dead letters) rather than adding
    to it, and this also discards what an interrupted earlier run left (the demo recomputes
    everything; it does not resume). Anything in ``<out>/aggregates`` that is not an earlier demo
    run's output is left alone: that is an error."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise DemoError(f"--out {out!r}: exists and is not a directory")
    agg_path = os.path.join(out, "aggregates")
    dead_path = os.path.join(out, "dead_letter.jsonl")
    if os.path.lexists(agg_path):
        ours = os.path.isdir(agg_path) and not os.path.islink(agg_path) and (
            not os.listdir(agg_path) or os.path.isdir(os.path.join(agg_path, "_rstreams_commits"))
        )
        if not ours:
            raise DemoError(
                f"--out {out!r}: {agg_path} exists and is not the output of an earlier demo run;"
                " it was left alone: choose another --out or remove it"
            )
        shutil.rmtree(agg_path)
    if os.path.isdir(dead_path):
        raise DemoError(f"--out {out!r}: {dead_path} is a directory")
    try:
        os.makedirs(agg_path)
    except OSError as e:
        raise DemoError(f"--out {out!r}: cannot create the output directory ({e})") from e
    return agg_path


def _aggregate_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [("window_start", pa.int64()), ("country", pa.string()), ("kind", pa.string()), ("events", pa.int64()), ("amount", pa.float64())]
    )


def run(
    rows: int = 500_000,
    out: str = "out/demo",
    master: str | None = None,
    input_path: str | None = None,
    quiet: bool = False,
) -> dict[str, Any]:
    """Run the demo pipeline; return the summary figures.

    ``rows`` synthetic events, or the records of ``input_path`` (.csv, .jsonl or .parquet).
    ``master``: None uses the active SparkSession if there is one, else ``$SPARK_MASTER`` or
    ``local[*]``. ``out`` receives ``aggregates/`` (Parquet) and ``dead_letter.jsonl``; a re-run
    replaces both (see :func:`_prepare_out`). Raises :class:`DemoError` for a bad ``input_path``,
    ``out`` or ``rows`` before Spark starts, and RuntimeError if the counts do not add up."""
    from . import spark as rspark

    if input_path is None and (isinstance(rows, bool) or not isinstance(rows, int) or rows < 0):
        raise DemoError(f"--rows must be a non-negative integer, got {rows!r}")
    records: Iterator[Any] = read_input(input_path) if input_path else synthetic_events(rows)
    out = os.path.abspath(out)
    agg_path = _prepare_out(out)

    t_start = time.monotonic()
    s = rspark.session(master, app_name="rstreams-demo")  # None: reuse the active session
    spark_ready = time.monotonic()
    dead = DeadLetters(os.path.join(out, "dead_letter.jsonl"))
    counts = {"in": 0, "valid": 0, "late": 0}

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

    def late(ev: dict[str, Any], latest: float) -> None:
        counts["late"] += 1
        record = {k: v for k, v in ev.items() if k != "country"}
        dead.add(f"late event: more than {ALLOWED_LATENESS_SECONDS}s behind the latest event time ({latest}); its window was already landed", record)

    # source -> parse -> validate -> batches of 1000 all fuse into one C-level iterator chain
    pipeline = (
        Flowable.from_iterable(records)
        .map(counted_parse)
        .filter(route)
        .map(lambda tagged: tagged[1])
        .buffer(1000)
        .map_async(enrich, max_concurrency=8)
        .flat_map_iterable(lambda batch: batch)
    )
    aggregates = window_aggregates(pipeline, on_late=late)
    t_pipe = time.monotonic()
    try:
        result = rspark.to_spark(
            aggregates, path=agg_path, mode="overwrite", batch_rows=5_000, schema=_aggregate_schema(), spark=s,
            progress=False if quiet else None,
        )
    finally:
        dead.close()
    t_landed = time.monotonic()
    # read back with the landed schema: an empty result (no valid events) reads back as no rows
    landed = s.read.schema(AGGREGATE_DDL).parquet(agg_path).select("events")
    back_rows, landed_events = (
        rspark.from_dataframe(landed, as_="rows")
        .reduce(lambda acc, r: (acc[0] + 1, acc[1] + int(r[0])), (0, 0))
        .blocking_first(timeout=300)
    )
    valid = counts["valid"] - counts["late"]
    summary = {
        "records_in": counts["in"],
        "valid": valid,
        "dead_lettered": dead.count,
        "late_events": counts["late"],
        "aggregate_rows_landed": result.rows,
        "micro_batches": result.batches,
        "events_in_landed_aggregates": landed_events,
        "aggregate_rows_read_back": back_rows,
        "pipeline_seconds": round(t_landed - t_pipe, 2),
        "records_per_second": round(counts["in"] / max(t_landed - t_pipe, 1e-9)),
        "spark_start_seconds": round(spark_ready - t_start, 2),
        "total_seconds": round(time.monotonic() - t_start, 2),
        "peak_driver_rss_mb": round(_peak_rss_mb(), 1),
        "output": out,
    }
    if landed_events != valid or valid + dead.count != counts["in"] or back_rows != result.rows:
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


def _non_negative_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {n}")
    return n


def build_parser() -> argparse.ArgumentParser:
    """The ``rstreams demo`` command line."""
    p = argparse.ArgumentParser(prog="rstreams demo", description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--rows", type=_non_negative_int, help="synthetic events to generate (default 500000; not with --input)")
    p.add_argument("--input", help="read records from a .csv, .jsonl (.json, .ndjson) or .parquet file instead")
    p.add_argument("--master", help="Spark master URL (default: the active session, else $SPARK_MASTER or local[*])")
    p.add_argument("--out", default="out/demo", help="output directory (default out/demo); a re-run replaces its previous output")
    p.add_argument("--quiet", action="store_true", help="no live progress line")
    return p


def main(argv: list[str] | None = None) -> int:
    """``rstreams demo``: run the main job and print its summary.

    Returns 0 on success, 2 on a usage error (said in one line on stderr), 130 when interrupted."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.rows is not None and args.input is not None:
        parser.error("--rows and --input exclude each other: --input reads all the records of the file")
    from .spark import SparkUnavailableError

    try:
        summary = run(500_000 if args.rows is None else args.rows, args.out, args.master, args.input, args.quiet)
    except (SparkUnavailableError, DemoError) as e:
        print(f"rstreams demo: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\nrstreams demo: interrupted; the output in {os.path.abspath(args.out)} is incomplete"
              " (a re-run replaces it)", file=sys.stderr)
        return 130
    _print_summary(summary)
    return 0
