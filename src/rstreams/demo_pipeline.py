"""The demo's per-record stages: one plain function, ``pipeline(records) -> Flowable``.

The same function runs wherever it is given a Flowable: locally on a list of records, in the
driver over records read there (``rstreams demo --pipeline driver``), or on every partition of a
DataFrame on the executors (``run_on_spark(df, pipeline, schema=EVENT_DDL)``). It holds no state
across records and reads nothing from the driver, so any placement gives the same rows.

A record is ``(seq, raw)``: ``seq`` its position in the input (what the event-time watermark uses
to tell which records arrived earlier) and ``raw`` the record as read: a JSON text line, or a dict
(a CSV or Parquet record). Each record gives one output row (:data:`EVENT_COLUMNS`):

* a valid event: ``(seq, id, ts, user, kind, amount, country, None, None)``, ``country`` found by
  an async lookup (bounded concurrency, one lookup per batch of records);
* a bad record: ``(seq, None, ..., None, reason, dead_letter)`` where ``dead_letter`` is the JSON
  line ``{"reason": ..., "record": <raw>}`` for the dead-letter files. Nothing is dropped.

On the executors, windows, the watermark and lateness are Spark's business (``rstreams.demo``).
In the local placement (``--pipeline local``) the whole job is rstreams: :func:`local_job` follows :func:`pipeline`
with the event-time ``tumbling_window`` operator (same watermark, same lateness rule, same late
dead letters), so both placements land the same windows and dead letters.
Importing this module imports neither pyspark nor pyarrow, so executors load it cheaply.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import math
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Final

from .flowable import Flowable

__all__ = [
    "ALLOWED_LATENESS_SECONDS",
    "COUNTRIES",
    "ENRICH_BATCH",
    "ENRICH_CONCURRENCY",
    "EVENTS_PER_SECOND",
    "EVENT_COLUMNS",
    "EVENT_DDL",
    "FIELDS",
    "LOCAL_COLUMNS",
    "LOCAL_DDL",
    "KINDS",
    "T0",
    "WINDOW_SECONDS",
    "enrich",
    "local_job",
    "lookup_countries",
    "parse",
    "parse_record",
    "pipeline",
    "synthetic_event",
]

COUNTRIES: Final = ("DE", "FR", "US", "JP", "BR", "IN", "NG", "GB", "CA", "AU")
KINDS: Final = ("view", "click", "cart", "buy", "refund")
FIELDS: Final = ("id", "ts", "user", "kind", "amount")  # every event has these
#: tumbling event-time windows, in seconds
WINDOW_SECONDS: Final = 10
#: the watermark trails the latest event time by this much; an event whose window ended at or
#: before the watermark is late (dead-lettered, never counted in a window)
ALLOWED_LATENESS_SECONDS: Final = 60
#: event time of synthetic event 0 (a multiple of the window length)
T0: Final = 1_700_000_000
#: synthetic events per second of event time
EVENTS_PER_SECOND: Final = 1000
#: records per async lookup, and lookups in flight at once (per Spark task)
ENRICH_BATCH: Final = 1000
ENRICH_CONCURRENCY: Final = 8

#: one output row per record
EVENT_COLUMNS: Final = ("seq", "id", "ts", "user", "kind", "amount", "country", "reason", "dead_letter")
#: the output rows as a Spark schema (``run_on_spark(..., schema=EVENT_DDL)``)
EVENT_DDL: Final = (
    "seq BIGINT, id BIGINT, ts DOUBLE, user BIGINT, kind STRING, amount DOUBLE, country STRING, "
    "reason STRING, dead_letter STRING"
)

_M64: Final = (1 << 64) - 1


def _mix64(i: int, seed: int) -> int:
    """splitmix64's finaliser over ``i`` and ``seed``: 64 well-mixed bits, the same on every process."""
    x = (i * 0x9E3779B97F4A7C15 + seed) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def synthetic_event(i: int, seed: int = 7) -> str:
    """Synthetic event number ``i`` as a JSON line: a pure function of ``(i, seed)``, so any
    process (an executor generating its partition of ``spark.range``, or the driver) makes the
    same line.

    About 1% are bad on purpose (0.4% not JSON, 0.3% a negative amount, 0.3% no ``user``); 0.2%
    are 90 s of event time behind their neighbours (late: their window closed), 0.5% 30 s
    behind (out of order but within the allowed lateness).

    Example::

        json.loads(synthetic_event(1))["id"]      # 1
    """
    h = _mix64(i, seed)
    roll = (h & 0xFFFF) / 65536.0
    if roll < 0.004:
        return "{not json"
    ts = T0 + i / EVENTS_PER_SECOND
    if 0.010 <= roll < 0.012:
        ts -= 90.0
    elif 0.012 <= roll < 0.017:
        ts -= 30.0
    ts = round(ts, 3)
    kind = KINDS[(h >> 32) % len(KINDS)]
    amount = -1.0 if roll < 0.007 else ((h >> 40) % 10_000) / 100
    if roll < 0.010 and roll >= 0.007:
        return f'{{"id": {i}, "ts": {ts}, "kind": "{kind}", "amount": {amount}}}'
    user = (h >> 16) % 50_000
    return f'{{"id": {i}, "ts": {ts}, "user": {user}, "kind": "{kind}", "amount": {amount}}}'


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


