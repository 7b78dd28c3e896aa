"""TestSubscriber: recording, waiting, assertions, and the rule-violation detector."""

from __future__ import annotations

import re
import threading
import time

import pytest

from rstreams._spec import MAX_DEMAND, Subscriber
from rstreams.testing import TestSubscriber
from spec._helpers import RecordingSubscription, fails, rules_of, subscribed

# ---------------------------------------------------------------------------------------- helpers


def completed(*values: object, tag: str | None = None) -> TestSubscriber[object]:
    ts = subscribed(tag=tag)
    for v in values:
        ts.on_next(v)
    ts.on_complete()
    return ts


def failed(error: BaseException, *values: object) -> TestSubscriber[object]:
    ts = subscribed()
    for v in values:
        ts.on_next(v)
    ts.on_error(error)
    return ts


# ---------------------------------------------------------------------------------- subscription


def test_is_a_subscriber_and_asks_for_raw_signals() -> None:
    ts: TestSubscriber[int] = TestSubscriber()
    assert isinstance(ts, Subscriber)
    assert TestSubscriber._rs_no_wrap is True


def test_on_subscribe_requests_unbounded_by_default() -> None:
    ts: TestSubscriber[int] = TestSubscriber()
    s = RecordingSubscription()
    ts.on_subscribe(s)
    assert s.requests == [MAX_DEMAND]
    assert ts.subscription is s
    assert ts.subscribed
    ts.assert_subscribed().assert_empty().assert_no_violations()


def test_initial_request_zero_requests_nothing() -> None:
    s = RecordingSubscription()
    TestSubscriber[int](0).on_subscribe(s)
    assert s.requests == []


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_initial_request_must_be_a_non_negative_int(bad: object) -> None:
    with pytest.raises(ValueError, match="initial_request"):
        TestSubscriber(bad)  # type: ignore[arg-type]


def test_request_and_cancel_are_forwarded_and_chainable() -> None:
    ts: TestSubscriber[int] = TestSubscriber(1)
    s = RecordingSubscription()
    ts.on_subscribe(s)
    assert ts.request(3).request(4) is ts
    assert s.requests == [1, 3, 4]
    assert ts.cancel() is ts
    assert ts.is_cancelled
    ts.cancel()
    assert s.cancels == 1  # idempotent
    ts.request(5)
    assert s.requests == [1, 3, 4]  # request after cancel is a no-op


def test_request_before_on_subscribe_is_added_to_the_initial_request() -> None:
    ts: TestSubscriber[int] = TestSubscriber(2)
    ts.request(3)
    ts.request(5)
    s = RecordingSubscription()
    ts.on_subscribe(s)
    assert s.requests == [10]
    for i in range(10):
        ts.on_next(i)
    ts.assert_value_count(10).assert_no_violations()


def test_invalid_request_before_on_subscribe_is_forwarded_as_is() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    ts.request(0)
    s = RecordingSubscription()
    ts.on_subscribe(s)
    assert s.requests == [0]  # so the publisher can answer with on_error (rule 3.9)


def test_cancel_before_on_subscribe_cancels_the_subscription_on_arrival() -> None:
    ts: TestSubscriber[int] = TestSubscriber()
    ts.request(7)
    ts.cancel()
    s = RecordingSubscription()
    ts.on_subscribe(s)
    assert s.cancels == 1
    assert s.requests == []
    ts.assert_cancelled().assert_subscribed().assert_no_violations()


