"""group_by into flat_map, fully consumed, whatever way the downstream requests.

A synchronous source re-enters group_by while flat_map's drain replenishes one group; the other
groups' queues then fill while their consumer (flat_map's inner) is about to be requested. That
is backpressure, not a slow group: every way of requesting must deliver all elements.
"""

from __future__ import annotations

from typing import Any

import pytest

from rstreams import Flowable, schedulers
from rstreams.testing import TestSubscriber

N = 1000
MAX = 2**63 - 1


def _source(hidden: bool) -> Flowable[int]:
    f = Flowable.range(0, N)
    return f.hide() if hidden else f


def _chain(hidden: bool, keys: int = 3) -> Flowable[int]:
    return _source(hidden).group_by(lambda x: x % keys).flat_map(lambda g: g)


@pytest.mark.parametrize("hidden", [False, True], ids=["fused", "hidden"])
@pytest.mark.parametrize("keys", [1, 2, 3, 7, 100])
def test_request_after_subscribe_unbounded(hidden: bool, keys: int) -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    _chain(hidden, keys).subscribe(ts)
    ts.request(MAX)
    ts.assert_complete().assert_no_errors().assert_no_violations()
    assert sorted(ts.values) == list(range(N))


@pytest.mark.parametrize("hidden", [False, True], ids=["fused", "hidden"])
@pytest.mark.parametrize("chunk", [1, 7, 128, 1000])
def test_request_in_chunks(hidden: bool, chunk: int) -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    _chain(hidden).subscribe(ts)
    while not ts.is_terminated:
        ts.request(chunk)
    ts.assert_complete().assert_no_errors().assert_no_violations()
    assert sorted(ts.values) == list(range(N))


@pytest.mark.parametrize("hidden", [False, True], ids=["fused", "hidden"])
def test_request_in_on_subscribe(hidden: bool) -> None:
    ts = _chain(hidden).test()
    ts.assert_complete().assert_no_errors().assert_no_violations()
    assert sorted(ts.values) == list(range(N))


@pytest.mark.parametrize("hidden", [False, True], ids=["fused", "hidden"])
def test_blocking_iterable(hidden: bool) -> None:
    assert sorted(_chain(hidden).blocking_iterable()) == list(range(N))
    # the same signals through a TestSubscriber behind the same chain
    ts = _chain(hidden).test()
    ts.assert_value_count(N).assert_complete().assert_no_violations()


@pytest.mark.parametrize("hidden", [False, True], ids=["fused", "hidden"])
def test_observe_on_after(hidden: bool) -> None:
    ts = _chain(hidden).observe_on(schedulers.single()).test()
    ts.await_done(10).assert_complete().assert_no_errors().assert_no_violations()
    assert sorted(ts.values) == list(range(N))


def test_observe_on_before_request_later() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.range(0, N).observe_on(schedulers.single()).group_by(lambda x: x % 3).flat_map(lambda g: g).subscribe(ts)
    ts.request(MAX)
    ts.await_done(10).assert_complete().assert_no_errors().assert_no_violations()
    assert sorted(ts.values) == list(range(N))


def test_groups_behind_a_boundary() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.range(0, N).group_by(lambda x: x % 3).flat_map(
        lambda g: g.observe_on(schedulers.computation())
    ).subscribe(ts)
    ts.request(MAX)
    ts.await_done(10).assert_complete().assert_no_errors().assert_no_violations()
    assert sorted(ts.values) == list(range(N))


def test_per_group_order_is_kept() -> None:
    ts: TestSubscriber[Any] = TestSubscriber(0)
    Flowable.range(0, N).group_by(lambda x: x % 3).flat_map(lambda g: g.map(lambda x: (g.key, x))).subscribe(ts)
    ts.request(MAX)
    ts.assert_complete().assert_no_violations()
    for k in range(3):
        assert [x for key, x in ts.values if key == k] == list(range(k, N, 3))


def test_a_really_slow_group_still_fails_outside_a_replenish() -> None:
    # the documented slow-group error is kept when nothing is consuming: key 0 never requests
    slow: TestSubscriber[int] = TestSubscriber(0)

    def subscribe_group(g: Any) -> None:
        g.subscribe(slow if g.key == 0 else TestSubscriber())

    main = Flowable.range(0, N).group_by(lambda x: x % 2, buffer_size=8).do_on_next(subscribe_group).test()
    main.assert_error(Exception, match="key 0").assert_no_violations()
    slow.assert_no_violations()
