"""Subscription helpers: CANCELLED, set_once, cancel, replace, deferred request, the arbiter."""

from __future__ import annotations

from rstreams._internal import plugins
from rstreams._internal.atomics import AtomicInt, AtomicRef
from rstreams._internal.subscriptions import (
    CANCELLED,
    EMPTY,
    DeferredSubscription,
    SubscriptionArbiter,
    cancel,
    complete_empty,
    deferred_request,
    deferred_set_once,
    error_empty,
    is_cancelled,
    replace,
    set_once,
)
from rstreams.errors import ProtocolViolationError

from ._helpers import RecordingSubscriber, RecordingSubscription

MAX = 2**63 - 1


def _ref() -> AtomicRef:
    return AtomicRef(None)


def test_cancelled_and_empty_are_no_ops() -> None:
    for s in (CANCELLED, EMPTY):
        assert s.request(1) is None
        assert s.request(-5) is None  # no rule 3.9 signal from the terminal sentinel
        assert s.cancel() is None
        s.cancel()
    assert repr(CANCELLED) == "CANCELLED" and repr(EMPTY) == "EMPTY"


def test_complete_empty_and_error_empty_call_on_subscribe_first() -> None:
    sub = RecordingSubscriber()
    complete_empty(sub)
    assert sub.events == [("subscribe", EMPTY), ("complete",)]
    sub2 = RecordingSubscriber()
    err = ValueError("e")
    error_empty(sub2, err)
    assert sub2.events == [("subscribe", EMPTY), ("error", err)]


def test_set_once_stores_the_first() -> None:
    ref = _ref()
    up = RecordingSubscription()
    with plugins.collect_errors() as errors:
        assert set_once(ref, up) is True
    assert ref.get() is up and up.cancels == 0 and not errors


def test_set_once_cancels_the_second_and_reports_rule_2_12() -> None:
    ref = _ref()
    first, second = RecordingSubscription("a"), RecordingSubscription("b")
    set_once(ref, first)
    with plugins.collect_errors() as errors:
        assert set_once(ref, second, "MyOperator") is False
    assert ref.get() is first and first.cancels == 0
    assert second.cancels == 1
    assert len(errors) == 1 and isinstance(errors[0], ProtocolViolationError)
    assert errors[0].rule == "2.12" and "MyOperator" in str(errors[0])


def test_set_once_after_cancel_cancels_the_arrival_without_report() -> None:
    ref = _ref()
    assert cancel(ref) is True  # cancel before the upstream arrived
    up = RecordingSubscription()
    with plugins.collect_errors() as errors:
        assert set_once(ref, up) is False
    assert up.cancels == 1 and not errors
    assert is_cancelled(ref)


def test_cancel_is_idempotent_and_cancels_what_was_held_once() -> None:
    ref = _ref()
    up = RecordingSubscription()
    set_once(ref, up)
    assert not is_cancelled(ref)
    assert cancel(ref) is True
    assert cancel(ref) is False
    assert cancel(ref) is False
    assert up.cancels == 1 and ref.get() is CANCELLED


def test_replace_swaps_without_cancelling_and_cancels_into_a_cancelled_field() -> None:
    ref = _ref()
    a, b, c = RecordingSubscription("a"), RecordingSubscription("b"), RecordingSubscription("c")
    assert replace(ref, a) is True
    assert replace(ref, b) is True
    assert ref.get() is b and a.cancels == 0
    cancel(ref)
    assert b.cancels == 1
    assert replace(ref, c) is False
    assert c.cancels == 1 and ref.get() is CANCELLED
    assert replace(ref, None) is False


def test_deferred_request_accumulates_until_arrival_then_forwards_once() -> None:
    ref, requested = _ref(), AtomicInt()
    deferred_request(ref, requested, 3)
    deferred_request(ref, requested, 4)
    assert requested.get() == 7
    up = RecordingSubscription()
    assert deferred_set_once(ref, requested, up) is True
    assert up.requests == [7] and requested.get() == 0
    deferred_request(ref, requested, 5)  # after arrival: forwarded directly
    assert up.requests == [7, 5]