def test_request_from_many_threads_is_counted_exactly() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    s = RecordingSubscription()
    ts.on_subscribe(s)

    def requester() -> None:
        for _ in range(500):
            ts.request(1)

    threads = [threading.Thread(target=requester) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(s.requests) == 2000
    for i in range(2000):
        ts.on_next(i)
    ts.assert_value_count(2000).assert_no_violations()
    ts.on_next(2000)
    assert len(ts.violations) == 1  # exactly the demand that was requested


# ------------------------------------------------------------------------------------- records


def test_records_values_errors_completions_and_threads() -> None:
    ts = completed(1, 2)
    assert ts.values == [1, 2]
    assert ts.errors == []
    assert ts.completions == 1
    assert ts.is_terminated
    me = threading.current_thread().name
    assert ts.signals == [("on_subscribe", me), ("on_next", me), ("on_next", me), ("on_complete", me)]
    assert ts.value_threads == [me, me]
    assert ts.last_thread == me


def test_records_the_thread_of_each_signal() -> None:
    ts = subscribed()
    t = threading.Thread(target=lambda: ts.on_next("x"), name="producer-1")
    t.start()
    t.join()
    ts.on_complete()
    assert ts.value_threads == ["producer-1"]
    assert [k for k, _ in ts.signals] == ["on_subscribe", "on_next", "on_complete"]
    assert ts.signals[1] == ("on_next", "producer-1")
    assert ts.last_thread == threading.current_thread().name
    ts.assert_no_violations()  # sequential signals on different threads are fine (rule 1.3)


def test_values_and_clear_returns_and_forgets_values_but_keeps_demand() -> None:
    ts = subscribed(2)
    ts.on_next(1)
    ts.on_next(2)
    assert ts.values_and_clear() == [1, 2]
    ts.assert_no_values()
    ts.on_next(3)  # still beyond the 2 requested
    assert len(ts.violations) == 1 and "1.1" in ts.violations[0]


def test_repr_mentions_tag_and_counts() -> None:
    r = repr(completed(1, tag="left"))
    assert "'left'" in r and "values=1" in r and "completions=1" in r


# ------------------------------------------------------------------------------------- waiting


def test_await_count_waits_for_a_producer_thread() -> None:
    ts = subscribed()

    def produce() -> None:
        for i in range(3):
            time.sleep(0.01)
            ts.on_next(i)

    t = threading.Thread(target=produce)
    t.start()
    assert ts.await_count(3, timeout=2.0) is ts
    t.join()
    ts.assert_values(0, 1, 2)


def test_await_count_timeout_fails_with_the_count_seen() -> None:
    ts = subscribed(tag="slow")
    ts.on_next(1)
    start = time.monotonic()
    msg = fails(lambda: ts.await_count(2, timeout=0.05), "[slow]", "await_count(2) timed out", "1 value(s)")
    assert time.monotonic() - start < 1.0
    assert "values=[1]" in msg


def test_await_count_fails_at_once_when_the_stream_ends_short() -> None:
    ts = completed(1)
    start = time.monotonic()
    fails(lambda: ts.await_count(5, timeout=3.0), "terminated after 1 value(s)")
    assert time.monotonic() - start < 1.0


def test_await_done_waits_for_the_terminal_signal_from_a_producer_thread() -> None:
    ts = subscribed()

    def produce() -> None:
        time.sleep(0.02)
        ts.on_next("a")
        ts.on_complete()

    t = threading.Thread(target=produce)
    t.start()
    ts.await_done(timeout=2.0).assert_result("a")
    t.join()


def test_await_done_returns_when_cancelled() -> None:
    ts = subscribed()
    t = threading.Timer(0.02, ts.cancel)
    t.start()
    ts.await_done(timeout=2.0).assert_cancelled().assert_not_terminated()
    t.join()


def test_await_done_timeout_fails() -> None:
    ts = subscribed(tag="never")
    fails(lambda: ts.await_done(timeout=0.05), "[never]", "await_done() timed out after 0.05s")


# ---------------------------------------------------------------------------------- assertions


def test_assert_values_passes_and_fails_with_the_first_difference() -> None:
    ts = completed(1, 2, 3, tag="t1")
    assert ts.assert_values(1, 2, 3) is ts
    fails(lambda: ts.assert_values(1, 5, 3), "[t1]", "expected values [1, 5, 3] but got [1, 2, 3]", "index 1")
    fails(lambda: ts.assert_values(1, 2), "unexpected extra values from index 2: [3]")
    fails(lambda: ts.assert_values(1, 2, 3, 4), "missing from index 3: [4]")


def test_failure_messages_elide_long_value_lists() -> None:
    ts = completed(*range(100))
    msg = fails(lambda: ts.assert_values(), "(70 more)")
    assert "99" not in msg.split("\n")[0]


def test_assert_value_with_value_and_predicate() -> None:
    ts = completed(42)
    ts.assert_value(42).assert_value(lambda v: v == 42)
    fails(lambda: ts.assert_value(41), "expected 41 at index 0 but got 42")
    fails(lambda: ts.assert_value(lambda v: v < 0), "42, does not satisfy the predicate")
    fails(lambda: completed(1, 2).assert_value(1), "expected exactly one value but got 2: [1, 2]")
    fails(lambda: completed().assert_value(1), "expected exactly one value but got 0")


def test_assert_value_compares_classes_by_equality() -> None:
    ts = completed(int)
    ts.assert_value(int)  # a class is a value here, never called as a predicate
    fails(lambda: ts.assert_value(str), "expected <class 'str'>")


def test_assert_value_at() -> None:
    ts = completed("a", "b", "c")
    ts.assert_value_at(0, "a").assert_value_at(2, "c").assert_value_at(-1, lambda s: s == "c")
    fails(lambda: ts.assert_value_at(1, "x"), "expected 'x' at index 1 but got 'b'")
    fails(lambda: ts.assert_value_at(5, "a"), "no value at index 5: only 3 value(s)")


def test_assert_value_count_and_no_values() -> None:
    ts = completed(1, 2)
    ts.assert_value_count(2)
    fails(lambda: ts.assert_value_count(3), "expected 3 value(s) but got 2: [1, 2]")
    fails(ts.assert_no_values, "expected no values but got 2")
    completed().assert_no_values()


def test_assert_values_only() -> None:
    ts = subscribed()
    ts.on_next(1)
    ts.assert_values_only(1)
    ts.on_complete()
    fails(lambda: ts.assert_values_only(1), "expected no terminal signal but got on_complete")


def test_assert_complete_and_not_complete() -> None:
    completed().assert_complete()
    subscribed().assert_not_complete()
    fails(subscribed().assert_complete, "expected on_complete but it did not arrive")
    fails(completed().assert_not_complete, "expected no on_complete but it arrived 1 time(s)")
    ts = completed()
    ts.on_complete()
    fails(ts.assert_complete, "arrived 2 times (rule 1.7)")


def test_assert_error_by_type_tuple_instance_predicate_and_match() -> None:
    boom = ValueError("boom 42")
    ts = failed(boom)
    ts.assert_error(ValueError).assert_error((KeyError, ValueError)).assert_error(boom)
    ts.assert_error(lambda e: e.args == ("boom 42",)).assert_error(Exception, match=r"boom \d+")
    ts.assert_error()  # any error
    fails(
        lambda: ts.assert_error(KeyError), "expected an error of type KeyError but got ValueError('boom 42')"
    )
    fails(lambda: ts.assert_error(ValueError("boom 42")), "(same object)")
    fails(lambda: ts.assert_error(lambda e: False), "does not satisfy the predicate")
    fails(lambda: ts.assert_error(ValueError, match="^bang"), "'boom 42' does not match '^bang'")
    fails(
        lambda: subscribed().assert_error(ValueError),
        "exactly one error matching ValueError but got no error",
    )


def test_assert_no_errors_chains_the_error_as_cause() -> None:
    completed().assert_no_errors()
    err = RuntimeError("bad")
    with pytest.raises(AssertionError, match="expected no errors but got 1") as info:
        failed(err).assert_no_errors()
    assert info.value.__cause__ is err


def test_assert_subscribed_and_not_subscribed() -> None:
    TestSubscriber[int]().assert_not_subscribed()
    subscribed().assert_subscribed()
    fails(TestSubscriber[int](tag="s").assert_subscribed, "[s] expected on_subscribe but it was not called")
    fails(subscribed().assert_not_subscribed, "got 1 signal(s), first on_subscribe")
    ts: TestSubscriber[int] = TestSubscriber()
    ts.on_complete()  # no on_subscribe, but still a signal
    fails(ts.assert_not_subscribed, "first on_complete")


def test_assert_terminated_and_not_terminated() -> None:
    completed().assert_terminated()
    failed(KeyError("k")).assert_terminated()
    subscribed().assert_not_terminated()
    fails(
        subscribed().assert_terminated,
        "expected a terminal signal (on_error or on_complete) but none arrived",
    )
    fails(failed(KeyError("k")).assert_not_terminated, "expected no terminal signal but got on_error")
    ts = completed()
    ts.on_error(ValueError())
    fails(ts.assert_terminated, "expected one terminal signal but got 2 (rule 1.7)")


def test_assert_result() -> None:
    completed(1, 2).assert_result(1, 2)
    fails(lambda: completed(1, 2).assert_result(1), "expected values [1] but got [1, 2]")
    fails(lambda: failed(ValueError("x"), 1).assert_result(1), "expected no errors but got 1")
    fails(lambda: subscribed().assert_result(), "expected on_complete but it did not arrive")
    fails(lambda: TestSubscriber[int]().assert_result(), "expected on_subscribe")


def test_assert_failure() -> None:
    failed(ZeroDivisionError("div"), 1, 2).assert_failure(ZeroDivisionError, 1, 2, match="div")
    fails(lambda: failed(ZeroDivisionError(), 1).assert_failure(ZeroDivisionError, 2), "expected values [2]")
    fails(lambda: failed(KeyError(), 1).assert_failure(ValueError, 1), "expected an error of type ValueError")
    fails(lambda: completed(1).assert_failure(ValueError, 1), "got no error")


def test_assert_empty() -> None:
    subscribed().assert_empty()
    fails(TestSubscriber[int]().assert_empty, "expected on_subscribe")
    fails(completed(1).assert_empty, "expected no values but got 1")
    fails(completed().assert_empty, "expected no terminal signal but got on_complete")
    fails(failed(OSError()).assert_empty, "expected no errors")


def test_assert_cancelled_and_not_cancelled() -> None:
    ts = subscribed(tag="c")
    ts.assert_not_cancelled()
    fails(ts.assert_cancelled, "[c] expected the subscriber to be cancelled but cancel() was not called")
    ts.cancel().assert_cancelled()
    fails(ts.assert_not_cancelled, "expected the subscriber not to be cancelled")


def test_failure_message_shows_state_and_violations() -> None:
    ts: TestSubscriber[int] = TestSubscriber(tag="state")
    ts.on_next(7)  # rule 1.9
    msg = fails(
        ts.assert_complete,
        "[state] expected on_complete",
        "values=[7] (1)",
        "subscribed=False",
        "violations:",
    )
    assert "Rule 1.9 violated" in msg


def test_assert_no_violations_lists_every_violation() -> None:
    ts: TestSubscriber[int] = TestSubscriber(1, tag="bad")
    ts.on_next(0)  # 1.9
    ts.on_subscribe(RecordingSubscription())
    ts.on_next(1)
    ts.on_next(2)  # 1.1
    ts.on_complete()
    ts.on_complete()  # 1.7
    msg = fails(ts.assert_no_violations, "[bad] 3 Reactive Streams rule violation(s):")
    assert [m for m in re.findall(r"Rule (\d\.\d+) violated", msg)] == ["1.9", "1.1", "1.7"]


def test_assert_no_violations_elides_a_flood_of_violations() -> None:
    ts = subscribed(0)
    for i in range(200):
        ts.on_next(i)
    assert len(ts.violations) == 200
    msg = fails(ts.assert_no_violations, "200 Reactive Streams rule violation(s)", "... and 150 more")
    assert msg.count("Rule 1.1 violated") == 50


# ---------------------------------------------------------------------------------- violations


def test_compliant_sequence_records_no_violation() -> None:
    ts = subscribed(3)
    for i in range(3):
        ts.on_next(i)
    ts.on_complete()
    ts.assert_result(0, 1, 2).assert_no_violations()
    assert ts.violations == []


def test_signal_methods_return_normally_on_violations() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    ts.on_next(1)
    ts.on_complete()
    ts.on_error(ValueError())
    ts.on_subscribe(RecordingSubscription())
    ts.on_next(2)
    assert rules_of(ts) == ["1.9", "1.9", "1.9", "1.7"]
