"""Reactive Streams rule tests (``test_rule_*``) of the filtering operators (take_last, skip_last, take_while, take_until, skip_while, distinct, ...).

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_filtering.py``."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import pytest

from operators.test_filtering import MAX, OPS, both
from rstreams import Flowable
from rstreams.testing import TestPublisher, TestSubscriber


def upstream_requests(op: Any, data: list[Any], initial: int) -> tuple[list[int], TestSubscriber[Any]]:
    calls: list[int] = []
    ts: TestSubscriber[Any] = TestSubscriber(initial)
    op(Flowable.from_iterable(data).hide().do_on_request(calls.append)).subscribe(ts)
    return calls, ts


def test_rule_1_1_take_last_consumes_upstream_unbounded() -> None:
    calls, ts = upstream_requests(lambda f: f.take_last(2), list(range(5)), 1)
    assert calls == [MAX]
    ts.assert_values(3).request(1)
    ts.assert_result(3, 4).assert_no_violations()


def test_rule_3_9_take_last_bad_request_before_and_after_completion() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.from_publisher(tp).take_last(2).subscribe(ts)
    ts.request(0)
    ts.assert_error(ValueError, match="3.9").assert_no_violations()

    ts = Flowable.range(0, 5).hide().take_last(3).test(1)
    ts.assert_values(2)
    ts.request(-1)
    ts.assert_values(2).assert_error(ValueError, match="3.9").assert_no_violations()
    ts.request(5)
    ts.assert_value_count(1).assert_no_violations()


def test_rule_1_1_skip_last_requests_the_held_elements_once() -> None:
    calls, ts = upstream_requests(lambda f: f.skip_last(3), list(range(10)), 2)
    assert sorted(calls) == [2, 3]  # the downstream asks first (inside on_subscribe)
    ts.assert_values(0, 1).request(1)
    ts.assert_values(0, 1, 2).assert_no_violations()


def test_rule_1_1_skip_while_replaces_dropped_elements() -> None:
    calls, ts = upstream_requests(lambda f: f.skip_while(lambda x: x < 5), list(range(10)), 2)
    ts.assert_values(5, 6).assert_not_complete().assert_no_violations()
    assert sum(calls) == 7


def test_rule_3_9_take_until_publisher_bad_request() -> None:
    ts = Flowable.range(0, 5).take_until(Flowable.never()).test(0)
    ts.request(0)
    ts.assert_error(ValueError, match="3.9").assert_no_violations()


def test_rule_3_9_ignore_elements_bad_request() -> None:
    Flowable.never().ignore_elements().test(0).request(0).assert_error(ValueError, match="3.9").assert_no_violations()


def test_rule_3_9_take_last_bad_request_races_the_tail_drain() -> None:
    """A bad request from one thread while another thread drains the tail: the error is
    delivered by the drain owner, never overlapping an on_next, never lost."""
    rnd = random.Random(2024)
    for _ in range(30):
        tp: TestPublisher[int] = TestPublisher.create()
        ts: TestSubscriber[int] = TestSubscriber(0)
        Flowable.from_publisher(tp).take_last(100).subscribe(ts)
        tp.next(*range(100)).complete()
        barrier = threading.Barrier(2)

        def drain(ts: TestSubscriber[int] = ts, b: threading.Barrier = barrier) -> None:
            b.wait(5)
            ts.request(60)

        t = threading.Thread(target=drain)
        t.start()
        barrier.wait(5)
        if rnd.random() < 0.5:
            time.sleep(0)
        ts.request(0)
        t.join(5)
        ts.await_done(5).assert_error(ValueError, match="3.9").assert_no_violations()
        assert ts.values == list(range(len(ts.values)))


@pytest.mark.parametrize(("name", "op", "model"), OPS, ids=[o[0] for o in OPS])
@pytest.mark.parametrize("bad", [0, -1])
def test_rule_3_9_bad_request_signals_value_error(name: str, op: Any, model: Any, bad: int) -> None:
    sources = both(list(range(10)))
    if name in ("take_last(0)", "ignore_elements"):
        # these complete before any request (a later request is a no-op, rule 3.6): use never()
        sources = [("never", Flowable.never())]
    for _, src in sources:
        ts = op(src).test(0)
        ts.request(bad)
        ts.assert_error(ValueError, match="3.9").assert_no_violations()

