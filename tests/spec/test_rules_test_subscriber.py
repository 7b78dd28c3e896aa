"""Reactive Streams rule tests (``test_rule_*``) of rstreams.testing.TestSubscriber and its rule-violation detector.

Their other tests (scenarios, properties, arguments) are in ``tests/testing/test_test_subscriber.py``."""

from __future__ import annotations

import threading

import pytest

from rstreams._spec import MAX_DEMAND
from rstreams.testing import TestSubscriber
from spec._helpers import RecordingSubscription, fails, rules_of, subscribed


@pytest.mark.parametrize("signal", ["on_next", "on_error", "on_complete"])
def test_rule_1_9_signal_before_on_subscribe_is_recorded(signal: str) -> None:
    ts: TestSubscriber[int] = TestSubscriber()
    if signal == "on_next":
        ts.on_next(1)
    elif signal == "on_error":
        ts.on_error(ValueError("early"))
    else:
        ts.on_complete()
    assert rules_of(ts) == ["1.9"]
    assert f"{signal}" in ts.violations[0] and "before on_subscribe" in ts.violations[0]
    fails(ts.assert_no_violations, "Rule 1.9 violated")


def test_rule_2_12_second_on_subscribe_is_recorded_and_cancelled() -> None:
    ts: TestSubscriber[int] = TestSubscriber()
    first, second = RecordingSubscription(), RecordingSubscription()
    ts.on_subscribe(first)
    ts.on_subscribe(second)
    assert second.cancels == 1 and second.requests == []  # rule 2.5
    assert first.cancels == 0
    assert ts.subscription is first
    assert rules_of(ts) == ["2.12"]
    assert "second Subscription was cancelled (rule 2.5)" in ts.violations[0]


def test_rule_2_12_on_subscribe_after_cancel_still_cancels_the_second() -> None:
    ts: TestSubscriber[int] = TestSubscriber()
    first, second = RecordingSubscription(), RecordingSubscription()
    ts.on_subscribe(first)
    ts.cancel()
    ts.on_subscribe(second)
    assert second.cancels == 1
    assert rules_of(ts) == ["2.12"]


def test_rule_1_1_on_next_beyond_demand_is_recorded() -> None:
    ts = subscribed(2)
    ts.on_next(1)
    ts.on_next(2)
    ts.assert_no_violations()
    ts.on_next(3)
    assert rules_of(ts) == ["1.1"]
    assert "on_next #3 (3) beyond the requested demand: only 2 requested in total" in ts.violations[0]
    ts.assert_values(1, 2, 3)  # still recorded as a value


def test_rule_1_1_demand_without_any_request_is_zero() -> None:
    ts = subscribed(0)
    ts.on_next("x")
    assert rules_of(ts) == ["1.1"]


def test_rule_1_1_later_requests_add_demand() -> None:
    ts = subscribed(1)
    ts.on_next(1)
    ts.request(2)
    ts.on_next(2)
    ts.on_next(3)
    ts.assert_no_violations()
    ts.on_next(4)
    assert rules_of(ts) == ["1.1"]


@pytest.mark.parametrize("requests", [[MAX_DEMAND], [2**70], [2**62, 2**62], [5, MAX_DEMAND]])
def test_rule_3_17_demand_capped_at_max_means_unbounded(requests: list[int]) -> None:
    ts = subscribed(0)
    for n in requests:
        ts.request(n)
    for i in range(1000):
        ts.on_next(i)
    ts.assert_value_count(1000).assert_no_violations()


def test_rule_2_8_signals_after_own_cancel_within_demand_are_not_violations() -> None:
    ts = subscribed(5)
    ts.on_next(1)
    ts.cancel()
    ts.on_next(2)
    ts.on_complete()
    ts.assert_values(1, 2).assert_complete().assert_no_violations()


def test_rule_1_1_on_next_after_own_cancel_beyond_demand_is_still_recorded() -> None:
    ts = subscribed(1)
    ts.cancel()
    ts.on_next(1)
    ts.on_next(2)
    assert rules_of(ts) == ["1.1"]


@pytest.mark.parametrize(
    ("first", "second", "fragment"),
    [
        ("on_complete", "on_next", "on_next(1) after on_complete"),
        ("on_error", "on_next", "on_next(1) after on_error"),
        ("on_complete", "on_complete", "on_complete after on_complete: a second terminal signal"),
        ("on_complete", "on_error", "after on_complete: a second terminal signal"),
        ("on_error", "on_error", "after on_error: a second terminal signal"),
        ("on_error", "on_complete", "on_complete after on_error"),
    ],
)
def test_rule_1_7_signal_after_terminal_is_recorded(first: str, second: str, fragment: str) -> None:
    ts = subscribed()

    def send(kind: str) -> None:
        if kind == "on_next":
            ts.on_next(1)
        elif kind == "on_error":
            ts.on_error(ValueError("e"))
        else:
            ts.on_complete()

    send(first)
    ts.assert_no_violations()
    send(second)
    assert rules_of(ts) == ["1.7"]
    assert fragment in ts.violations[0]


def test_rule_1_3_overlapping_signals_on_two_threads_are_recorded() -> None:
    # Thread A is inside on_error (blocked in the error's __str__); the main thread calls on_next.
    entered, release = threading.Event(), threading.Event()

    class SlowError(Exception):
        def __str__(self) -> str:
            entered.set()
            release.wait(2.0)
            return "slow"

    ts: TestSubscriber[int] = TestSubscriber(1)
    ts.on_subscribe(RecordingSubscription())
    a = threading.Thread(target=ts.on_error, args=(SlowError(),), name="thread-A")
    a.start()
    assert entered.wait(2.0)
    ts.on_next(1)  # overlaps on_error on thread-A
    release.set()
    a.join()
    assert rules_of(ts) == ["1.3"]
    v = ts.violations[0]
    assert f"on_next entered on thread {threading.current_thread().name!r}" in v
    assert "on_error on thread 'thread-A' was running" in v


def test_rule_1_3_same_thread_reentry_is_not_a_violation() -> None:
    # A synchronous publisher: request(n) emits on the calling thread, from inside on_subscribe.
    ts: TestSubscriber[int] = TestSubscriber(3)
    emitted = [0]

    def emit_synchronously(n: int) -> None:
        for _ in range(n):
            emitted[0] += 1
            ts.on_next(emitted[0])
        if emitted[0] >= 5:
            ts.on_complete()

    ts.on_subscribe(RecordingSubscription(emit_synchronously))
    ts.request(2)
    ts.assert_result(1, 2, 3, 4, 5).assert_no_violations()


@pytest.mark.parametrize("method", ["on_next", "on_error", "on_subscribe"])
def test_rule_2_13_none_argument_raises_type_error_and_is_recorded(method: str) -> None:
    ts = subscribed()
    with pytest.raises(TypeError, match=rf"2\.13: {method}\(None\)"):
        getattr(ts, method)(None)
    assert rules_of(ts) == ["2.13"]
    assert f"{method}(None) was called" in ts.violations[0]
    ts.assert_no_values().assert_no_errors().assert_not_terminated()


def test_rule_2_13_on_error_with_a_non_exception_is_recorded() -> None:
    ts = subscribed()
    ts.on_error("oops")  # type: ignore[arg-type]
    assert rules_of(ts) == ["2.13"]
    assert "on_error('oops'): the argument is a str, not an exception" in ts.violations[0]
    assert ts.is_terminated and ts.errors == []

