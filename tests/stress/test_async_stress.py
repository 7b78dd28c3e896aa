"""Seeded, time-bounded races against the asynchronous boundaries (observe_on, subscribe_on,
flat_map): concurrent request and cancel from several threads. Short by default; set
RSTREAMS_STRESS=long for longer runs."""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable

import pytest

from rstreams import Flowable, schedulers
from rstreams.testing import TestSubscriber

pytestmark = pytest.mark.stress

ROUNDS = 200 if os.environ.get("RSTREAMS_STRESS") == "long" else 25


def _pipelines() -> dict[str, Callable[[int], Flowable[int]]]:
    return {
        "observe_on": lambda n: Flowable.range(0, n).observe_on(schedulers.computation(), prefetch=8),
        "subscribe_on+observe_on": lambda n: Flowable.range(0, n)
        .subscribe_on(schedulers.io())
        .observe_on(schedulers.single(), prefetch=4),
        "flat_map async": lambda n: Flowable.range(0, n // 10).flat_map(
            lambda x: Flowable.range(x * 10, 10).subscribe_on(schedulers.io()), max_concurrency=4, prefetch=3
        ),
    }


def _threads_settle(before: set[threading.Thread], timeout: float = 3.0) -> set[threading.Thread]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        extra = {t for t in threading.enumerate() if t not in before and not t.name.startswith(("rstreams-single", "rstreams-computation", "rstreams-io"))}
        if not extra:
            return set()
        time.sleep(0.02)
    return extra


@pytest.mark.parametrize("name", list(_pipelines()))
def test_concurrent_requests_deliver_everything_exactly_once(name: str) -> None:
    make = _pipelines()[name]
    for seed in range(ROUNDS):
        rng = random.Random(seed)
        n = 200
        ts: TestSubscriber[int] = TestSubscriber(0)
        make(n).subscribe(ts)
        barrier = threading.Barrier(3)

        def requester(r: random.Random, ts: TestSubscriber[int] = ts, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            for _ in range(40):
                ts.request(r.randint(1, 5))
                if r.random() < 0.3:
                    time.sleep(0)

        threads = [threading.Thread(target=requester, args=(random.Random(rng.random()),)) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(5)
        ts.request(10**9)
        ts.await_done(10)
        assert sorted(ts.values) == list(range(n)), f"seed {seed}: lost or duplicated elements"
        if name != "flat_map async":
            assert ts.values == list(range(n)), f"seed {seed}: order broken"
        ts.assert_complete().assert_no_violations()


@pytest.mark.parametrize("name", list(_pipelines()))
def test_concurrent_cancel_stops_and_leaks_no_thread(name: str) -> None:
    make = _pipelines()[name]
    before = set(threading.enumerate())
    for seed in range(ROUNDS):
        rng = random.Random(seed)
        ts: TestSubscriber[int] = TestSubscriber(0)
        make(10**6).subscribe(ts)
        barrier = threading.Barrier(3)

        def requester(ts: TestSubscriber[int] = ts, barrier: threading.Barrier = barrier, rng: random.Random = rng) -> None:
            barrier.wait()
            for _ in range(20):
                ts.request(rng.randint(1, 50))

        def canceller(ts: TestSubscriber[int] = ts, barrier: threading.Barrier = barrier, rng: random.Random = rng) -> None:
            barrier.wait()
            time.sleep(rng.random() * 0.002)
            ts.cancel()

        threads = [threading.Thread(target=requester), threading.Thread(target=canceller), threading.Thread(target=canceller)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(5)
        time.sleep(0.005)
        n = len(ts.values)
        time.sleep(0.01)
        assert len(ts.values) <= n + 0, f"seed {seed}: values kept arriving after cancel"
        assert ts.values == sorted(set(ts.values)) or name == "flat_map async"
        ts.assert_no_violations()
    assert not _threads_settle(before), "threads left alive after cancel"
