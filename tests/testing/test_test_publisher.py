"""TestPublisher: compliant driving, recording of requests/cancel, and the noncompliant modes."""

from __future__ import annotations

import re

import pytest

from rstreams import plugins
from rstreams._spec import MAX_DEMAND, Publisher, Subscription
from rstreams.testing import TestPublisher, TestSubscriber, Violation
from spec._helpers import attach


def rules_of(ts: TestSubscriber[int]) -> list[str]:
    return [re.match(r"Rule (\d\.\d+) violated", v).group(1) for v in ts.violations]  # type: ignore[union-attr]


# --------------------------------------------------------------------------------- subscribing


def test_is_a_publisher() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    assert isinstance(tp, Publisher)
    assert tp.violations == frozenset()


def test_subscribe_calls_on_subscribe_and_records_requests() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    tp.assert_was_not_subscribed().assert_was_not_requested().assert_no_subscribers()
    ts = attach(tp, 5)
    ts.assert_subscribed()
    assert isinstance(ts.subscription, Subscription)
    tp.assert_was_subscribed().assert_was_requested().assert_subscribers().assert_subscribers(1)
    tp.assert_min_requested(5).assert_max_requested(5)
    assert tp.request_calls == [5]
    assert tp.requested == 5
    assert tp.subscriber_count == 1


def test_compliant_next_within_demand_then_complete() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts = attach(tp, 3)
    assert tp.next(1, 2) is tp
    assert tp.requested == 1
    tp.next(3).complete()
    ts.assert_result(1, 2, 3).assert_no_violations()
    tp.assert_no_subscribers()
    assert tp.is_terminated


def test_compliant_next_with_unbounded_demand_never_runs_out() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts = attach(tp)
    tp.next(*range(1000))
    assert tp.requested == MAX_DEMAND
    ts.assert_value_count(1000).assert_no_violations()


def test_emit_is_next_then_complete() -> None:
    tp: TestPublisher[str] = TestPublisher.create()
    ts: TestSubscriber[str] = TestSubscriber()
    tp.subscribe(ts)
    tp.emit("a", "b")
    ts.assert_result("a", "b").assert_no_violations()


def test_error_is_signalled_and_validated() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts = attach(tp)
    with pytest.raises(TypeError):
        tp.error(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="needs an exception"):
        tp.error("boom")  # type: ignore[arg-type]
    boom = OSError("boom")
    tp.next(1).error(boom)
    ts.assert_failure(boom, 1).assert_no_violations()
    tp.assert_no_subscribers()


def test_late_subscriber_receives_the_terminal_signal_at_once() -> None:
    done: TestPublisher[int] = TestPublisher.create()
    done.complete()
    attach(done).assert_result().assert_no_violations()
    failed: TestPublisher[int] = TestPublisher.create()
    err = KeyError("k")
    failed.error(err)
    attach(failed).assert_failure(err).assert_no_violations()
    failed.assert_no_subscribers()


def test_multicasts_to_every_subscriber_and_checks_each_demand() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    a, b = attach(tp, 2, "a"), attach(tp, 5, "b")
    tp.assert_subscribers(2).assert_min_requested(2).assert_max_requested(5)
    assert tp.requested == 7
    tp.next(1, 2)
    with pytest.raises(AssertionError, match=r"subscriber #0 .* outstanding demand of 0"):
        tp.next(3)
    a.request(1)
    tp.next(3).complete()
    a.assert_result(1, 2, 3).assert_no_violations()
    b.assert_result(1, 2, 3).assert_no_violations()


def test_requested_sum_is_capped() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    attach(tp)
    attach(tp)
    assert tp.requested == MAX_DEMAND


# ------------------------------------------------------------------------ requests and cancel


def test_cancel_drops_the_subscriber_and_is_recorded() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    a, b = attach(tp), attach(tp)
    tp.assert_not_cancelled()
    a.cancel()
    assert tp.was_cancelled
    tp.assert_was_cancelled().assert_subscribers(1)
    tp.next(1)
    a.assert_no_values()
    b.assert_values(1)


def test_cancel_inside_on_subscribe_is_never_added() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber()
    ts.cancel()
    tp.subscribe(ts)
    tp.assert_was_cancelled().assert_no_subscribers()
    assert tp.request_calls == []


def test_cancel_from_on_next_stops_the_rest_of_a_batch() -> None:
    tp: TestPublisher[int] = TestPublisher.create()

    class CancelAfterTwo(TestSubscriber[int]):
        def on_next(self, item: int) -> None:
            super().on_next(item)
            if len(self.values) == 2:
                self.cancel()

    ts = CancelAfterTwo()
    tp.subscribe(ts)
    tp.next(1, 2, 3, 4)
    ts.assert_values(1, 2).assert_no_violations()
    tp.assert_was_cancelled().assert_no_subscribers()


# ------------------------------------------------------------------------- assertion failures


