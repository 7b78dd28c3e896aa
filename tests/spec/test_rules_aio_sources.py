"""Reactive Streams rule tests (``test_rule_*``) of ``Flowable.from_async_iterable``.

Their other tests (scenarios, properties, arguments) are in ``tests/aio/test_aio_sources.py``."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

from aio.test_aio_sources import Counting, _wait_subscribed
from rstreams import Flowable
from rstreams.testing import TestSubscriber


def test_rule_1_1_pulls_only_on_demand() -> None:
    src = Counting(100)
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.from_async_iterable(src).subscribe(ts)
    _wait_subscribed(ts)
    threading.Event().wait(0.02)
    assert src.pulled == 0
    ts.request(3)
    ts.await_count(3, 2)
    threading.Event().wait(0.02)
    assert src.pulled == 3
    ts.request(2)
    ts.await_count(5, 2)
    threading.Event().wait(0.02)
    assert src.pulled == 5
    ts.assert_values(0, 1, 2, 3, 4).assert_not_complete()
    ts.cancel()
    assert src.closed.wait(2)  # the async generator's finally ran (aclose)
    ts.assert_no_violations()


def test_rule_3_13_cancel_while_awaiting_anext_closes_the_iterator() -> None:
    src = Counting(1000, delay=0.5)
    ts = Flowable.from_async_iterable(src).test()
    _wait_subscribed(ts)
    threading.Event().wait(0.02)
    ts.cancel()
    assert src.closed.wait(2)
    ts.assert_no_values().assert_not_complete().assert_no_violations()


def test_rule_2_13_none_element_is_type_error() -> None:
    async def gen() -> AsyncIterator[Any]:
        yield 1
        yield None

    class It:
        def __aiter__(self) -> AsyncIterator[Any]:
            return gen()

    Flowable.from_async_iterable(It()).test().await_done(2).assert_values(1).assert_error(
        TypeError
    ).assert_no_violations()


@pytest.mark.parametrize("bad", [0, -1])
def test_rule_3_9_bad_request_signals_value_error(bad: int) -> None:
    src = Counting(10)
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.from_async_iterable(src).subscribe(ts)
    _wait_subscribed(ts)
    sub = ts.subscription
    assert sub is not None
    sub.request(bad)
    ts.await_done(2).assert_error(ValueError, match="3.9").assert_no_violations()
