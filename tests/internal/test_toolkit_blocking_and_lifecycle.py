"""The internal toolkit, the blocking bridges and the lifecycle operators.

Each test pins one RxJava 3 / Reactive Streams behaviour; the ones marked "regression" failed
before the fix that came with them.
"""

from __future__ import annotations

import copy
import math
import pickle
import threading
import traceback
import types
from collections.abc import Iterator
from typing import Any

import pytest

from rstreams import Flowable, plugins, schedulers
from rstreams._internal.atomics import AtomicInt
from rstreams._internal.drain import ErrorCollector, HalfSerializer
from rstreams._internal.queues import MpscQueue, SpscQueue
from rstreams._internal.requests import MAX_DEMAND, add_request, produced, validate_request
from rstreams.errors import (
    BadRequestError,
    NoneElementError,
    NoSuchElementError,
    OnErrorNotImplementedError,
    ProtocolViolationError,
    UndeliverableError,
)
from rstreams.flowable.operators import _blocking
from rstreams.retry import Retry, RetryExhaustedError
from rstreams.testing import TestPublisher, TestSubscriber, Violation

WAIT = 5.0


@pytest.fixture(autouse=True)
def _restore_handler() -> Iterator[None]:
    previous = plugins.get_error_handler()
    yield
    plugins.set_error_handler(previous)


# ---------------------------------------------------------------------------------------------
# Atomics and request accounting


def test_atomic_int_compound_operations_are_atomic_under_contention() -> None:
    a = AtomicInt()
    wins = AtomicInt()
    n_threads, per = 8, 2000
    barrier = threading.Barrier(n_threads)

    def work() -> None:
        barrier.wait(WAIT)
        for _ in range(per):
            a.get_and_add(1)
            v = a.get()
            if a.compare_and_set(v, v):  # identity CAS never changes the total
                wins.increment_and_get()

    threads = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert a.get() == n_threads * per


def test_add_request_is_capped_and_sticky_rule_3_17() -> None:
    r = AtomicInt()
    assert add_request(r, MAX_DEMAND - 1) == 0
    assert add_request(r, 5) == MAX_DEMAND - 1
    assert r.get() == MAX_DEMAND
    assert add_request(r, 2**70) == MAX_DEMAND
    assert r.get() == MAX_DEMAND
    assert produced(r, 10) == MAX_DEMAND  # unbounded is never decremented
    r2 = AtomicInt()
    add_request(r2, 2**70)
    assert r2.get() == MAX_DEMAND


def test_produced_more_than_requested_floors_at_zero_and_reports_rule_1_1() -> None:
    r = AtomicInt()
    add_request(r, 2)
    with plugins.collect_errors() as errors:
        assert produced(r, 3) == 0
    assert r.get() == 0
    assert len(errors) == 1 and isinstance(errors[0], ProtocolViolationError) and errors[0].rule == "1.1"


class _MyInt(int):
    pass


@pytest.mark.parametrize("n", [1, 5, MAX_DEMAND, 2**70, _MyInt(3)])
def test_validate_request_accepts_positive_ints(n: int) -> None:
    assert validate_request(n) is None


@pytest.mark.parametrize("n", [0, -1, -(2**70), True, False, 1.0, math.inf, math.nan, "1", None, _MyInt(0)])
def test_validate_request_refuses_with_rule_3_9(n: object) -> None:
    err = validate_request(n)
    assert isinstance(err, BadRequestError)
    assert "3.9" in str(err)


def test_spsc_queue_order_and_capacity() -> None:
    q: SpscQueue[int] = SpscQueue(capacity=3)
    assert q.offer(1)
    assert q.offer_many([2, 3, 4]) == 2
    assert not q.offer(5)
    assert q.poll() == 1
    assert q.poll_many(10) == [2, 3]
    assert q.poll() is None


