"""The test tools and the edge subscribers.

Covers: TestSubscriber's rule-violation detector (every bad hand-made signal sequence is flagged
with its rule, no legal one is), its RxJava-style API edges, TestPublisher's compliant mode, the
Lambda/Strict subscribers (rules 2.5, 2.12, 2.13) and the subscription helpers (3.5-3.9, 3.17).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

import pytest

from rstreams._internal.atomics import AtomicInt, AtomicRef
from rstreams._internal.requests import BAD_REQUEST_POISON
from rstreams._internal.subscribers import LambdaSubscriber, StrictSubscriber
from rstreams._internal.subscriptions import (
    CANCELLED,
    DeferredSubscription,
    SubscriptionArbiter,
    cancel,
    deferred_request,
    deferred_set_once,
    set_once,
)
from rstreams._spec import MAX_DEMAND, Subscription
from rstreams.errors import OnErrorNotImplementedError, ProtocolViolationError
from rstreams.testing import TestPublisher, TestSubscriber

# ---------------------------------------------------------------------------------------- helpers


class Sub:
    """A Subscription recording calls; ``on_request``/``on_cancel`` run inside the call."""

    def __init__(
        self,
        on_request: Callable[[int], None] | None = None,
        on_cancel: Callable[[], None] | None = None,
    ) -> None:
        self.requests: list[int] = []
        self.cancels = 0
        self._on_request = on_request
        self._on_cancel = on_cancel
        self._lock = threading.Lock()

    def request(self, n: int) -> None:
        with self._lock:
            self.requests.append(n)
        if self._on_request is not None:
            self._on_request(n)

    def cancel(self) -> None:
        with self._lock:
            self.cancels += 1
        if self._on_cancel is not None:
            self._on_cancel()


def rules(ts: TestSubscriber[Any]) -> list[str]:
    out = []
    for v in ts.violations:
        m = re.match(r"Rule (\d+\.\d+) violated: ", v)
        assert m is not None, f"violation message does not start with its rule: {v!r}"
        out.append(m.group(1))
    return out


# A step of a hand-made signal sequence, applied to a TestSubscriber.
Step = tuple[str, Any]


def play(steps: list[Step], initial_request: int = MAX_DEMAND) -> tuple[TestSubscriber[Any], list[Sub]]:
    ts: TestSubscriber[Any] = TestSubscriber(initial_request)
    subs: list[Sub] = []
    for kind, arg in steps:
        if kind == "subscribe":
            s = Sub()
            subs.append(s)
            ts.on_subscribe(s)
        elif kind == "next":
            ts.on_next(arg)
        elif kind == "error":
            ts.on_error(arg)
        elif kind == "complete":
            ts.on_complete()
        elif kind == "request":
            ts.request(arg)
        elif kind == "cancel":
            ts.cancel()
        else:  # pragma: no cover - a typo in a table below
            raise AssertionError(kind)
    return ts, subs


S: Step = ("subscribe", None)
C: Step = ("complete", None)


def N(x: object) -> Step:
    return ("next", x)


def E(e: object) -> Step:
    return ("error", e)


def R(n: int) -> Step:
    return ("request", n)


X: Step = ("cancel", None)

# ------------------------------------------------------------- TestSubscriber: bad sequences flagged

BAD_SEQUENCES: list[tuple[str, list[Step], int, list[str], str]] = [
    # id, steps, initial request, expected rules, a fragment of the first message
    ("next-before-subscribe", [N(1), S], MAX_DEMAND, ["1.9"], "on_next(1) before on_subscribe"),
    ("error-before-subscribe", [E(ValueError("x")), S], MAX_DEMAND, ["1.9"], "before on_subscribe"),
    ("complete-before-subscribe", [C, S], MAX_DEMAND, ["1.9"], "on_complete before on_subscribe"),
    ("double-subscribe", [S, S], MAX_DEMAND, ["2.12"], "on_subscribe called a second time"),
    ("next-without-demand", [S, N(1)], 0, ["1.1"], "beyond the requested demand"),
    ("next-beyond-demand", [S, N(1), N(2), N(3)], 2, ["1.1"], "on_next #3 (3)"),
    ("next-beyond-demand-after-later-request", [S, R(1), N(1), N(2)], 0, ["1.1"], "only 1 requested"),
    ("next-beyond-demand-after-cancel", [S, X, N(1), N(2)], 1, ["1.1"], "on_next #2"),
    ("next-after-complete", [S, C, N(1)], MAX_DEMAND, ["1.7"], "on_next(1) after on_complete"),
    ("next-after-error", [S, E(ValueError()), N(1)], MAX_DEMAND, ["1.7"], "after on_error"),
    ("complete-twice", [S, C, C], MAX_DEMAND, ["1.7"], "a second terminal signal"),
    ("error-after-complete", [S, C, E(KeyError())], MAX_DEMAND, ["1.7"], "a second terminal signal"),
    ("complete-after-error", [S, E(KeyError()), C], MAX_DEMAND, ["1.7"], "a second terminal signal"),
    ("complete-after-cancel-after-complete", [S, C, X, C], MAX_DEMAND, ["1.7"], "second terminal"),
    ("error-with-a-string", [S, E("boom")], MAX_DEMAND, ["2.13"], "not an exception"),
    ("error-with-an-exception-class", [S, E(ValueError)], MAX_DEMAND, ["2.13"], "not an exception"),
]


@pytest.mark.parametrize(
    ("steps", "initial", "expected", "fragment"),
    [pytest.param(s, i, e, f, id=name) for name, s, i, e, f in BAD_SEQUENCES],
)
def test_every_bad_sequence_is_flagged_with_its_rule(
    steps: list[Step], initial: int, expected: list[str], fragment: str
) -> None:
    ts, _ = play(steps, initial)
    assert rules(ts) == expected, ts.violations
    assert fragment in ts.violations[0]
    with pytest.raises(AssertionError) as info:
        ts.assert_no_violations()
    msg = str(info.value)
    assert f"Rule {expected[0]} violated" in msg and fragment in msg


def test_double_subscribe_cancels_only_the_second_subscription() -> None:
    ts, (first, second) = play([S, S])
    assert (first.cancels, second.cancels) == (0, 1)  # rule 2.5
    assert second.requests == []
    assert ts.subscription is first


@pytest.mark.parametrize("method", ["on_subscribe", "on_next", "on_error"])
def test_none_arguments_raise_type_error_and_are_flagged(method: str) -> None:
    ts: TestSubscriber[Any] = TestSubscriber()
    if method != "on_subscribe":
        ts.on_subscribe(Sub())
    with pytest.raises(TypeError, match="2.13"):
        getattr(ts, method)(None)
    assert rules(ts) == ["2.13"]
    assert f"{method}(None)" in ts.violations[0]
    assert ts.values == [] and ts.errors == []


# ------------------------------------------------------------ TestSubscriber: legal sequences pass

GOOD_SEQUENCES: list[tuple[str, list[Step], int]] = [
    ("complete-without-demand", [S, C], 0),  # rule 2.9
    ("error-without-demand", [S, E(ValueError())], 0),  # rule 2.10
    ("empty-then-complete", [S, C], MAX_DEMAND),
    ("in-flight-after-cancel", [S, N(1), X, N(2), N(3), C], 3),  # rule 2.8
    ("error-after-cancel", [S, X, E(ValueError())], 0),  # rule 2.8/2.10
    ("request-after-cancel-is-no-op", [S, X, R(5), X], 0),  # rules 3.6/3.7
    ("request-after-complete", [S, C, R(1)], 0),
    ("invalid-request-adds-no-demand", [S, R(0), R(-3), E(ValueError("3.9"))], 0),
    ("capped-demand-is-unbounded", [S, R(MAX_DEMAND), R(MAX_DEMAND), N(1), N(2), C], 0),  # 3.17
    ("demand-above-max", [S, R(2**70)] + [N(i) for i in range(5)] + [C], 0),
    ("exact-demand", [S, N(1), R(2), N(2), N(3)], 1),
    ("request-before-subscribe", [R(2), S, N(1), N(2), C], 0),
]


@pytest.mark.parametrize(("steps", "initial"), [pytest.param(s, i, id=name) for name, s, i in GOOD_SEQUENCES])
def test_no_legal_sequence_is_flagged(steps: list[Step], initial: int) -> None:
    ts, _ = play(steps, initial)
    ts.assert_no_violations()


def test_cancel_is_forwarded_once_and_request_after_cancel_is_not_forwarded() -> None:
    ts, (s,) = play([S, X, X, R(5)], 0)
    assert s.cancels == 1 and s.requests == []


def test_signals_from_another_thread_during_the_initial_request_are_legal() -> None:
    # RxJava's relaxed rule 1.3 for library subscribers (seed 004): on_subscribe's request(n) may
    # make an asynchronous source emit and complete on another thread before request returns.
    # Before the fix the detector counted on_subscribe as still running and flagged rule 1.3.
    ts: TestSubscriber[int] = TestSubscriber()

    def emit_on_a_worker(n: int) -> None:
        def work() -> None:
            ts.on_next(1)
            ts.on_next(2)
            ts.on_complete()

        t = threading.Thread(target=work, name="worker")
        t.start()
        t.join(5.0)  # the worker signals while on_subscribe is still inside request

    ts.on_subscribe(Sub(emit_on_a_worker))
    ts.assert_result(1, 2).assert_no_violations()
    assert ts.value_threads == ["worker", "worker"]


def test_a_genuine_overlap_is_still_flagged() -> None:
    # Thread A is inside on_error (its argument's __str__ blocks); the main thread calls on_next.
    # Before the fix str(error) ran under the subscriber's lock: on_next blocked until A finished,
    # so the overlap was invisible (and a __str__ touching the subscriber would deadlock).
    entered, release = threading.Event(), threading.Event()

    class SlowError(Exception):
        def __str__(self) -> str:
            entered.set()
            release.wait(1.0)
            return "slow"

    ts: TestSubscriber[int] = TestSubscriber()
    ts.on_subscribe(Sub())
    a = threading.Thread(target=ts.on_error, args=(SlowError(),), name="thread-A")
    a.start()
    assert entered.wait(2.0)
    ts.on_next(1)
    release.set()
    a.join(2.0)
    assert rules(ts) == ["1.3"]
    assert "on_next entered on thread" in ts.violations[0]
    assert "on_error on thread 'thread-A' was running" in ts.violations[0]


def test_on_error_with_an_unprintable_error_is_recorded_and_returns_normally() -> None:
    # Before the fix the exception from __str__ escaped on_error (rule 2.13) and left the thread
    # marked as "inside a signal" forever, so every later signal from another thread was flagged.
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no str")

    ts: TestSubscriber[int] = TestSubscriber()
    ts.on_subscribe(Sub())
    err = Unprintable()
    ts.on_error(err)
    ts.assert_error(err).assert_no_violations()
    t = threading.Thread(target=ts.on_complete)
    t.start()
    t.join(2.0)
    assert rules(ts) == ["1.7"]  # the second terminal, and no phantom rule 1.3 overlap


def test_error_str_may_read_the_subscriber_without_deadlock() -> None:
    ts: TestSubscriber[int] = TestSubscriber()

    class Introspective(Exception):
        def __str__(self) -> str:
            return f"seen {len(ts.values)} values"  # takes the subscriber's lock

    ts.on_subscribe(Sub())
    t = threading.Thread(target=ts.on_error, args=("not an exception",))
    t.start()
    t.join(2.0)
    t = threading.Thread(target=ts.on_error, args=(Introspective(),), daemon=True)
    t.start()
    t.join(2.0)
    assert not t.is_alive(), "on_error deadlocked on its own lock"
    assert rules(ts) == ["2.13", "1.7"]


@pytest.mark.parametrize(("method", "rule"), [("request", "3.16"), ("cancel", "3.15")])
def test_a_raising_subscription_inside_on_subscribe_is_flagged_not_propagated(method: str, rule: str) -> None:
    def boom(*_: object) -> None:
        raise KeyError("broken publisher")

    ts: TestSubscriber[int] = TestSubscriber()
    if method == "cancel":
        ts.cancel()  # on_subscribe will cancel the arriving subscription
        s = Sub(on_cancel=boom)
    else:
        s = Sub(on_request=boom)
    ts.on_subscribe(s)  # rule 2.13: returns normally
    assert rules(ts) == [rule]
    assert f"Subscription.{method}(" in ts.violations[0] and "KeyError" in ts.violations[0]
    ts.assert_subscribed()


# ------------------------------------------------------------------- TestSubscriber: RxJava API edges


def test_await_done_timeout_cancels_the_upstream() -> None:
    # RxJava's awaitDone cancels the upstream on timeout; before the fix the stream kept running.
    ts: TestSubscriber[int] = TestSubscriber()
    s = Sub()
    ts.on_subscribe(s)
    with pytest.raises(AssertionError, match=r"await_done\(\) timed out after 0.02s"):
        ts.await_done(0.02)
    assert s.cancels == 1
    ts.assert_cancelled()


def test_await_count_and_await_done_wake_on_signals_from_another_thread() -> None:
    ts: TestSubscriber[int] = TestSubscriber()
    ts.on_subscribe(Sub())

    def produce() -> None:
        for i in range(3):
            ts.on_next(i)
        ts.on_complete()

    t = threading.Thread(target=produce)
    t.start()
    ts.await_count(3, timeout=5.0).await_done(5.0).assert_result(0, 1, 2).assert_no_violations()
    t.join()


def test_assert_error_rejects_a_matcher_that_is_not_one() -> None:
    ts: TestSubscriber[int] = TestSubscriber()
    ts.on_subscribe(Sub())
    ts.on_error(ValueError("x"))
    with pytest.raises(TypeError, match="assert_error\\(\\) expects an exception type"):
        ts.assert_error("ValueError")  # type: ignore[arg-type]
    ts.assert_error(ValueError).assert_error((KeyError, ValueError)).assert_error(lambda e: "x" in str(e))


def test_values_after_cancel_are_recorded() -> None:
    ts: TestSubscriber[int] = TestSubscriber(2)
    ts.on_subscribe(Sub())
    ts.on_next(1)
    ts.cancel()
    ts.on_next(2)
    ts.assert_values(1, 2).assert_not_terminated().assert_no_violations()


def test_assertion_shortcuts_match_rxjava() -> None:
    ok: TestSubscriber[int] = TestSubscriber()
    ok.on_subscribe(Sub())
    ok.on_next(1)
    ok.on_complete()
    ok.assert_result(1).assert_value(1).assert_value_count(1).assert_complete().assert_no_errors()
    with pytest.raises(AssertionError, match="expected no on_complete"):
        ok.assert_not_complete()
    with pytest.raises(AssertionError, match="expected no values"):
        ok.assert_empty()
    bad: TestSubscriber[int] = TestSubscriber()
    bad.on_subscribe(Sub())
    bad.on_next(1)
    err = KeyError("k")
    bad.on_error(err)
    bad.assert_failure(KeyError, 1).assert_failure(err, 1).assert_not_complete()
    with pytest.raises(AssertionError, match="expected no errors"):
        bad.assert_result(1)
    with pytest.raises(AssertionError, match="expected on_subscribe"):
        TestSubscriber[int]().assert_empty()


# ---------------------------------------------------------------------------------- TestPublisher


def test_test_publisher_compliant_mode_refuses_to_break_the_rules() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber(1)
    tp.subscribe(ts)
    tp.assert_was_subscribed().assert_subscribers(1).assert_min_requested(1).assert_max_requested(1)
    with pytest.raises(AssertionError, match=r"Rule 1\.1 violated: TestPublisher\.next\(\) of 2"):
        tp.next(1, 2)
    ts.assert_no_values()  # nothing was emitted
    with pytest.raises(TypeError, match="2.13"):
        tp.next(None)  # type: ignore[arg-type]
    tp.next(1).complete()
    with pytest.raises(AssertionError, match=r"Rule 1\.7 violated"):
        tp.next(2)
    with pytest.raises(AssertionError, match=r"Rule 1\.7 violated"):
        tp.error(ValueError())
    ts.assert_result(1).assert_no_violations()
    tp.assert_no_subscribers()
    late: TestSubscriber[int] = TestSubscriber()
    tp.subscribe(late)
    late.assert_result().assert_no_violations()


def test_test_publisher_bad_request_cancel_and_idempotence() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber(0)
    tp.subscribe(ts)
    tp.assert_not_cancelled()
    ts.request(0)  # rule 3.9
    ts.assert_error(ValueError, match="3.9").assert_no_violations()
    tp.assert_no_subscribers()
    ts2: TestSubscriber[int] = TestSubscriber(5)
    tp.subscribe(ts2)
    ts2.cancel()
    ts2.subscription.cancel()  # type: ignore[union-attr]  # rule 3.7: a no-op
    ts2.subscription.request(3)  # type: ignore[union-attr]  # rule 3.6: a no-op
    tp.assert_was_cancelled().assert_no_subscribers()
    tp.next(1)  # nobody is left to receive it
    ts2.assert_no_values()
    assert tp.request_calls == [0, 5, 3]


def test_test_publisher_respects_the_demand_of_every_subscriber() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    a: TestSubscriber[int] = TestSubscriber(3)
    b: TestSubscriber[int] = TestSubscriber(1)
    tp.subscribe(a)
    tp.subscribe(b)
    tp.next(1)
    with pytest.raises(AssertionError, match="has an outstanding demand of 0"):
        tp.next(2)
    b.request(1)
    tp.next(2).complete()
    a.assert_result(1, 2).assert_no_violations()
    b.assert_result(1, 2).assert_no_violations()


# ---------------------------------------------------------------------------- LambdaSubscriber


def test_lambda_subscriber_none_arguments_raise_type_error() -> None:
    seen: list[object] = []
    ls: LambdaSubscriber[int] = LambdaSubscriber(seen.append, seen.append, lambda: seen.append("done"))
    with pytest.raises(TypeError, match="2.13"):
        ls.on_subscribe(None)  # type: ignore[arg-type]
    ls.on_subscribe(Sub())
    # Before the fix None went to the on_next callback, and on_error(None) ended the stream.
    with pytest.raises(TypeError, match=r"2\.13: on_next\(None\)"):
        ls.on_next(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"2\.13: on_error\(None\)"):
        ls.on_error(None)  # type: ignore[arg-type]
    assert seen == []
    ls.on_next(1)
    ls.on_complete()
    assert seen == [1, "done"]


def test_lambda_subscriber_second_on_subscribe_is_cancelled_and_reported(
    undeliverable: list[BaseException],
) -> None:
    ls: LambdaSubscriber[int] = LambdaSubscriber(lambda x: None)
    first, second = Sub(), Sub()
    ls.on_subscribe(first)
    ls.on_subscribe(second)
    assert first.requests == [MAX_DEMAND] and first.cancels == 0
    assert second.requests == [] and second.cancels == 1  # rule 2.5
    assert len(undeliverable) == 1 and isinstance(undeliverable[0], ProtocolViolationError)
    assert "2.12" in str(undeliverable[0])


def test_lambda_subscriber_raising_on_next_cancels_and_routes_the_error() -> None:
    errors: list[BaseException] = []
    s = Sub()
    boom = ValueError("boom")

    def on_next(x: int) -> None:
        raise boom

    ls: LambdaSubscriber[int] = LambdaSubscriber(on_next, errors.append)
    ls.on_subscribe(s)
    ls.on_next(1)
    ls.on_next(2)  # dropped: the subscriber is done
    assert s.cancels == 1 and errors == [boom] and ls.is_disposed


def test_lambda_subscriber_without_on_error_reports_to_the_hook(undeliverable: list[BaseException]) -> None:
    ls: LambdaSubscriber[int] = LambdaSubscriber(lambda x: None)
    ls.on_subscribe(Sub())
    err = KeyError("lost?")
    ls.on_error(err)
    assert len(undeliverable) == 1
    assert isinstance(undeliverable[0], OnErrorNotImplementedError)
    assert undeliverable[0].cause is err


def test_lambda_subscriber_raising_on_error_reports_both_errors(undeliverable: list[BaseException]) -> None:
    # RxJava reports CompositeException(original, raised); before the fix the original was lost.
    original, raised = ValueError("original"), KeyError("from the callback")

    def on_error(e: BaseException) -> None:
        raise raised

    ls: LambdaSubscriber[int] = LambdaSubscriber(lambda x: None, on_error)
    ls.on_subscribe(Sub())
    ls.on_error(original)
    assert len(undeliverable) == 1
    group = undeliverable[0]
    assert isinstance(group, BaseExceptionGroup)
    assert list(group.exceptions) == [original, raised]


def test_lambda_subscriber_error_after_done_goes_to_the_hook(undeliverable: list[BaseException]) -> None:
    errors: list[BaseException] = []
    ls: LambdaSubscriber[int] = LambdaSubscriber(lambda x: None, errors.append)
    ls.on_subscribe(Sub())
    ls.on_complete()
    late = ValueError("late")
    ls.on_error(late)
    assert errors == [] and undeliverable == [late]


# ---------------------------------------------------------------------------- StrictSubscriber


def test_strict_subscriber_rejects_none_elements_before_the_foreign_subscriber() -> None:
    ts: TestSubscriber[int] = TestSubscriber()
    ss: StrictSubscriber[int] = StrictSubscriber(ts)
    ss.on_subscribe(Sub())
    # Before the fix the None reached the foreign subscriber (and its TypeError went to the hook).
    with pytest.raises(TypeError, match=r"2\.13: on_next\(None\)"):
        ss.on_next(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"2\.13: on_error\(None\)"):
        ss.on_error(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="2.13"):
        ss.on_subscribe(None)  # type: ignore[arg-type]
    ss.on_next(1)
    ss.on_complete()
    ts.assert_result(1).assert_no_violations()


def test_strict_subscriber_second_on_subscribe_cancels_and_fails() -> None:
    ts: TestSubscriber[int] = TestSubscriber()
    ss: StrictSubscriber[int] = StrictSubscriber(ts)
    first, second = Sub(), Sub()
    ss.on_subscribe(first)
    ss.on_subscribe(second)
    assert second.cancels == 1 and first.cancels == 1
    ts.assert_error(ProtocolViolationError, match="2.12").assert_no_violations()


def test_strict_subscriber_bad_request_ends_the_stream_with_rule_3_9() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    ss: StrictSubscriber[int] = StrictSubscriber(ts)
    up = Sub()
    ss.on_subscribe(up)
    ts.request(-1)
    ts.assert_error(ValueError, match="3.9").assert_no_violations()
    assert up.cancels == 1 and up.requests == []
    ts.request(2**70)  # after the end: a no-op (rule 3.6)
    assert up.requests == []


def test_strict_subscriber_caps_huge_requests() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    ss: StrictSubscriber[int] = StrictSubscriber(ts)
    up = Sub()
    ss.on_subscribe(up)
    ts.request(2**70)
    assert up.requests == [MAX_DEMAND]


def test_strict_subscriber_raising_on_next_cancels_and_reports(undeliverable: list[BaseException]) -> None:
    class Raising:
        def on_subscribe(self, s: Subscription) -> None:
            s.request(5)

        def on_next(self, x: int) -> None:
            raise KeyError("sub")

        def on_error(self, e: BaseException) -> None:  # pragma: no cover - must not be called
            raise AssertionError("on_error after a raising on_next")

        def on_complete(self) -> None:  # pragma: no cover - must not be called
            raise AssertionError("on_complete after a raising on_next")

    ss: StrictSubscriber[int] = StrictSubscriber(Raising())
    up = Sub()
    ss.on_subscribe(up)
    ss.on_next(1)
    ss.on_next(2)
    ss.on_complete()
    assert up.cancels == 1 and len(undeliverable) == 1 and isinstance(undeliverable[0], KeyError)


# ---------------------------------------------------------------------------- subscription helpers


def test_cancel_helper_is_idempotent_and_thread_safe() -> None:
    s = Sub()
    ref: AtomicRef[Subscription | None] = AtomicRef(s)
    results: list[bool] = []
    lock = threading.Lock()
    barrier = threading.Barrier(4)

    def race() -> None:
        barrier.wait()
        r = cancel(ref)
        with lock:
            results.append(r)

    threads = [threading.Thread(target=race) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False, False, False, True] and s.cancels == 1  # rules 3.5, 3.7
    assert ref.get() is CANCELLED
    CANCELLED.request(1)
    CANCELLED.cancel()  # rules 3.6/3.7: no-ops


def test_set_once_cancels_a_late_arrival_after_cancel_without_reporting(
    undeliverable: list[BaseException],
) -> None:
    ref: AtomicRef[Subscription | None] = AtomicRef(None)
    cancel(ref)
    s = Sub()
    assert set_once(ref, s) is False
    assert s.cancels == 1 and undeliverable == []
    ref2: AtomicRef[Subscription | None] = AtomicRef(None)
    assert set_once(ref2, Sub())
    s2 = Sub()
    assert set_once(ref2, s2, "here") is False
    assert s2.cancels == 1 and len(undeliverable) == 1 and "2.12" in str(undeliverable[0])


def test_deferred_request_accumulates_capped_and_poisons_bad_amounts() -> None:
    ref: AtomicRef[Subscription | None] = AtomicRef(None)
    missed = AtomicInt()
    deferred_request(ref, missed, MAX_DEMAND - 1)
    deferred_request(ref, missed, 5)
    assert missed.get() == MAX_DEMAND  # rule 3.17: capped, never above
    up = Sub()
    deferred_set_once(ref, missed, up)
    assert up.requests == [MAX_DEMAND]
    ref2: AtomicRef[Subscription | None] = AtomicRef(None)
    missed2 = AtomicInt()
    deferred_request(ref2, missed2, 3)
    deferred_request(ref2, missed2, 0)  # rule 3.9: bad, never silently dropped
    deferred_request(ref2, missed2, 4)
    assert missed2.get() == BAD_REQUEST_POISON
    up2 = Sub()
    deferred_set_once(ref2, missed2, up2)
    assert len(up2.requests) == 1 and up2.requests[0] <= 0  # the upstream signals the 3.9 error


def test_deferred_subscription_cancel_before_upstream() -> None:
    d = DeferredSubscription()
    d.request(2)
    d.cancel()
    d.cancel()
    up = Sub()
    assert d.set_upstream(up) is False
    assert up.cancels == 1 and up.requests == [] and d.is_cancelled


def test_arbiter_carries_capped_demand_over_and_cancels_once() -> None:
    arb = SubscriptionArbiter()
    arb.request(MAX_DEMAND)
    arb.request(MAX_DEMAND)
    a = Sub()
    arb.set_subscription(a)
    assert a.requests == [MAX_DEMAND] and arb.is_unbounded
    arb2 = SubscriptionArbiter()
    arb2.request(5)
    first = Sub()
    arb2.set_subscription(first)
    arb2.produced(3)
    second = Sub()
    arb2.set_subscription(second)
    assert first.requests == [5] and first.cancels == 1
    assert second.requests == [2]
    arb2.cancel()
    arb2.cancel()
    assert second.cancels == 1
    late = Sub()
    arb2.set_subscription(late)
    assert late.cancels == 1 and late.requests == []


def test_lambda_subscriber_on_subscribe_callback_controls_it_as_rxjava() -> None:
    # RxJava hands the LambdaSubscriber itself to the onSubscribe callback, so a cancel from there
    # disposes it. Before the fix the raw upstream was handed over: is_disposed stayed False and the
    # callbacks kept running after the cancel.
    seen: list[object] = []
    handed: list[Subscription] = []

    def on_subscribe(s: Subscription) -> None:
        handed.append(s)
        s.request(2)

    ls: LambdaSubscriber[int] = LambdaSubscriber(seen.append, seen.append, on_subscribe=on_subscribe)
    up = Sub()
    ls.on_subscribe(up)
    assert up.requests == [2]
    ls.on_next(1)
    handed[0].cancel()
    handed[0].cancel()  # rule 3.7
    handed[0].request(5)  # rule 3.6: a no-op
    assert up.cancels == 1 and up.requests == [2]
    assert ls.is_disposed
    ls.on_next(2)  # in flight after the cancel: no callback runs any more
    assert seen == [1]


@pytest.mark.parametrize("bad", ["REQUEST_OVERFLOW", 5, None])
def test_test_publisher_create_noncompliant_reports_misuse_clearly(bad: object) -> None:
    # Before the fix a string was taken apart character by character ("got 'R'") and an int
    # failed with "'int' object is not iterable".
    with pytest.raises(TypeError, match=re.escape(f"got {bad!r}; use for example Violation.")):
        TestPublisher.create_noncompliant(bad)  # type: ignore[arg-type]


# ------------------------------------------------- TestSubscriber: rule 1.3 detection under the GIL


def test_once_two_threads_signalled_each_signal_lets_an_unserialized_emitter_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Under the GIL an unserialized second emitter rarely runs while the first is inside a signal
    # method, so overlaps went unseen. Now, once on_next/on_error/on_complete came from two
    # threads, every 8th signal (here every one) yields (releases the GIL) while it still counts
    # as inside. Here the yield is replaced by "another thread emits right now", which is what the
    # yield allows.
    import rstreams.testing._test_subscriber as mod

    calls: list[str] = []
    ts: TestSubscriber[int] = TestSubscriber()

    def intruder() -> None:
        calls.append(threading.current_thread().name)
        if len(calls) == 2:  # during the second yield: an overlapping on_next from thread-B
            t = threading.Thread(target=ts.on_next, args=(99,), name="thread-B")
            t.start()
            t.join(2.0)

    monkeypatch.setattr(mod, "_yield", intruder)
    monkeypatch.setattr(mod, "_YIELD_EVERY", 1)
    ts.on_subscribe(Sub())
    ts.on_next(1)
    ts.on_next(2)  # one thread so far: no yield (a single emitter pays nothing)
    assert calls == []
    t = threading.Thread(target=ts.on_next, args=(3,), name="thread-A")
    t.start()
    t.join(2.0)  # a second thread (a legal, joined hand-off): yields from now on
    ts.assert_no_violations()
    ts.on_next(4)  # yields; thread-B enters meanwhile
    assert calls == ["thread-A", threading.current_thread().name, "thread-B"]
    assert rules(ts) == ["1.3"]
    assert "on_next entered on thread 'thread-B' while on_next on thread" in ts.violations[0]


def test_unserialized_emitters_are_usually_caught() -> None:
    # Smoke test of the real mechanism: two threads emit without any serialization. Stops as soon
    # as the overlap is flagged; the cap is far above what detection needs (a few thousand).
    ts: TestSubscriber[int] = TestSubscriber()
    ts.on_subscribe(Sub())
    stop = threading.Event()
    start = threading.Barrier(2)

    def emit() -> None:
        start.wait()
        for i in range(200_000):
            if stop.is_set():
                return
            ts.on_next(i)
            if i % 256 == 0 and ts.violations:
                stop.set()

    threads = [threading.Thread(target=emit) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10.0)
    assert "1.3" in rules(ts)


def test_element_and_subscription_reprs_run_outside_the_lock() -> None:
    # A repr that reads the subscriber (or raises) must neither deadlock nor break the recording.
    ts: TestSubscriber[object] = TestSubscriber(0)

    class Nosy:
        def __repr__(self) -> str:
            return f"<nosy, {len(ts.values)} values so far>"

    class Broken(Sub):
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    ts.on_subscribe(Sub())

    def run() -> None:
        ts.on_next(Nosy())  # rule 1.1: its message shows the repr
        ts.on_next(Broken())
        ts.on_subscribe(Broken())  # rule 2.12

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(2.0)
    assert not t.is_alive(), "a signal method deadlocked on its own lock"
    assert rules(ts) == ["1.1", "1.1", "2.12"]
    assert "<nosy, 1 values so far>" in ts.violations[0]
    assert "whose repr() raised" in ts.violations[1] and "whose repr() raised" in ts.violations[2]


def test_test_publisher_has_subscribers_like_the_processors() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    assert tp.has_subscribers is False
    ts: TestSubscriber[int] = TestSubscriber()
    tp.subscribe(ts)
    assert tp.has_subscribers is True
    ts.cancel()
    assert tp.has_subscribers is False


def test_lambda_subscriber_raising_on_next_without_on_error_reaches_the_hook(
    undeliverable: list[BaseException],
) -> None:
    from rstreams import Flowable

    boom = ZeroDivisionError("in on_next")
    seen: list[int] = []

    def on_next(x: int) -> None:
        seen.append(x)
        if x == 2:
            raise boom

    d = Flowable.range(1, 5).subscribe(on_next)
    assert seen == [1, 2]  # upstream cancelled after the raise
    assert d.is_disposed
    assert len(undeliverable) == 1 and isinstance(undeliverable[0], OnErrorNotImplementedError)
    assert undeliverable[0].cause is boom


def test_lambda_subscriber_raising_on_complete_reaches_the_hook(undeliverable: list[BaseException]) -> None:
    from rstreams import Flowable

    boom = KeyError("in on_complete")

    def on_complete() -> None:
        raise boom

    Flowable.just(1).subscribe(on_next=lambda x: None, on_complete=on_complete)
    assert undeliverable == [boom]


def test_the_detection_yield_comes_once_every_8_signals(monkeypatch: pytest.MonkeyPatch) -> None:
    import rstreams.testing._test_subscriber as mod

    calls: list[int] = []
    ts: TestSubscriber[int] = TestSubscriber()
    monkeypatch.setattr(mod, "_yield", lambda: calls.append(len(ts.values)))
    ts.on_subscribe(Sub())
    for i in range(20):
        ts.on_next(i)
    assert calls == []  # a single signalling thread never yields
    t = threading.Thread(target=ts.on_next, args=(20,))
    t.start()
    t.join(2.0)
    for i in range(21, 37):
        ts.on_next(i)
    assert calls == [28, 36]
    ts.assert_no_violations()


def test_subscribe_with_on_subscribe_callback_end_to_end() -> None:
    from rstreams import Flowable

    errors: list[BaseException] = []
    d = Flowable.range(1, 3).subscribe(
        on_next=lambda x: None, on_error=errors.append, on_subscribe=lambda s: s.request(0)
    )
    assert len(errors) == 1 and isinstance(errors[0], ValueError) and "3.9" in str(errors[0])
    assert d.is_disposed
    values: list[int] = []
    handles: list[Subscription] = []

    def on_subscribe(s: Subscription) -> None:
        handles.append(s)
        s.request(2)

    d = Flowable.range(1, 5).subscribe(on_next=values.append, on_subscribe=on_subscribe)
    assert values == [1, 2] and not d.is_disposed
    handles[0].request(1)
    assert values == [1, 2, 3]
    handles[0].cancel()
    assert d.is_disposed
    handles[0].request(5)  # rule 3.6
    assert values == [1, 2, 3]


def test_strict_subscriber_raising_on_error_reports_both_errors(undeliverable: list[BaseException]) -> None:
    # Before the fix only the raised error reached the hook: the stream's own error was lost.
    original, raised = ValueError("stream failed"), KeyError("on_error raised")

    class Raising:
        def on_subscribe(self, s: Subscription) -> None:
            s.request(1)

        def on_next(self, x: int) -> None:
            pass

        def on_error(self, e: BaseException) -> None:
            raise raised

        def on_complete(self) -> None:  # pragma: no cover - not called
            pass

    ss: StrictSubscriber[int] = StrictSubscriber(Raising())
    ss.on_subscribe(Sub())
    ss.on_error(original)
    assert len(undeliverable) == 1
    group = undeliverable[0]
    assert isinstance(group, BaseExceptionGroup) and list(group.exceptions) == [original, raised]
