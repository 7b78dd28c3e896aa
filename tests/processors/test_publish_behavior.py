"""PublishProcessor and BehaviorProcessor: behaviour tests (RxJava 3 semantics). Their rule tests are in
``tests/spec/test_rules_publish_behavior.py``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams import Flowable
from rstreams.errors import MissingBackpressureError
from rstreams.flowable import NOTSET
from rstreams.processors import BehaviorProcessor, PublishProcessor
from rstreams.testing import TestSubscriber


class Boom(Exception):
    pass


# ---------------------------------------------------------------------------------- Publish


def test_publish_multicasts_live_items_only() -> None:
    pp = PublishProcessor.create()
    a = pp.test()
    pp.on_next(1)
    b = pp.test()
    pp.on_next(2)
    pp.on_complete()
    a.assert_result(1, 2).assert_no_violations()
    b.assert_result(2).assert_no_violations()
    assert pp.has_complete and not pp.has_throwable and pp.throwable is None
    assert not pp.has_subscribers and pp.subscriber_count == 0


def test_publish_late_subscriber_gets_only_the_terminal_signal() -> None:
    pp = PublishProcessor.create()
    pp.on_next(1)
    pp.on_error(Boom("x"))
    pp.test().assert_no_values().assert_error(Boom).assert_no_violations()
    assert pp.has_throwable and isinstance(pp.throwable, Boom) and not pp.has_complete
    pp2 = PublishProcessor.create()
    pp2.on_complete()
    pp2.test().assert_result().assert_no_violations()


def test_publish_subscriber_without_demand_gets_missing_backpressure_alone() -> None:
    pp = PublishProcessor.create()
    fast = pp.test()
    slow = pp.test(1)
    pp.on_next(1)
    assert pp.subscriber_count == 2
    pp.on_next(2)
    slow.assert_values(1).assert_error(MissingBackpressureError).assert_no_violations()
    msg = str(slow.errors[0])
    assert "PublishProcessor" in msg and "requested 0" in msg
    assert "on_backpressure_buffer" in msg and "MulticastProcessor" in msg
    assert pp.subscriber_count == 1
    pp.on_next(3)
    pp.on_complete()
    fast.assert_result(1, 2, 3).assert_no_violations()


def test_publish_offer_emits_only_if_every_subscriber_has_demand() -> None:
    pp = PublishProcessor.create()
    a = pp.test(1)
    b = pp.test(2)
    assert pp.offer(1) is True
    assert pp.offer(2) is False  # a has no demand left: nothing emitted to anyone
    a.assert_values(1).assert_no_errors()
    b.assert_values(1)
    a.request(1)
    assert pp.offer(2) is True
    a.assert_values(1, 2).assert_no_violations()
    b.assert_values(1, 2).assert_no_violations()
    pp.on_complete()
    assert pp.offer(3) is False


def test_publish_offer_without_subscribers_is_true() -> None:
    assert PublishProcessor.create().offer(1) is True


def test_publish_as_subscriber_requests_unbounded() -> None:
    pp = PublishProcessor.create()
    ts = pp.test()
    Flowable.range(0, 500).subscribe(pp)
    ts.assert_result(*range(500)).assert_no_violations()


def test_publish_cancel_removes_and_drops_the_subscriber() -> None:
    pp = PublishProcessor.create()
    ts = pp.test()
    pp.on_next(1)
    ts.cancel()
    assert pp.subscriber_count == 0
    pp.on_next(2)
    ts.assert_values(1).assert_no_violations()


def test_publish_processor_has_the_operators() -> None:
    pp = PublishProcessor.create()
    ts = pp.map(lambda x: x * 10).filter(lambda x: x > 10).test()
    for i in range(4):
        pp.on_next(i)
    pp.on_complete()
    ts.assert_result(20, 30).assert_no_violations()


def test_publish_on_subscribe_after_termination_cancels_upstream() -> None:
    pp = PublishProcessor.create()
    pp.on_complete()
    cancelled: list[bool] = []
    Flowable.never().do_on_cancel(lambda: cancelled.append(True)).subscribe(pp)
    assert cancelled == [True]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(), max_size=30), st.lists(st.integers(1, 5), min_size=1, max_size=10))
def test_publish_property_offer_matches_model(data: list[int], requests: list[int]) -> None:
    """offer() never over-delivers; what a requesting subscriber receives is the accepted prefix."""
    pp = PublishProcessor.create()
    ts: TestSubscriber[int] = pp.test(0)
    accepted: list[int] = []
    reqs = iter(requests)
    for x in data:
        if not pp.offer(x):
            r = next(reqs, None)
            if r is None:
                break
            ts.request(r)
            if pp.offer(x):
                accepted.append(x)
        else:
            accepted.append(x)
    assert ts.values == accepted
    ts.assert_no_violations()


# ---------------------------------------------------------------------------------- Behavior


def test_behavior_replays_latest_to_new_subscriber() -> None:
    bp = BehaviorProcessor.create()
    assert not bp.has_value and bp.value is None
    bp.on_next(1)
    bp.on_next(2)
    assert bp.has_value and bp.value == 2
    ts = bp.test()
    ts.assert_values(2)
    bp.on_next(3)
    bp.on_complete()
    ts.assert_result(2, 3).assert_no_violations()
    assert not bp.has_value  # cleared at termination
    bp.test().assert_result().assert_no_violations()


def test_behavior_default_value() -> None:
    bp = BehaviorProcessor.create(default=0)
    bp.test().assert_values(0).assert_no_violations()
    with pytest.raises(TypeError):
        BehaviorProcessor.create(default=None)
    assert BehaviorProcessor.create(default=NOTSET).has_value is False


def test_behavior_latest_waits_for_first_request() -> None:
    bp = BehaviorProcessor.create(default=1)
    ts = bp.test(0)
    ts.assert_no_values().assert_no_errors()
    bp.on_next(2)  # replaces the value not yet delivered: it is the latest
    ts.assert_no_values().assert_no_errors()
    ts.request(1)
    ts.assert_values(2).assert_no_errors()
    bp.on_next(3)  # live item, no demand: PublishProcessor rule
    ts.assert_values(2).assert_error(MissingBackpressureError).assert_no_violations()
    assert "BehaviorProcessor" in str(ts.errors[0])


def test_behavior_live_items_with_demand() -> None:
    bp = BehaviorProcessor.create(default=0)
    ts = bp.test(3)
    bp.on_next(1)
    bp.on_next(2)
    ts.assert_values(0, 1, 2).assert_no_errors().assert_no_violations()


def test_behavior_error_terminates_and_late_get_error() -> None:
    bp = BehaviorProcessor.create(default=0)
    ts = bp.test()
    bp.on_error(Boom())
    ts.assert_values(0).assert_error(Boom).assert_no_violations()
    bp.test().assert_no_values().assert_error(Boom).assert_no_violations()
    assert bp.has_throwable


def test_behavior_offer() -> None:
    bp = BehaviorProcessor.create()
    ts = bp.test(1)
    assert bp.offer(1)
    assert not bp.offer(2)
    ts.assert_values(1).assert_no_errors().assert_no_violations()
    assert bp.value == 1


def test_behavior_cancel_in_on_subscribe() -> None:
    bp = BehaviorProcessor.create(default=1)
    ts = bp.test(cancel=True)
    bp.on_next(2)
    ts.assert_no_values().assert_no_violations()
    assert bp.subscriber_count == 0


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(), max_size=20), st.integers(0, 20))
def test_behavior_property_subscriber_sees_latest_then_live(data: list[int], split: int) -> None:
    bp = BehaviorProcessor.create()
    before, after = data[:split], data[split:]
    for x in before:
        bp.on_next(x)
    ts: TestSubscriber[int] = bp.test()
    for x in after:
        bp.on_next(x)
    bp.on_complete()
    want = ([before[-1]] if before else []) + after
    ts.assert_result(*want).assert_no_violations()
