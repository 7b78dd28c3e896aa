"""Reactive Streams rule tests (``test_rule_*``) of Flowable.using and Flowable.from_future.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_using_future.py``."""

from __future__ import annotations

import concurrent.futures

import pytest

from operators.test_using_future import _await_no_timer_threads
from rstreams import Flowable


def test_rule_3_9_from_future_request_zero_signals_value_error() -> None:
    fut: concurrent.futures.Future[int] = concurrent.futures.Future()
    ts = Flowable.from_future(fut, timeout=30).test(0)
    ts.request(0)
    ts.assert_error(ValueError).assert_no_violations()
    assert "3.9" in str(ts.errors[0])
    _await_no_timer_threads()
    fut.set_result(1)
    ts.assert_no_values()


@pytest.mark.parametrize("eager", [True, False])
def test_rule_3_9_using_request_zero_signals_value_error(eager: bool) -> None:
    disposed: list[int] = []
    ts = Flowable.using(lambda: 1, lambda r: Flowable.range(0, 10), disposed.append, eager).test(0)
    ts.request(0)
    ts.assert_error(ValueError).assert_no_values().assert_no_violations()
    assert "3.9" in str(ts.errors[0])
    assert disposed == [1]