def test_deferred_set_once_without_prior_demand_requests_nothing() -> None:
    ref, requested = _ref(), AtomicInt()
    up = RecordingSubscription()
    deferred_set_once(ref, requested, up)
    assert up.requests == []


def test_deferred_request_caps_accumulated_demand() -> None:
    ref, requested = _ref(), AtomicInt()
    deferred_request(ref, requested, MAX)
    deferred_request(ref, requested, 10)
    up = RecordingSubscription()
    deferred_set_once(ref, requested, up)
    assert up.requests == [MAX]


def test_deferred_request_after_cancel_goes_nowhere() -> None:
    ref, requested = _ref(), AtomicInt()
    cancel(ref)
    deferred_request(ref, requested, 5)  # CANCELLED.request is a no-op
    up = RecordingSubscription()
    with plugins.collect_errors() as errors:
        assert deferred_set_once(ref, requested, up) is False
    assert up.requests == [] and up.cancels == 1 and not errors


def test_deferred_subscription_object() -> None:
    d = DeferredSubscription()
    d.request(2)
    d.request(3)
    up = RecordingSubscription()
    assert d.set_upstream(up) is True
    assert up.requests == [5]
    d.request(1)
    assert up.requests == [5, 1]
    assert not d.is_cancelled
    d.cancel()
    d.cancel()
    assert d.is_cancelled and up.cancels == 1
    late = RecordingSubscription()
    assert d.set_upstream(late) is False and late.cancels == 1


def test_deferred_subscription_cancel_before_upstream() -> None:
    d = DeferredSubscription()
    d.cancel()
    up = RecordingSubscription()
    with plugins.collect_errors() as errors:
        d.set_upstream(up)
    assert up.cancels == 1 and not errors


def test_arbiter_carries_demand_across_switch() -> None:
    arb = SubscriptionArbiter()
    first, second = RecordingSubscription("a"), RecordingSubscription("b")
    arb.set_subscription(first)
    arb.request(10)
    assert first.requests == [10]
    arb.produced(3)
    arb.set_subscription(second)
    assert second.requests == [7]
    assert first.cancels == 1  # cancel_on_replace
    arb.request(2)
    assert second.requests == [7, 2] and first.requests == [10]


def test_arbiter_request_before_any_upstream_is_remembered() -> None:
    arb = SubscriptionArbiter()
    arb.request(4)
    arb.request(1)
    up = RecordingSubscription()
    arb.set_subscription(up)
    assert up.requests == [5]


def test_arbiter_without_cancel_on_replace_keeps_old_alive() -> None:
    arb = SubscriptionArbiter(cancel_on_replace=False)
    first, second = RecordingSubscription("a"), RecordingSubscription("b")
    arb.set_subscription(first)
    arb.request(5)
    arb.produced(5)
    arb.set_subscription(second)
    assert first.cancels == 0
    assert second.requests == []  # nothing outstanding


def test_arbiter_unbounded_is_sticky() -> None:
    arb = SubscriptionArbiter()
    up = RecordingSubscription()
    arb.set_subscription(up)
    arb.request(MAX)
    assert arb.is_unbounded
    arb.produced(1000)
    second = RecordingSubscription()
    arb.set_subscription(second)
    assert second.requests == [MAX] and arb.is_unbounded


def test_arbiter_cancel_cancels_current_and_later_arrivals() -> None:
    arb = SubscriptionArbiter()
    up = RecordingSubscription()
    arb.set_subscription(up)
    arb.cancel()
    arb.cancel()
    assert arb.is_cancelled and up.cancels == 1
    late = RecordingSubscription()
    arb.set_subscription(late)
    arb.request(3)
    assert late.cancels == 1 and late.requests == [] and up.requests == []


def test_arbiter_produced_more_than_requested_reports_rule_1_1() -> None:
    arb = SubscriptionArbiter()
    arb.set_subscription(RecordingSubscription())
    arb.request(2)
    with plugins.collect_errors() as errors:
        arb.produced(5)
    assert len(errors) == 1 and isinstance(errors[0], ProtocolViolationError) and errors[0].rule == "1.1"
    second = RecordingSubscription()
    arb.set_subscription(second)
    assert second.requests == []  # floored at 0, not negative
