"""Reactive Streams rule tests (``test_rule_*``) of ``map_async``.

Their other tests (scenarios, properties, arguments) are in ``tests/aio/test_map_async.py``."""

from __future__ import annotations

import asyncio
from typing import Any

from aio.test_map_async import Boom
from rstreams import Flowable
from rstreams.testing import TestSubscriber


def test_rule_2_13_none_result_and_raising_function() -> None:
    async def none(x: int) -> None:
        return None

    def raising(x: int) -> Any:
        raise Boom("sync part")

    Flowable.range(0, 3).map_async(none).test().await_done(2).assert_error(
        TypeError, match="map_async"
    ).assert_no_violations()
    Flowable.range(0, 3).map_async(raising).test().await_done(2).assert_error(Boom).assert_no_violations()
    Flowable.range(0, 3).map_async(lambda x: x).test().await_done(2).assert_error(
        TypeError
    ).assert_no_violations()


def test_rule_3_9_bad_request() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.range(0, 10).map_async(lambda x: asyncio.sleep(0, x)).subscribe(ts)
    ts.request(-1)
    ts.await_done(2).assert_error(ValueError, match="3.9").assert_no_violations()
