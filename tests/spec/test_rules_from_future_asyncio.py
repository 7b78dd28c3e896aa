"""Reactive Streams rule tests (``test_rule_*``) of Flowable.from_future over asyncio futures and tasks.

Their other tests (scenarios, properties, arguments) are in ``tests/interop/test_from_future_asyncio.py``."""

from __future__ import annotations

import asyncio
import threading

from interop.test_from_future_asyncio import _future, _on_loop
from rstreams import Flowable
from rstreams.testing import TestSubscriber


def test_rule_1_1_the_result_waits_for_a_request(loop: asyncio.AbstractEventLoop) -> None:
    fut = _future(loop)
    ts: TestSubscriber[int] = Flowable.from_future(fut).test(0)
    _on_loop(loop, fut.set_result, 42)
    _on_loop(loop, lambda: None)  # the done callbacks set_result scheduled have run (FIFO)
    ts.assert_no_values().assert_not_complete()
    ts.request(1)
    ts.assert_result(42).assert_no_violations()  # emitted by the request, on this thread
    assert ts.last_thread == threading.current_thread().name