_CONVERT: Final[dict[str, Callable[[Any], Any]]] = {"id": _as_int, "ts": _as_number, "user": _as_int, "amount": _as_number}


def parse(raw: Any) -> tuple[str, Any]:
    """Parse and validate one record: ``("ok", event)`` or ``("bad", (reason, raw))``.

    ``raw`` is a JSON text line or a dict (a CSV or Parquet record). An event has an integer
    ``id`` and ``user``, a finite ``ts`` (seconds) and non-negative ``amount``, and a ``kind``
    from :data:`KINDS`.

    Example::

        parse('{"id": 1, "ts": 5, "user": 2, "kind": "view", "amount": 1}')[0]     # 'ok'
        parse("{oops")                                                            # ('bad', ('unparsable: ...', '{oops'))
    """
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


def parse_record(record: tuple[int, Any]) -> tuple[Any, ...]:
    """``(seq, raw)`` -> one output row (:data:`EVENT_COLUMNS`) with ``country`` still None.

    A text line loses a leading byte-order mark first (Spark's text reader keeps it on line 1).

    Example::

        parse_record((0, "{oops"))[7]     # 'unparsable: ...'
    """
    seq, raw = record
    if isinstance(raw, str) and raw.startswith("\ufeff"):
        raw = raw[1:]
    tag, payload = parse(raw)
    if tag == "ok":
        return (seq, payload["id"], payload["ts"], payload["user"], payload["kind"], payload["amount"], None, None, None)
    reason, original = payload
    dead = json.dumps({"reason": reason, "record": original}, default=str)
    return (seq, None, None, None, None, None, None, reason, dead)


async def lookup_countries(users: list[int]) -> list[str]:
    """Stands for an async lookup service: one round trip per batch of users.

    Example::

        asyncio.run(lookup_countries([0, 1]))     # ['DE', 'FR']
    """
    await asyncio.sleep(0.0005)
    return [COUNTRIES[u % len(COUNTRIES)] for u in users]


