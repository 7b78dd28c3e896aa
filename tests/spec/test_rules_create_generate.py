"""Reactive Streams rule tests (``test_rule_*``) of Flowable.create and Flowable.generate.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_create_generate.py``."""

from __future__ import annotations

from typing import Any

import pytest

from operators.test_create_generate import B, counter, pusher
from rstreams import BackpressureStrategy, Flowable
from rstreams.testing import TestSubscriber


@pytest.mark.parametrize("strategy", list(B))
def test_rule_3_9_create_request_zero_signals_value_error(strategy: BackpressureStrategy) -> None:
    calls: list[int] = []

    def push(e: Any) -> None:
        e.set_cancellable(lambda: calls.append(1))

    ts = Flowable.create(push, strategy).test(0)
    ts.request(0)
    ts.assert_error(ValueError).assert_no_values().assert_no_violations()
    assert "3.9" in str(ts.errors[0])
    assert calls == [1]


def test_rule_3_9_create_bad_request_with_buffered_items() -> None:
    ts = Flowable.create(pusher([1, 2, 3], complete=False), B.BUFFER).test(1)
    ts.request(-1)
    ts.assert_values(1).assert_error(ValueError).assert_no_violations()


def test_rule_3_3_create_reentrant_request_is_bounded() -> None:
    """Requesting 1 from inside on_next for 10k items must not recurse."""

    class OneByOne(TestSubscriber[int]):
        def on_next(self, item: int) -> None:
            super().on_next(item)
            self.request(1)

    ts = OneByOne(1)
    Flowable.create(pusher(list(range(10_000))), B.BUFFER).subscribe(ts)
    ts.assert_value_count(10_000).assert_complete().assert_no_violations()


def test_rule_3_9_generate_request_zero_signals_value_error() -> None:
    disposed: list[int] = []
    ts = Flowable.generate(lambda: 0, counter(10), disposed.append).test(0)
    ts.request(0)
    ts.assert_error(ValueError).assert_no_values().assert_no_violations()
    assert "3.9" in str(ts.errors[0])
    assert disposed == [0]


def test_rule_3_9_generate_request_negative_after_values() -> None:
    ts = Flowable.generate(lambda: 0, counter(10)).test(2)
    ts.request(-5)
    ts.assert_values(0, 1).assert_error(ValueError).assert_no_violations()