def test_assertion_failures_have_useful_messages() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    with pytest.raises(AssertionError, match="subscribe\\(\\) was never called"):
        tp.assert_was_subscribed()
    with pytest.raises(AssertionError, match="expected a request\\(n\\) from a subscriber, but none arrived"):
        tp.assert_was_requested()
    with pytest.raises(AssertionError, match="expected at least one subscriber, but there are none"):
        tp.assert_subscribers()
    with pytest.raises(AssertionError, match="at least 1, but there are no subscribers"):
        tp.assert_min_requested(1)
    with pytest.raises(AssertionError, match="expected a subscriber to cancel, but none did"):
        tp.assert_was_cancelled()
    ts = attach(tp, 3)
    with pytest.raises(AssertionError, match="expected no subscribe\\(\\) call but got 1"):
        tp.assert_was_not_subscribed()
    with pytest.raises(AssertionError, match="expected no request\\(n\\) but got request calls \\[3\\]"):
        tp.assert_was_not_requested()
    with pytest.raises(AssertionError, match="expected 2 subscriber\\(s\\), but there are 1"):
        tp.assert_subscribers(2)
    with pytest.raises(AssertionError, match="expected 0 subscriber\\(s\\), but there are 1"):
        tp.assert_no_subscribers()
    with pytest.raises(AssertionError, match="at least 4, but the demands are \\[3\\]"):
        tp.assert_min_requested(4)
    with pytest.raises(AssertionError, match="at most 2, but the demands are \\[3\\]"):
        tp.assert_max_requested(2)
    ts.cancel()
    with pytest.raises(AssertionError, match="expected no cancellation, but a subscriber cancelled"):
        tp.assert_not_cancelled()


# ------------------------------------------------------------------------------- noncompliant


def test_create_noncompliant_accepts_members_and_sets() -> None:
    tp: TestPublisher[int] = TestPublisher.create_noncompliant(
        Violation.ALLOW_NONE, {Violation.REQUEST_OVERFLOW, Violation.DEFER_CANCELLATION}
    )
    assert tp.violations == {Violation.ALLOW_NONE, Violation.REQUEST_OVERFLOW, Violation.DEFER_CANCELLATION}
    assert "noncompliant" in repr(tp) and "compliant" in repr(TestPublisher.create())
    with pytest.raises(TypeError, match="Violation"):
        TestPublisher.create_noncompliant("REQUEST_OVERFLOW")  # type: ignore[arg-type]


def test_request_overflow_emits_beyond_demand_and_the_subscriber_sees_rule_1_1() -> None:
    tp: TestPublisher[int] = TestPublisher.create_noncompliant(Violation.REQUEST_OVERFLOW)
    ts = attach(tp, 1)
    tp.next(1, 2, 3)
    ts.assert_values(1, 2, 3)
    assert rules_of(ts) == ["1.1", "1.1"]
    assert tp.requested == 0


def test_allow_none_emits_none_and_the_subscriber_sees_rule_2_13() -> None:
    tp: TestPublisher[int] = TestPublisher.create_noncompliant(Violation.ALLOW_NONE)
    ts = attach(tp)
    with plugins.collect_errors() as errors:
        tp.next(None)  # type: ignore[arg-type]
    assert rules_of(ts) == ["2.13"]
    assert len(errors) == 1 and isinstance(errors[0], TypeError)  # raised by on_next(None), reported
    tp.assert_no_subscribers()  # rule 2.13: a subscriber that raised is considered cancelled


def test_cleanup_on_terminate_keeps_signalling_and_the_subscriber_sees_rule_1_7() -> None:
    tp: TestPublisher[int] = TestPublisher.create_noncompliant(Violation.CLEANUP_ON_TERMINATE)
    ts = attach(tp)
    tp.complete()
    tp.assert_subscribers(1)
    tp.next(1).complete().error(ValueError("late"))
    ts.assert_values(1)
    assert ts.completions == 2 and len(ts.errors) == 1
    assert rules_of(ts) == ["1.7", "1.7", "1.7"]


def test_defer_cancellation_ignores_cancel_and_the_subscriber_keeps_receiving() -> None:
    tp: TestPublisher[int] = TestPublisher.create_noncompliant(Violation.DEFER_CANCELLATION)
    ts = attach(tp, 3)
    ts.cancel()
    tp.assert_was_cancelled().assert_subscribers(1)
    tp.next(1, 2).complete()
    ts.assert_result(1, 2).assert_no_violations()  # within demand: rule 2.8 allows it
    tp.assert_no_subscribers()


def test_defer_cancellation_still_checks_demand_unless_overflow_is_allowed() -> None:
    tp: TestPublisher[int] = TestPublisher.create_noncompliant(Violation.DEFER_CANCELLATION)
    ts = attach(tp, 1)
    ts.cancel()
    with pytest.raises(AssertionError, match=r"Rule 1\.1"):
        tp.next(1, 2)
    both: TestPublisher[int] = TestPublisher.create_noncompliant(
        Violation.DEFER_CANCELLATION, Violation.REQUEST_OVERFLOW
    )
    ts2 = attach(both, 1)
    ts2.cancel()
    both.next(1, 2)
    ts2.assert_values(1, 2)
    assert rules_of(ts2) == ["1.1"]