async def enrich(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Fill in ``country`` of the valid rows of a batch with one async lookup; bad rows pass as
    they are.

    Example::

        asyncio.run(enrich([parse_record((0, '{"id": 1, "ts": 5, "user": 1, "kind": "view", "amount": 1}'))]))[0][6]   # 'FR'
    """
    valid = [i for i, r in enumerate(rows) if r[7] is None]
    if not valid:
        return rows
    countries = await lookup_countries([rows[i][3] for i in valid])
    out = list(rows)
    for i, c in zip(valid, countries, strict=True):
        r = rows[i]
        out[i] = (r[0], r[1], r[2], r[3], r[4], r[5], c, None, None)
    return out


def _rows(batch: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return batch


def pipeline(records: Flowable[tuple[int, Any]]) -> Flowable[tuple[Any, ...]]:
    """The per-record stages: parse and validate, then enrich with bounded-concurrency async
    lookups; one output row per record (:data:`EVENT_COLUMNS`), bad records as rows carrying
    their reason and dead-letter line.

    Example::

        rows = pipeline(Flowable.just((0, '{"id": 1, "ts": 5, "user": 1, "kind": "view", "amount": 1}'),
                                      (1, "{oops"))).to_list().blocking_first()
        [r[6] for r in rows], [r[7] is None for r in rows]      # (['FR', None], [True, False])

    On Spark: ``run_on_spark(df, pipeline, schema=EVENT_DDL)`` over a DataFrame of ``(seq, raw)``.

    Backpressure: parsing is a synchronous stage pulled by the batching; ``map_async`` asks for
    at most ``ENRICH_CONCURRENCY`` batches of ``ENRICH_BATCH`` records (and as many prefetched)
    ahead of the consumer, so a task holds at most ~16,000 records whatever its partition's size,
    and the lookups in flight never exceed ``ENRICH_CONCURRENCY``. Order is kept.
    """
    return (
        records.map(parse_record)
        .buffer(ENRICH_BATCH)
        .map_async(enrich, max_concurrency=ENRICH_CONCURRENCY)
        .flat_map_iterable(_rows)
    )


#: what :func:`local_job` emits: a window row (``seq`` None) or a dead letter (window fields None)
LOCAL_COLUMNS: Final = ("seq", "window_start", "country", "kind", "events", "amount", "dead_letter")
LOCAL_DDL: Final = (
    "seq BIGINT, window_start BIGINT, country STRING, kind STRING, events BIGINT, amount DOUBLE, dead_letter STRING"
)


class _Closings:
    """When each window of event time closed, for the late dead letters' reason: the first valid
    record whose event time minus the allowed lateness reached the window's end (the record the
    watermark passed it with). One entry per advance of the highest closed window, so a lookup is
    a bisection. Called in input order by the stage in front of the window operator."""

    __slots__ = ("_upto", "_by", "_latest")

    def __init__(self) -> None:
        self._upto: list[int] = []  # the highest closed window index after each advance
        self._by: list[float] = []  # the event time of the record that advanced it
        self._latest = -math.inf

    def see(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        ts = row[2]
        if ts > self._latest:
            self._latest = ts
            k = math.floor((ts - ALLOWED_LATENESS_SECONDS) / WINDOW_SECONDS) - 1  # (k + 1) * W <= ts - L
            if not self._upto or k > self._upto[-1]:
                self._upto.append(k)
                self._by.append(ts)
        return row

    def closed_by(self, k: int) -> float:
        return self._by[bisect.bisect_left(self._upto, k)]


def _is_valid(row: tuple[Any, ...]) -> bool:
    return row[7] is None


def _event_ts(row: tuple[Any, ...]) -> float:
    return float(row[2])


def _country_kind(row: tuple[Any, ...]) -> tuple[str, str]:
    return row[6], row[4]


def _zero() -> list[Any]:
    return [0, 0.0]


def _add(acc: list[Any], row: tuple[Any, ...]) -> list[Any]:
    acc[0] += 1
    acc[1] += row[5]
    return acc


def _result(acc: list[Any]) -> tuple[int, float]:
    return acc[0], round(acc[1], 2)


def local_job(rows: Flowable[tuple[Any, ...]]) -> Flowable[tuple[Any, ...]]:
    """The local placement's job after :func:`pipeline`: event-time tumbling windows per
    ``(country, kind)`` of the valid rows (``tumbling_window``: the watermark is the latest event
    time minus :data:`ALLOWED_LATENESS_SECONDS`), and dead letters for the bad rows and the late
    ones, as :data:`LOCAL_COLUMNS` rows.

    Example::

        rows = pipeline(Flowable.range(0, 20_000).map(lambda i: (i, synthetic_event(i))))
        out = local_job(rows).to_list().blocking_first()
        windows = [r for r in out if r[0] is None]      # (None, window_start, country, kind, events, amount, None)

    Bad and late rows leave through a side channel (the late one is ``tumbling_window``'s
    ``late=``) and are emitted after the next window that fires, or at the end: nothing is
    dropped, and at most about one window's worth of dead letters waits.

    Backpressure: the window operator requests the rows in batches of its prefetch (1024) and
    pauses while fired windows wait for demand; the dead letters waiting between two windows are
    the only other state.
    """
    from .flowable import Aggregator

    def build() -> Flowable[tuple[Any, ...]]:
        dead: deque[tuple[Any, ...]] = deque()
        lock = threading.Lock()  # race: the side channel (upstream's thread) vs the drain (a requester's)
        closings = _Closings()

        def keep_valid(row: tuple[Any, ...]) -> bool:
            if row[7] is None:
                return True
            with lock:
                dead.append((row[0], None, None, None, None, None, row[8]))
            return False

        def late(row: tuple[Any, ...]) -> None:
            k = math.floor(row[2] / WINDOW_SECONDS)
            reason = (
                f"late event: its window [{k * WINDOW_SECONDS}, {(k + 1) * WINDOW_SECONDS}) had closed: the watermark "
                f"passed its end when the record at event time {closings.closed_by(k):.3f} arrived (that time minus "
                f"the allowed lateness of {ALLOWED_LATENESS_SECONDS} s)"
            )
            record = {"id": row[1], "ts": row[2], "user": row[3], "kind": row[4], "amount": row[5]}
            with lock:
                dead.append((row[0], None, None, None, None, None, json.dumps({"reason": reason, "record": record})))

        def taken() -> list[tuple[Any, ...]]:
            with lock:
                out = list(dead)
                dead.clear()
            return out

        def with_dead(w: Any) -> list[tuple[Any, ...]]:
            (country, kind), (events, amount) = w.key, w.value
            return [(None, int(w.start), country, kind, events, amount, None), *taken()]

        return (
            rows.filter(keep_valid)
            .map(closings.see)
            .tumbling_window(
                WINDOW_SECONDS,
                timestamp=_event_ts,
                key=_country_kind,
                allowed_lateness=ALLOWED_LATENESS_SECONDS,
                aggregate=Aggregator(_zero, _add, result=_result),
                late=late,
            )
            .flat_map_iterable(with_dead)
            .concat_with(Flowable.defer(lambda: Flowable.from_iterable(taken())))
        )

    return Flowable.defer(build)
