"""Soak: an endless keyed event-time pipeline over 10 minutes of simulated event time, where users
keep arriving and others stop appearing. The operator's live state (open windows, accumulators,
queued windows) must stay bounded by what the watermark keeps open, and so must its memory
(tracemalloc), however long it runs. Seeded; a few seconds.
"""

from __future__ import annotations

import gc
import random
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from rstreams import Flowable
from rstreams.testing import TestSubscriber

RATE = 100  # events per second of event time
PREFETCH = 64
MINUTES = 10
JITTER = 1.0  # seconds out of order
LATENESS = 2.0


def _events(seed: int) -> Iterator[tuple[str, float, int]]:
    """Endless: every 30 s the population of 80 active users moves on by 40 (the others stop)."""
    rnd = random.Random(seed)
    i = 0
    while True:
        t = i / RATE
        base = int(t // 30) * 40
        yield (f"user{base + rnd.randrange(80)}", max(0.0, t - JITTER * rnd.random()), rnd.randrange(100))
        i += 1


def _traced() -> int:
    """Bytes allocated and still live, leaving out the TestSubscriber's own record of signals."""
    gc.collect()
    snap = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.Filter(False, "*_test_subscriber.py"), tracemalloc.Filter(False, tracemalloc.__file__)]
    )
    return sum(st.size for st in snap.statistics("filename"))


def _soak(build: Callable[[Flowable[Any]], Flowable[Any]], max_windows: int, max_accs: int) -> None:
    ts: TestSubscriber[Any] = TestSubscriber(0)
    build(Flowable.from_iterable(_events(5))).subscribe(ts)
    op: Any = ts.subscription
    worst = (0, 0, 0)
    emitted = 0
    mem_at_2min: int | None = None
    tracemalloc.start()
    try:
        while op.watermark < MINUTES * 60:
            ts.request(64)
            w, a, q = op.state_size()
            worst = (max(worst[0], w), max(worst[1], a), max(worst[2], q))
            emitted += len(ts.values_and_clear())
            if mem_at_2min is None and op.watermark >= 120:
                mem_at_2min = _traced()
        mem_end = _traced()
    finally:
        tracemalloc.stop()
    ts.cancel()
    assert op.state_size() == (0, 0, 0)
    ts.assert_no_errors().assert_not_complete().assert_no_violations()
    assert emitted > 500
    assert worst[0] <= max_windows, worst
    assert worst[1] <= max_accs, worst
    assert worst[2] <= PREFETCH + max_accs, worst  # queued: the prefetch limit plus one batch's firings
    assert mem_at_2min is not None
    growth = mem_end - mem_at_2min
    assert growth < 512 * 1024, f"memory grew by {growth} bytes between minute 2 and minute {MINUTES}"


@pytest.mark.timeout(30)
def test_tumbling_keyed_state_stays_bounded_over_ten_minutes() -> None:
    # 5 s windows, watermark 2 s behind, 1 s of disorder: at most 2 windows open (3 with the one
    # just reached), each with at most 120 users (80 active, 40 moving in)
    _soak(
        lambda f: f.tumbling_window(5, timestamp=lambda e: e[1], key=lambda e: e[0], allowed_lateness=LATENESS,
                                    late="drop", prefetch=PREFETCH, aggregate=lambda a, e: a + e[2] if isinstance(a, int) else a[2] + e[2]),
        max_windows=3,
        max_accs=3 * 120,
    )


@pytest.mark.timeout(30)
def test_session_keyed_state_stays_bounded_over_ten_minutes() -> None:
    # a user's session closes gap + lateness (+ disorder) after its last event: the users seen in
    # the last ~6 s have sessions open (at most 120), and users that stopped appearing are released
    _soak(
        lambda f: f.session_window(3, timestamp=lambda e: e[1], key=lambda e: e[0], allowed_lateness=LATENESS,
                                   late="drop", prefetch=PREFETCH, aggregate="count"),
        max_windows=160,
        max_accs=200,
    )


@pytest.mark.timeout(30)
def test_sliding_keyed_state_stays_bounded_over_ten_minutes() -> None:
    _soak(
        lambda f: f.sliding_window(10, 5, timestamp=lambda e: e[1], key=lambda e: e[0], allowed_lateness=LATENESS,
                                   late="drop", prefetch=PREFETCH, aggregate="count"),
        max_windows=4,
        max_accs=4 * 120,
    )
