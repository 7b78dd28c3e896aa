"""ReplayProcessor, UnicastProcessor and AsyncProcessor: behaviour tests. Their rule tests are in
``tests/spec/test_rules_replay_unicast_async.py``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams import Flowable
from rstreams.errors import ProtocolViolationError
from rstreams.processors import AsyncProcessor, ReplayProcessor, UnicastProcessor
from rstreams.testing import TestSubscriber


class Boom(Exception):
    pass


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def now(self) -> float:
        return self.t


def drive(ts: TestSubscriber[Any], requests: list[int], limit: int = 10_000) -> None:
    """Request per the pattern (cycled) until the subscriber terminates."""
    i = 0
    while not ts.is_terminated and i < limit:
        ts.request(requests[i % len(requests)])
        i += 1


# ---------------------------------------------------------------------------------- Replay


def test_replay_unbounded_replays_everything_at_own_pace() -> None:
    rp = ReplayProcessor.create()
    for i in range(300):  # more than two chunks
        rp.on_next(i)
    ts = rp.test(0)
    ts.request(5).assert_values(*range(5))
    ts.request(295).assert_value_count(300).assert_not_complete()
    rp.on_next(300)
    rp.on_complete()
    ts.assert_not_complete()
    ts.request(1).assert_result(*range(301)).assert_no_violations()
    rp.test().assert_result(*range(301)).assert_no_violations()
    assert rp.values == list(range(301)) and rp.has_complete


def test_replay_size_bound() -> None:
    rp = ReplayProcessor.create(max_size=3)
    early = rp.test(1)
    for i in range(1000):
        rp.on_next(i)
    assert rp.values == [997, 998, 999]
    rp.test().assert_values(997, 998, 999).assert_no_violations()
    early.assert_values(0)
    early.request(2).assert_values(0, 1, 2)  # an existing subscriber keeps its position
    rp.on_complete()
    rp.test(2).assert_values(997, 998).assert_not_complete().request(1).assert_complete()
    for chunk_bound in (1, 128, 129, 256):
        rp2 = ReplayProcessor.create(max_size=chunk_bound)
        for i in range(700):
            rp2.on_next(i)
        assert rp2.values == list(range(700 - chunk_bound, 700))


def test_replay_time_bound_with_fake_clock() -> None:
    clock = FakeClock()
    rp = ReplayProcessor.create(max_age=10.0, scheduler=clock)
    rp.on_next(1)
    clock.t += 5
    rp.on_next(2)
    clock.t += 6  # item 1 is now 11 s old
    rp.on_next(3)
    rp.test().assert_values(2, 3).assert_no_violations()
    clock.t += 20  # everything stale
    assert rp.values == []
    rp.cleanup_buffer()
    ts = rp.test()
    ts.assert_no_values()
    rp.on_next(4)
    rp.on_complete()
    ts.assert_result(4).assert_no_violations()
    rp.test().assert_result(4).assert_no_violations()


def test_replay_time_and_size_bound() -> None:
    clock = FakeClock()
    rp = ReplayProcessor.create(max_size=2, max_age=10.0, scheduler=clock)
    for i in range(5):
        rp.on_next(i)
        clock.t += 3
    assert rp.values == [3, 4]
    clock.t += 8  # item 3 at t=109 is 14 s old, item 4 at t=112 is 11 s old
    assert rp.values == []


def test_replay_time_bound_across_chunks() -> None:
    clock = FakeClock()
    rp = ReplayProcessor.create(max_age=50.0, scheduler=clock)
    for i in range(400):
        rp.on_next(i)
        clock.t += 1
    # now = 500; items younger than 50 s: pushed at t > 450, i.e. i >= 351 (RxJava keeps an item
    # while its age is less than max_age: the one pushed at t = 450 is exactly 50 s old, gone)
    assert rp.values == list(range(351, 400))
    rp.test().assert_values(*range(351, 400)).assert_no_violations()


def test_replay_bad_arguments() -> None:
    with pytest.raises(ValueError):
        ReplayProcessor.create(max_size=0)
    with pytest.raises(TypeError):
        ReplayProcessor.create(max_size=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        ReplayProcessor.create(max_age=-1)
    with pytest.raises(TypeError):
        ReplayProcessor.create(max_age=1, scheduler=object())


def test_replay_error_after_items() -> None:
    rp = ReplayProcessor.create()
    rp.on_next(1)
    rp.on_error(Boom())
    rp.test().assert_values(1).assert_error(Boom).assert_no_violations()
    rp.test(0).assert_no_values().request(1).assert_values(1).assert_error(Boom)


def test_replay_cancel_removes() -> None:
    rp = ReplayProcessor.create()
    ts = rp.test()
    rp.on_next(1)
    ts.cancel()
    assert not rp.has_subscribers
    rp.on_next(2)
    ts.assert_values(1).assert_no_violations()


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(), max_size=300),
    st.lists(st.integers(1, 50), min_size=1, max_size=8),
    st.one_of(st.none(), st.integers(1, 200)),
)
def test_replay_property_late_subscriber_matches_model(
    data: list[int], requests: list[int], size: int | None
) -> None:
    rp = ReplayProcessor.create(max_size=size)
    early: TestSubscriber[int] = rp.test(0)
    for x in data:
        rp.on_next(x)
    rp.on_complete()
    late: TestSubscriber[int] = rp.test(0)
    drive(late, requests)
    drive(early, requests)
    want = data if size is None else data[-size:] if data else []
    late.assert_result(*want).assert_no_violations()
    early.assert_result(*data).assert_no_violations()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(), max_size=200), st.lists(st.integers(1, 20), min_size=1, max_size=8))
def test_replay_property_live_interleaved_requests(data: list[int], requests: list[int]) -> None:
    """Requests interleaved with live items: exactly the data, in order, never beyond demand."""
    rp = ReplayProcessor.create()
    ts: TestSubscriber[int] = rp.test(0)
    for i, x in enumerate(data):
        rp.on_next(x)
        if i % 3 == 0:
            ts.request(requests[i % len(requests)])
    rp.on_complete()
    drive(ts, requests)
    ts.assert_result(*data).assert_no_violations()


# ---------------------------------------------------------------------------------- Unicast


def test_unicast_buffers_until_subscribed_and_honours_demand() -> None:
    up = UnicastProcessor.create()
    for i in range(5):
        up.on_next(i)
    up.on_complete()
    ts = up.test(2)
    ts.assert_values(0, 1).assert_not_complete()
    ts.request(3).assert_result(0, 1, 2, 3, 4).assert_no_violations()


def test_unicast_second_subscriber_is_refused() -> None:
    up = UnicastProcessor.create()
    first = up.test()
    second = up.test()
    second.assert_no_values().assert_error(ProtocolViolationError).assert_no_violations()
    msg = str(second.errors[0])
    assert "only a single Subscriber" in msg and "1.11" in msg
    up.on_next(1)
    first.assert_values(1).assert_no_violations()
    assert up.has_subscribers and up.subscriber_count == 1


def test_unicast_on_terminate_once_on_complete_or_cancel() -> None:
    calls: list[int] = []
    up = UnicastProcessor.create(on_terminate=lambda: calls.append(1))
    ts = up.test()
    up.on_complete()
    ts.cancel()
    assert calls == [1]
    calls2: list[int] = []
    up2 = UnicastProcessor.create(on_terminate=lambda: calls2.append(1))
    ts2 = up2.test()
    up2.on_next(1)
    ts2.cancel()
    ts2.cancel()
    up2.on_next(2)
    assert calls2 == [1]
    ts2.assert_values(1).assert_no_violations()
    with pytest.raises(TypeError):
        UnicastProcessor.create(on_terminate=3)  # type: ignore[arg-type]


def test_unicast_error_eager_vs_delay_error() -> None:
    up = UnicastProcessor.create()
    up.on_next(1)
    up.on_error(Boom())
    up.test().assert_no_values().assert_error(Boom).assert_no_violations()
    ud = UnicastProcessor.create(delay_error=True)
    ud.on_next(1)
    ud.on_error(Boom())
    ts = ud.test(0)
    ts.assert_no_values().assert_no_errors()
    ts.request(1).assert_values(1).assert_error(Boom).assert_no_violations()


def test_unicast_live_delivery_with_lag() -> None:
    up = UnicastProcessor.create()
    ts = up.test(1)
    for i in range(10):
        up.on_next(i)
    ts.assert_values(0)
    ts.request(4).assert_values(0, 1, 2, 3, 4)
    up.on_complete()
    ts.request(100).assert_result(*range(10)).assert_no_violations()


def test_unicast_as_processor_between_flowables() -> None:
    up = UnicastProcessor.create()
    Flowable.range(0, 50).subscribe(up)
    ts = up.test(0)
    drive(ts, [7])
    ts.assert_result(*range(50)).assert_no_violations()


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(), max_size=100),
    st.lists(st.integers(1, 10), min_size=1, max_size=8),
    st.integers(0, 100),
)
def test_unicast_property_matches_model(data: list[int], requests: list[int], subscribe_at: int) -> None:
    up = UnicastProcessor.create()
    ts: TestSubscriber[int] = TestSubscriber(0)
    for i, x in enumerate(data):
        if i == subscribe_at:
            up.subscribe(ts)
        up.on_next(x)
        if i % 2 and ts.subscribed:
            ts.request(requests[i % len(requests)])
    up.on_complete()
    if not ts.subscribed:
        up.subscribe(ts)
    drive(ts, requests)
    ts.assert_result(*data).assert_no_violations()


# ---------------------------------------------------------------------------------- Async


def test_async_emits_last_value_on_completion() -> None:
    ap = AsyncProcessor.create()
    ts = ap.test()
    ap.on_next(1)
    ap.on_next(2)
    ts.assert_no_values()
    assert ap.value is None
    ap.on_complete()
    ts.assert_result(2).assert_no_violations()
    assert ap.value == 2 and ap.has_value and ap.has_complete
    ap.test().assert_result(2).assert_no_violations()


def test_async_waits_for_request() -> None:
    ap = AsyncProcessor.create()
    ts = ap.test(0)
    ap.on_next(1)
    ap.on_complete()
    ts.assert_no_values().assert_not_complete()
    ts.request(1).assert_result(1).assert_no_violations()


def test_async_empty_and_error() -> None:
    ap = AsyncProcessor.create()
    ts = ap.test(0)
    ap.on_complete()
    ts.assert_result().assert_no_violations()
    ae = AsyncProcessor.create()
    ae.on_next(1)
    ae.on_error(Boom())
    ae.test().assert_no_values().assert_error(Boom).assert_no_violations()
    assert ae.has_throwable and ae.value is None


def test_async_cancel_removes() -> None:
    ap = AsyncProcessor.create()
    ts = ap.test()
    assert ap.subscriber_count == 1
    ts.cancel()
    assert ap.subscriber_count == 0
    ap.on_next(1)
    ap.on_complete()
    ts.assert_no_values().assert_no_violations()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(), max_size=20), st.integers(0, 3))
def test_async_property_last(data: list[int], initial: int) -> None:
    ap = AsyncProcessor.create()
    ts: TestSubscriber[int] = ap.test(initial)
    for x in data:
        ap.on_next(x)
    ap.on_complete()
    if initial == 0:
        ts.request(1)
    ts.assert_result(*data[-1:]).assert_no_violations()


def test_unicast_cancel_cancels_its_upstream_and_refuses_a_second_upstream(
    undeliverable: list[BaseException],
) -> None:
    cancelled: list[str] = []
    up = UnicastProcessor.create()
    Flowable.never().do_on_cancel(lambda: cancelled.append("first")).subscribe(up)
    Flowable.never().do_on_cancel(lambda: cancelled.append("second")).subscribe(up)
    assert cancelled == ["second"]  # rule 2.5: a second Subscription is cancelled
    assert len(undeliverable) == 1 and "2.12" in str(undeliverable[0])
    ts = up.test()
    ts.cancel()
    assert cancelled == ["second", "first"]  # rule 3.14: the only subscriber left
    ts.assert_no_values().assert_no_violations()
