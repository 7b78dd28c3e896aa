"""A short seeded soak: group_by with expiry over an endless stream of new keys holds bounded state.

Keys drift (each key is used for a short while, then never again), virtual time advances with the
elements, and groups expire by inactivity (or by count). The number of live groups and the traced
memory stay bounded while the totals stay exact. Runs in a few seconds.
"""

from __future__ import annotations

import gc
import random
import tracemalloc
from typing import Any

import pytest

from rstreams import Flowable
from rstreams.testing import TestPublisher, TestScheduler, TestSubscriber

N = 24_000
DT = 0.001  # virtual seconds between elements
IDLE = 0.2  # a key is idle this long after its last element


def _key(rnd: random.Random, i: int) -> int:
    base = i // 20  # a new key every 20 elements on average; each lives for ~100 elements
    return base + rnd.randrange(5)


@pytest.mark.parametrize("fold", ["fused", "subscribed"])
def test_endless_keys_with_idle_expiry_bounded(fold: str) -> None:
    rnd = random.Random(20_260_101)
    sched = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    opened = [0]

    def per_group(g: Any) -> Flowable[int]:
        opened[0] += 1
        return g.count() if fold == "fused" else g.hide().count()

    ts: TestSubscriber[int] = TestSubscriber()
    # the results are summed as they come (a list of them would be the only growing state)
    totals = [0, 0]  # elements counted, groups closed

    def on_count(n: int) -> None:
        totals[0] += n
        totals[1] += 1

    (
        Flowable.from_publisher(tp)
        .group_by(lambda x: x, expire_after_idle=IDLE, scheduler=sched)
        .flat_map(per_group, max_concurrency=None)
        .do_on_next(on_count)
        .ignore_elements()
        .subscribe(ts)
    )
    gc.collect()
    tracemalloc.start()
    try:
        max_live = 0
        baseline = 0
        peak_after = 0
        for i in range(N):
            tp.next(_key(rnd, i))
            sched.advance_by(DT)
            if i % 1000 == 999:
                live = opened[0] - totals[1]
                max_live = max(max_live, live)
                if i == N // 3 - 1:
                    gc.collect()
                    baseline = tracemalloc.get_traced_memory()[0]
                elif i > N // 3:
                    peak_after = max(peak_after, tracemalloc.get_traced_memory()[0])
        gc.collect()
        final = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    tp.complete()
    ts.assert_complete().assert_no_errors().assert_no_violations()
    assert totals[0] == N  # no element lost at any expiry boundary
    assert opened[0] == totals[1]
    # keys live ~100 elements (0.1 s) + IDLE (0.2 s): about (100 + 200) / 20 = 15 groups at a time
    assert max_live <= 60, max_live
    assert opened[0] > N // 40  # the keys really did churn (thousands of groups opened and closed)
    # what stays after the warm-up is flat (the groups that closed left nothing behind); the peak
    # in between holds at most the uncollected garbage of a few hundred groups
    assert final - baseline < 64 * 1024, f"traced memory grew by {final - baseline} bytes after the warm-up"
    assert peak_after - baseline < 1024 * 1024, f"traced memory peaked {peak_after - baseline} bytes above the warm-up"


def test_endless_keys_with_count_expiry_bounded() -> None:
    rnd = random.Random(7)
    n = 40_000
    opened = [0]
    closed = [0]
    counted = [0]

    def per_group(g: Any) -> Flowable[int]:
        opened[0] += 1
        return g.count()

    def on_count(c: int) -> None:
        closed[0] += 1
        counted[0] += c

    max_live = 0

    def source() -> Any:
        nonlocal max_live
        for i in range(n):
            if i % 500 == 0:
                max_live = max(max_live, opened[0] - closed[0])
            yield rnd.randrange(200)  # a bounded key space, each group closed every 10 elements

    ts = (
        Flowable.from_iterable(source())
        .group_by(lambda x: x, expire_after_count=10)
        .flat_map(per_group, max_concurrency=None)
        .do_on_next(on_count)
        .ignore_elements()
        .test()
    )
    ts.assert_complete().assert_no_violations()
    assert counted[0] == n
    assert max_live <= 200
    assert closed[0] >= n // 10
