"""Reactive Streams rule tests (``test_rule_*``) of on_backpressure_buffer, on_backpressure_drop, on_backpressure_latest and rebatch_requests.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_backpressure_ops.py``."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from operators.test_backpressure_ops import OV, pusher_thread
from rstreams import BackpressureStrategy, Flowable
from rstreams.testing import TestSubscriber


@pytest.mark.parametrize(
    "op",
    [
        lambda f: f.on_backpressure_buffer(),
        lambda f: f.on_backpressure_buffer(4, OV.DROP_OLDEST),
        lambda f: f.on_backpressure_drop(),
        lambda f: f.on_backpressure_latest(),
        lambda f: f.rebatch_requests(4),
    ],
    ids=["buffer", "buffer-drop-oldest", "drop", "latest", "rebatch"],
)
def test_rule_3_9_backpressure_ops_request_zero_signals_value_error(op: Any) -> None:
    for src in (Flowable.never(), Flowable.range(0, 10).hide()):
        ts = op(src).test(0)
        if ts.completions:
            continue  # drop over a finished source: already terminated, request is a no-op (rule 3.6)
        ts.request(0)
        ts.assert_error(ValueError).assert_no_values().assert_no_violations()
        assert "3.9" in str(ts.errors[0])


@pytest.mark.parametrize("op", [lambda f: f.on_backpressure_buffer(), lambda f: f.rebatch_requests(4)])
def test_rule_3_9_bad_request_in_unbounded_direct_mode(op: Any) -> None:
    stop = threading.Event()

    def push(e: Any) -> None:
        def run() -> None:
            i = 0
            while not e.is_cancelled and not stop.is_set():
                e.on_next(i)
                i += 1
                time.sleep(0.0005)

        threading.Thread(target=run, daemon=True).start()

    ts = op(Flowable.create(push, BackpressureStrategy.BUFFER)).test()
    ts.await_count(20, 5)  # by now the upstream thread emits directly (no queue, no atomics)
    assert getattr(ts.subscription, "_direct", None) is True
    ts.request(0)
    ts.await_done(5).assert_error(ValueError).assert_no_violations()
    stop.set()


def test_rule_3_9_buffer_bad_request_after_upstream_completed() -> None:
    ts = Flowable.range(0, 5).on_backpressure_buffer().test(1)
    ts.request(-1)
    ts.assert_values(0).assert_error(ValueError).assert_no_violations()


@pytest.mark.parametrize(
    "op",
    [
        lambda f: f.on_backpressure_buffer(),
        lambda f: f.on_backpressure_latest(),
        lambda f: f.on_backpressure_drop(),
        lambda f: f.rebatch_requests(2),
    ],
)
def test_rule_3_3_reentrant_request_one_at_a_time(op: Any) -> None:
    class OneByOne(TestSubscriber[int]):
        def on_next(self, item: int) -> None:
            super().on_next(item)
            self.request(1)

    ts = OneByOne(1)
    op(pusher_thread(list(range(3000)), BackpressureStrategy.BUFFER)).subscribe(ts)
    ts.await_done(5).assert_complete().assert_no_violations()


@pytest.mark.parametrize("op", [lambda f: f.on_backpressure_buffer(), lambda f: f.rebatch_requests(8)])
def test_rule_3_13_cancel_drops_downstream_and_queue(op: Any) -> None:
    ts = op(Flowable.range(0, 100)).test(1)
    ts.cancel()
    sub = ts.subscription
    assert getattr(sub, "_downstream", "gone") is None
    assert len(getattr(sub, "_queue", [])) == 0