def test_mpsc_queue_keeps_each_batch_contiguous() -> None:
    q: MpscQueue[tuple[int, int]] = MpscQueue()
    barrier = threading.Barrier(4)

    def producer(k: int) -> None:
        barrier.wait(WAIT)
        for b in range(50):
            q.offer_many((k, b * 10 + i) for i in range(10))

    threads = [threading.Thread(target=producer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    items = q.poll_many(10_000)
    assert len(items) == 4 * 50 * 10
    for i in range(0, len(items), 10):
        batch = items[i : i + 10]
        assert len({k for k, _ in batch}) == 1
        assert [v for _, v in batch] == list(range(batch[0][1], batch[0][1] + 10))


def test_error_collector_terminates_once_and_late_errors_go_to_the_hook() -> None:
    ts: TestSubscriber[int] = TestSubscriber()
    ts.on_subscribe(_NoopSubscription())
    errors = ErrorCollector()
    first = ValueError("first")
    errors.add(first)
    errors.terminate_into(ts)
    errors.terminate_into(ts)  # exactly once
    with plugins.collect_errors() as late:
        assert not errors.add_or_report(KeyError("late"))
    ts.assert_failure(ValueError)
    assert ts.errors[0] is first
    assert [type(e) for e in late] == [KeyError]
    ts.assert_no_violations()


def test_half_serializer_delivers_an_error_raised_during_on_next_after_it() -> None:
    ts: TestSubscriber[int] = TestSubscriber()
    ts.on_subscribe(_NoopSubscription())
    hs = HalfSerializer(ts)

    # the error arrives while on_next is in progress: it goes out after on_next returns
    original = ts.on_next

    def on_next(x: int) -> None:
        original(x)
        hs.on_error(ValueError("during"))

    ts.on_next = on_next  # type: ignore[method-assign, assignment]
    hs.on_next(1)
    hs.on_next(2)  # after the terminal: dropped
    with plugins.collect_errors() as late:
        hs.on_error(KeyError("late"))
    ts.assert_values(1).assert_error(ValueError)
    assert [type(e) for e in late] == [KeyError]
    ts.assert_no_violations()


def _raise(error: BaseException) -> None:
    raise error


class _NoopSubscription:
    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        pass


# ---------------------------------------------------------------------------------------------
# Plugins


def test_raising_handler_does_not_break_the_caller_and_the_error_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def bad(_: BaseException) -> None:
        raise RuntimeError("handler broke")

    plugins.set_error_handler(bad)
    with caplog.at_level("ERROR", logger="rstreams"):
        plugins.on_error(ValueError("lost?"))
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "lost?" in text and "handler broke" in text


def test_collect_errors_from_many_threads_loses_nothing() -> None:
    with plugins.collect_errors() as errors:

        def report(k: int) -> None:
            for _ in range(100):
                plugins.on_error(ValueError(k))

        threads = [threading.Thread(target=report, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT)
    assert len(errors) == 400


# ---------------------------------------------------------------------------------------------
# Blocking bridges


def test_blocking_first_last_empty_default_and_error() -> None:
    for src in (Flowable.empty(), Flowable.empty().hide()):
        with pytest.raises(NoSuchElementError):
            src.blocking_first()
        with pytest.raises(NoSuchElementError):
            src.blocking_last()
        assert src.blocking_first(default=7) == 7
        assert src.blocking_last(default=7) == 7
    err = KeyError("orig")
    with pytest.raises(KeyError) as info:
        Flowable.error(err).hide().blocking_first()
    assert info.value is err


def test_blocking_first_timeout_cancels_the_upstream() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    with pytest.raises(TimeoutError):
        Flowable.from_publisher(tp).blocking_first(timeout=0.05)
    tp.assert_was_cancelled()


@pytest.mark.parametrize("name", ["blocking_first", "blocking_last"])
@pytest.mark.parametrize("timeout", [math.inf, 1e300])
def test_blocking_huge_timeout_means_no_deadline(name: str, timeout: float) -> None:
    """Regression: Event.wait(inf) raised OverflowError (and cancelled the stream)."""
    src = Flowable.just(1).delay(0.01)
    assert getattr(src, name)(timeout=timeout) == 1


@pytest.mark.parametrize("name", ["blocking_first", "blocking_last"])
def test_blocking_nan_timeout_is_refused(name: str) -> None:
    """Regression: timeout=nan was accepted and timed out at once."""
    with pytest.raises(ValueError, match="timeout must be >= 0"):
        getattr(Flowable.just(1).delay(0.01), name)(timeout=math.nan)


def test_blocking_first_interrupted_wait_cancels_and_late_error_goes_to_the_hook(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Regression: after a KeyboardInterrupt in the wait, an upstream error arriving with the cancel
    was stored for a waiter that was gone (lost), not sent to the undeliverable-error hook."""

    class InterruptedEvent(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            raise KeyboardInterrupt

    fake = types.SimpleNamespace(Event=InterruptedEvent, Condition=threading.Condition, Lock=threading.Lock)
    monkeypatch.setattr(_blocking, "threading", fake)
    tp: TestPublisher[int] = TestPublisher.create_noncompliant(Violation.DEFER_CANCELLATION)
    with pytest.raises(KeyboardInterrupt):
        Flowable.from_publisher(tp).blocking_first()
    monkeypatch.undo()
    tp.assert_was_cancelled()
    late = ValueError("in flight")
    with plugins.collect_errors() as errors:
        tp.error(late)
    assert errors == [late]


def test_blocking_iterable_error_after_close_goes_to_the_hook() -> None:
    """Regression: an error in flight while the consumer closed the iterator was dropped."""
    tp: TestPublisher[int] = TestPublisher.create_noncompliant(Violation.DEFER_CANCELLATION)
    it = Flowable.from_publisher(tp).blocking_iterable(4)
    tp_started = threading.Event()

    def produce() -> None:
        tp_started.wait(WAIT)
        tp.next(1)

    t = threading.Thread(target=produce)
    t.start()
    tp_started.set()
    assert next(it) == 1
    t.join(WAIT)
    it.close()
    tp.assert_was_cancelled()
    late = ValueError("in flight")
    with plugins.collect_errors() as errors:
        tp.error(late)
    assert errors == [late]


def test_blocking_iterable_prefetch_and_replenish() -> None:
    requests: list[int] = []
    src = Flowable.range(0, 100).do_on_request(requests.append).hide()
    it = src.blocking_iterable(8)
    assert next(it) == 0
    assert requests == [8]
    for _ in range(5):
        next(it)
    assert requests == [8, 6]  # limit = 8 - 8 // 4
    it.close()


def test_blocking_iterable_context_manager_and_break_cancel() -> None:
    cancels: list[int] = []
    src = Flowable.range(0, 100).do_on_cancel(lambda: cancels.append(1)).hide()
    with src.blocking_iterable(4) as it:
        assert next(it) == 0
    assert cancels == [1]
    for _ in src.blocking_iterable(4):
        break
    assert cancels == [1, 1]


def test_blocking_iterable_close_from_another_thread_wakes_the_consumer() -> None:
    it = Flowable.never().blocking_iterable()
    timer = threading.Timer(0.05, it.close)
    timer.start()
    assert list(it) == []
    timer.join(WAIT)


def test_blocking_subscribe_callback_error_cancels_and_is_raised() -> None:
    tp: TestPublisher[int] = TestPublisher.create()

    def on_next(x: int) -> None:
        raise ValueError("cb")

    def produce() -> None:
        tp.next(1)

    threading.Timer(0.02, produce).start()
    with pytest.raises(ValueError, match="cb"):
        Flowable.from_publisher(tp).blocking_subscribe(on_next)
    tp.assert_was_cancelled()


# ---------------------------------------------------------------------------------------------
# Lifecycle operators


def test_do_on_cancel_not_called_after_completion() -> None:
    """Regression: a cancel after on_complete ran the callback (rule 2.4: already cancelled)."""
    calls: list[str] = []
    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.just(1).do_on_cancel(lambda: calls.append("cancel")).subscribe(ts)
    ts.assert_result(1)
    ts.cancel()
    assert calls == []
    ts.assert_no_violations()


def test_do_on_cancel_once_on_a_real_cancel() -> None:
    calls: list[str] = []
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.never().do_on_cancel(lambda: calls.append("cancel")).subscribe(ts)
    ts.cancel()
    ts.cancel()
    assert calls == ["cancel"]
    ts.assert_no_violations()


def test_do_finally_runs_once_after_the_downstream_terminal() -> None:
    order: list[str] = []

    class Recording(TestSubscriber[int]):
        def on_complete(self) -> None:
            order.append("complete")
            super().on_complete()

    ts = Recording()
    Flowable.just(1).do_finally(lambda: order.append("finally")).subscribe(ts)
    ts.cancel()
    assert order == ["complete", "finally"]
    ts.assert_result(1).assert_no_violations()


def test_raising_callbacks_are_routed_as_rxjava() -> None:
    # do_on_next: cancel upstream + on_error
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.from_publisher(tp).do_on_next(lambda x: 1 / 0).subscribe(ts)
    tp.next(1)
    tp.assert_was_cancelled()
    ts.assert_failure(ZeroDivisionError).assert_no_violations()
    # do_on_complete: on_error instead of on_complete
    ts = TestSubscriber()
    Flowable.just(1).do_on_complete(lambda: 1 / 0).subscribe(ts)
    ts.assert_failure(ZeroDivisionError, 1).assert_no_violations()
    # do_on_error: both errors
    ts = TestSubscriber()
    Flowable.error(KeyError("a")).do_on_error(lambda e: 1 / 0).subscribe(ts)
    ts.assert_error(ExceptionGroup).assert_no_violations()
    group = ts.errors[0]
    assert isinstance(group, ExceptionGroup)
    assert [type(e) for e in group.exceptions] == [KeyError, ZeroDivisionError]
    # do_on_cancel / do_on_request / do_finally: the hook, never lost
    with plugins.collect_errors() as errors:
        ts = TestSubscriber(0)
        (
            Flowable.range(0, 3)
            .do_finally(lambda: 1 / 0)
            .do_on_request(lambda n: _raise(IndexError(n)))
            .do_on_cancel(lambda: _raise(KeyError("k")))
            .subscribe(ts)
        )
        ts.request(1)
        ts.cancel()
    ts.assert_values(0).assert_no_violations()
    assert sorted(type(e).__name__ for e in errors) == ["IndexError", "KeyError", "ZeroDivisionError"]


def test_do_on_subscribe_raising_signals_subscribe_then_error() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.from_publisher(tp).do_on_subscribe(lambda s: 1 / 0).subscribe(ts)
    tp.assert_was_cancelled()
    ts.assert_subscribed().assert_failure(ZeroDivisionError).assert_no_violations()


def test_default_if_empty_waits_for_demand() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.empty().hide().default_if_empty(5).subscribe(ts)
    ts.assert_no_values().assert_not_complete()
    ts.request(1)
    ts.assert_result(5).assert_no_violations()
    with pytest.raises(NoneElementError, match="2.13"):
        Flowable.empty().default_if_empty(None)


def test_switch_if_empty_carries_demand_over() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.empty().hide().switch_if_empty(Flowable.range(0, 5)).subscribe(ts)
    ts.assert_no_values()
    ts.request(2)
    ts.assert_values(0, 1).assert_not_complete()
    ts.request(10)
    ts.assert_result(0, 1, 2, 3, 4).assert_no_violations()


@pytest.mark.parametrize("hide", [False, True])
def test_element_at_out_of_range_default_and_error(hide: bool) -> None:
    src: Flowable[int] = Flowable.range(0, 3)
    if hide:
        src = src.hide()
    ts: TestSubscriber[int] = TestSubscriber()
    src.element_at(5).subscribe(ts)
    ts.assert_result().assert_no_violations()
    ts = TestSubscriber()
    src.element_at(5, default=9).subscribe(ts)
    ts.assert_result(9).assert_no_violations()
    ts = TestSubscriber()
    src.element_at_or_error(5).subscribe(ts)
    ts.assert_failure(NoSuchElementError).assert_no_violations()
    ts = TestSubscriber(0)
    src.element_at(1).subscribe(ts)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_result(1).assert_no_violations()
    with pytest.raises(ValueError, match=">= 0"):
        src.element_at(-1)
    with pytest.raises(TypeError):
        src.element_at(True)


def test_lift_returning_a_non_subscriber_signals_a_clear_error() -> None:
    """Regression: the downstream was never subscribed (it hung) and the error went to the hook."""
    ts: TestSubscriber[int] = TestSubscriber()
    with plugins.collect_errors() as errors:
        Flowable.just(1).lift(lambda d: 5).subscribe(ts)  # type: ignore[arg-type, return-value]
    ts.assert_failure(TypeError).assert_no_violations()
    assert "not a Subscriber" in str(ts.errors[0])
    assert errors == []


def test_retry_backoff_refuses_nan_multiplier() -> None:
    """Regression: multiplier=nan was accepted (every delay silently became 0)."""
    with pytest.raises(ValueError, match="multiplier"):
        Retry.backoff(3, 0.1, multiplier=math.nan)


def test_bounded_offer_many_leaves_what_did_not_fit_in_the_iterator() -> None:
    """Regression: the whole iterator was consumed and the elements beyond the room were lost."""
    for q in (SpscQueue[int](capacity=2), MpscQueue[int](capacity=2)):
        source = iter(range(5))
        assert q.offer_many(source) == 2
        assert list(source) == [2, 3, 4]
        assert q.poll_many(5) == [0, 1]


@pytest.mark.parametrize(
    "error",
    [
        UndeliverableError(ValueError("v"), "after cancel"),
        OnErrorNotImplementedError(KeyError("k")),
        RetryExhaustedError(3, OSError("o")),
        ProtocolViolationError("1.9", "x"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_errors_survive_pickle_and_copy(error: BaseException) -> None:
    """Regression: UndeliverableError, OnErrorNotImplementedError and RetryExhaustedError could not be
    pickled or copied (process pools, Spark executors): their constructors were fed the message."""
    error.add_note("a note")
    for clone in (pickle.loads(pickle.dumps(error)), copy.copy(error), copy.deepcopy(error)):
        assert type(clone) is type(error)
        assert str(clone) == str(error)
        assert type(clone.__cause__) is type(error.__cause__)
        assert clone.__notes__ == ["a note"]


@pytest.mark.parametrize("bad", [None, "text"])
def test_plugins_on_error_never_raises_even_for_a_non_exception(bad: Any) -> None:
    """Regression: on_error("text") raised TypeError from setting __cause__ (the hook must never raise)."""
    with plugins.collect_errors() as errors:
        plugins.on_error(bad)
    assert len(errors) == 1 and isinstance(errors[0], TypeError)
    assert "rule 2.13" in str(errors[0])


def _fail_in_worker() -> int:
    raise LookupError("from the worker")


@pytest.mark.parametrize("bridge", ["blocking_first", "blocking_last", "blocking_iterable", "blocking_subscribe"])
def test_blocking_bridges_raise_the_original_error_with_its_traceback(bridge: str) -> None:
    src = Flowable.from_callable(_fail_in_worker).subscribe_on(schedulers.computation())
    with pytest.raises(LookupError) as info:
        if bridge == "blocking_iterable":
            list(src.blocking_iterable())
        else:
            getattr(src, bridge)()
    names = [frame.f_code.co_name for frame, _ in traceback.walk_tb(info.value.__traceback__)]
    assert "_fail_in_worker" in names  # the worker's frames are kept


def test_blocking_iterable_interrupted_wait_cancels_the_upstream(monkeypatch: pytest.MonkeyPatch) -> None:
    class InterruptedCondition(threading.Condition):
        def wait(self, timeout: float | None = None) -> bool:
            raise KeyboardInterrupt

    fake = types.SimpleNamespace(Event=threading.Event, Condition=InterruptedCondition, Lock=threading.Lock)
    monkeypatch.setattr(_blocking, "threading", fake)
    tp: TestPublisher[int] = TestPublisher.create()
    it = Flowable.from_publisher(tp).blocking_iterable(4)
    with pytest.raises(KeyboardInterrupt):
        next(it)
    monkeypatch.undo()
    tp.assert_was_cancelled()
    with pytest.raises(StopIteration):
        next(it)


def test_blocking_first_timeout_leaves_no_subscription_behind() -> None:
    cancels: list[int] = []
    with pytest.raises(TimeoutError):
        Flowable.timer(30.0).do_on_cancel(lambda: cancels.append(1)).blocking_first(timeout=0.05)
    assert cancels == [1]


def test_set_error_handler_refuses_a_non_callable() -> None:
    """Regression: set_error_handler(5) was accepted; every later error then hit a TypeError."""
    with pytest.raises(TypeError, match="callable"):
        plugins.set_error_handler(5)  # type: ignore[arg-type]
    assert not isinstance(plugins.get_error_handler(), int)


def test_do_finally_once_when_cancel_races_the_terminal() -> None:
    for _ in range(200):
        calls = AtomicInt()
        tp: TestPublisher[int] = TestPublisher.create()
        ts: TestSubscriber[int] = TestSubscriber()
        Flowable.from_publisher(tp).do_finally(calls.increment_and_get).subscribe(ts)
        barrier = threading.Barrier(2)

        def complete(tp: TestPublisher[int] = tp, barrier: threading.Barrier = barrier) -> None:
            barrier.wait(WAIT)
            tp.complete()

        t = threading.Thread(target=complete)
        t.start()
        barrier.wait(WAIT)
        ts.cancel()
        t.join(WAIT)
        assert calls.get() == 1
        ts.assert_no_violations()
