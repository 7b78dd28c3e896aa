"""Reactive Streams rule tests (``test_rule_*``) of the time operators, the time sources and the Scheduler contract (virtual time).

Their other tests (scenarios, properties, arguments) are in ``tests/time/test_time_schedulers_and_operators.py``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from rstreams import Flowable, schedulers
from rstreams.schedulers import Scheduler, Worker
from rstreams.testing import TestPublisher, TestScheduler, TestSubscriber
from spec._helpers import _src


@pytest.mark.parametrize(
    "op",
    [
        lambda f, s: f.delay(5, s),
        lambda f, s: f.debounce(5, s),
        lambda f, s: f.sample(5, s),
        lambda f, s: f.timeout(5, scheduler=s),
        lambda f, s: f.buffer_timed(5, scheduler=s),
        lambda f, s: f.throttle_latest(5, s),
    ],
)
def test_rule_3_13_cancel_leaves_no_reference_to_the_subscriber_in_the_scheduler(op: Any) -> None:
    import gc
    import weakref

    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub: TestSubscriber[Any] = TestSubscriber()
    op(Flowable.from_publisher(tp), ts).subscribe(sub)
    tp.next(1, 2)
    sub.cancel()
    sub.assert_no_violations()
    ref = weakref.ref(sub)
    del sub
    gc.collect()
    assert ref() is None
    assert ts._queue == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_rule_3_9_interval_bad_request_reaches_on_error_and_stops_the_ticks(bad: Any) -> None:
    ts = TestScheduler()
    sub: TestSubscriber[int] = TestSubscriber(0)
    Flowable.interval(1, scheduler=ts).subscribe(sub)
    sub.request(bad)
    sub.assert_error((ValueError, TypeError)).assert_no_violations()
    assert ts.pending == 0


def test_rule_1_3_interval_bad_request_during_a_tick_is_signalled_after_it() -> None:
    # a tick is being emitted on the worker's thread when another thread requests(0): the rule
    # 3.9 error must not overtake or overlap that element
    entered, release = threading.Event(), threading.Event()

    def block(x: int) -> None:
        entered.set()
        assert release.wait(10)

    sub: TestSubscriber[int] = TestSubscriber(1)
    Flowable.interval(0.001, scheduler=schedulers.new_thread()).do_on_next(block).subscribe(sub)
    assert entered.wait(10)
    sub.request(0)
    release.set()
    sub.await_done(10).assert_values(0).assert_error(ValueError, match="3.9").assert_no_violations()


@pytest.mark.parametrize(
    "op",
    [
        lambda f, s: f.timeout(60, scheduler=s),
        lambda f, s: f.timeout(60, Flowable.never(), s),
        lambda f, s: f.delay_subscription(0, s),
    ],
)
def test_rule_1_3_bad_request_while_an_element_is_emitted_on_another_thread(op: Any) -> None:
    # the source emits on a thread of its own; the downstream requests(0) from the test thread
    # while that element is inside the chain: the error must come after it, never overlap it
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    entered, release = threading.Event(), threading.Event()

    def block(x: int) -> None:
        entered.set()
        assert release.wait(10)

    sub: TestSubscriber[int] = TestSubscriber(1)
    op(Flowable.from_publisher(tp), ts).do_on_next(block).subscribe(sub)
    ts.trigger_actions()  # delay_subscription: subscribed now
    emitter = threading.Thread(target=lambda: tp.next(1), name="time-test-source")
    emitter.start()
    assert entered.wait(10)
    sub.request(0)
    release.set()
    emitter.join(10)
    sub.assert_values(1).assert_error(ValueError, match="3.9").assert_no_violations()
    assert tp.was_cancelled


def test_rule_3_13_interval_cancel_stops_ticks() -> None:
    ts = TestScheduler()
    sub: TestSubscriber[int] = TestSubscriber()
    Flowable.interval(1, scheduler=ts).subscribe(sub)
    ts.advance_by(2)
    sub.cancel()
    assert ts.pending == 0
    ts.advance_by(5)
    sub.assert_values(0, 1).assert_not_terminated().assert_no_violations()


def test_rule_3_9_timer_bad_request() -> None:
    ts = TestScheduler()
    sub: TestSubscriber[int] = TestSubscriber(0)
    Flowable.timer(2, ts).subscribe(sub)
    sub.request(0)
    sub.assert_error(ValueError, match="3.9").assert_no_violations()
    assert ts.pending == 0


@pytest.mark.parametrize(
    "make",
    [
        lambda ts: Flowable.interval(None, scheduler=ts),
        lambda ts: Flowable.timer(None, ts),
        lambda ts: Flowable.never().delay(None, ts),
        lambda ts: Flowable.never().debounce(None, ts),
        lambda ts: Flowable.never().sample(None, ts),
        lambda ts: Flowable.never().timeout(None, scheduler=ts),
        lambda ts: Flowable.never().buffer_timed(None, scheduler=ts),
        lambda ts: Flowable.never().take_for(None, ts),
    ],
)
def test_rule_2_13_none_durations_are_rejected_at_assembly(make: Callable[[TestScheduler], Any]) -> None:
    with pytest.raises(TypeError):
        make(TestScheduler())


class _Capture:
    """A Publisher that hands the test the operator's Subscriber (to call its on_* directly)."""

    def __init__(self) -> None:
        self.subscriber: Any = None
        self.requested = 0
        self.cancelled = False

    def subscribe(self, subscriber: Any) -> None:
        self.subscriber = subscriber
        outer = self

        class _S:
            def request(self, n: int) -> None:
                outer.requested += n

            def cancel(self) -> None:
                outer.cancelled = True

        subscriber.on_subscribe(_S())


class _CaptureFlowable(Flowable[Any]):
    """The capture as a library Flowable: the operator's own Subscriber is handed over as is
    (``from_publisher`` would put its rule 2.13 guard in front of it)."""

    __slots__ = ("_cap",)

    def __init__(self, cap: _Capture) -> None:
        self._cap = cap

    def _subscribe_actual(self, subscriber: Any) -> None:
        self._cap.subscribe(subscriber)


@pytest.mark.parametrize(
    ("op", "want"),
    [
        (lambda f, s: f.delay(1, s), [1]),
        (lambda f, s: f.delay(1, s, delay_error=True), [1]),
        (lambda f, s: f.delay_subscription(0, s), [1]),
        (lambda f, s: f.debounce(1, s), [1]),
        (lambda f, s: f.sample(1, s, emit_last=True), [1]),
        (lambda f, s: f.throttle_first(1, s), [1]),
        (lambda f, s: f.throttle_latest(1, s), [1]),
        (lambda f, s: f.buffer_timed(1, scheduler=s), [[1]]),
        (lambda f, s: f.window_timed(1, scheduler=s).concat_map(lambda w: w.to_list()), [[1]]),
        (lambda f, s: f.timeout(1, scheduler=s), [1]),
        (lambda f, s: f.take_for(5, s), [1]),
        (lambda f, s: f.skip_for(0, s), [1]),
        (lambda f, s: f.timestamp(s).map(lambda t: t.value), [1]),
        (lambda f, s: f.time_interval(s).map(lambda t: t.value), [1]),
    ],
)
def test_rule_2_13_time_operator_subscriber_refuses_none_and_keeps_working(op: Any, want: list[Any]) -> None:
    # rule 2.13: on_next/on_error/on_subscribe(None) raise TypeError to the caller, with no state
    # change (not timed, wrapped in Timed or a list, or raised later on a timer thread)
    ts = TestScheduler()
    cap = _Capture()
    sub: TestSubscriber[Any] = TestSubscriber()
    op(_CaptureFlowable(cap), ts).subscribe(sub)
    ts.trigger_actions()  # delay_subscription: subscribed now
    s = cap.subscriber
    with pytest.raises(TypeError):
        s.on_next(None)
    with pytest.raises(TypeError):
        s.on_error(None)
    with pytest.raises(TypeError):
        s.on_subscribe(None)
    s.on_next(1)
    ts.advance_by(0.5)
    s.on_complete()
    ts.advance_by(1)
    sub.assert_result(*want).assert_no_violations()


@pytest.mark.parametrize("delay_error", [False, True])
def test_rule_3_9_delay_bad_request_fails_at_once(delay_error: bool) -> None:
    ts, tp, sub = _src(lambda f, s: f.delay(1, s, delay_error=delay_error), request=1)
    tp.next(1)  # pending on the worker
    sub.request(0)
    sub.assert_no_values().assert_error(ValueError, match="3.9").assert_no_violations()
    assert tp.was_cancelled
    assert ts.pending == 0
    ts.advance_by(5)
    sub.assert_no_values()


def test_rule_3_13_delay_cancel_drops_pending_and_stops_upstream() -> None:
    ts, tp, sub = _src(lambda f, s: f.delay(1, s))
    tp.next(1, 2)
    sub.cancel()
    assert tp.was_cancelled and ts.pending == 0
    ts.advance_by(5)
    sub.assert_empty().assert_no_violations()


def test_rule_3_13_delay_subscription_cancel_before_the_delay_never_subscribes() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub: TestSubscriber[int] = TestSubscriber()
    Flowable.from_publisher(tp).delay_subscription(2, ts).subscribe(sub)
    sub.cancel()
    assert ts.pending == 0
    ts.advance_by(5)
    tp.assert_was_not_subscribed()
    sub.assert_empty().assert_no_violations()


def test_rule_3_9_debounce_bad_request() -> None:
    ts, tp, sub = _src(lambda f, s: f.debounce(1, s), request=0)
    tp.next(1)
    sub.request(-3)
    sub.assert_no_values().assert_error(ValueError, match="3.9").assert_no_violations()
    assert tp.was_cancelled and ts.pending == 0


def test_rule_3_13_debounce_cancel_disposes_the_timer() -> None:
    ts, tp, sub = _src(lambda f, s: f.debounce(1, s))
    tp.next(1)
    sub.cancel()
    assert tp.was_cancelled and ts.pending == 0
    ts.advance_by(2)
    sub.assert_empty().assert_no_violations()


@pytest.mark.parametrize(
    "op",
    [
        lambda f, s: f.sample(1, s),
        lambda f, s: f.throttle_first(1, s),
        lambda f, s: f.throttle_latest(1, s),
        lambda f, s: f.debounce(1, s),
        lambda f, s: f.buffer_timed(1, scheduler=s),
        lambda f, s: f.timeout(1, scheduler=s),
        lambda f, s: f.take_for(1, s),
        lambda f, s: f.skip_for(1, s),
        lambda f, s: f.delay(1, s),
        lambda f, s: f.delay_subscription(0, s),
    ],
)
def test_rule_3_9_time_operators_bad_request_reaches_on_error(op: Any) -> None:
    ts, tp, sub = _src(op, request=0)
    ts.trigger_actions()  # delay_subscription: subscribed by now; no other timer is due
    sub.request(0)
    ts.trigger_actions()
    sub.assert_error(ValueError, match="3.9").assert_no_violations()


@pytest.mark.parametrize(
    "op",
    [
        lambda f, s: f.sample(1, s),
        lambda f, s: f.throttle_first(1, s),
        lambda f, s: f.throttle_latest(1, s),
        lambda f, s: f.debounce(1, s),
        lambda f, s: f.buffer_timed(1, scheduler=s),
        lambda f, s: f.timeout(1, scheduler=s),
        lambda f, s: f.take_for(5, s),
        lambda f, s: f.skip_for(1, s),
        lambda f, s: f.delay(1, s),
    ],
)
def test_rule_3_13_time_operators_cancel_leaves_no_timer_and_no_signal(op: Any) -> None:
    ts, tp, sub = _src(op)
    tp.next(1)
    ts.advance_by(0.5)
    sub.cancel()
    assert tp.was_cancelled
    assert ts.pending == 0
    ts.advance_by(10)
    n = len(sub.values)
    sub.assert_not_terminated().assert_no_violations()
    assert n <= 1


def test_rule_2_13_timeout_selector_returning_none_fails_the_stream() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    sub: TestSubscriber[int] = TestSubscriber()
    Flowable.from_publisher(tp).timeout_selector(None, lambda x: None).subscribe(sub)  # type: ignore[arg-type,return-value]
    tp.next(1)
    sub.assert_values(1).assert_error(TypeError).assert_no_violations()
    assert tp.was_cancelled


class _SignallingScheduler(Scheduler):
    """new_thread() whose workers set ``ran`` after each task: lets a test wait for a task."""

    def __init__(self) -> None:
        self.ran = threading.Event()

    def create_worker(self) -> Worker:
        return _SignallingWorker(schedulers.new_thread().create_worker(), self.ran)


class _SignallingWorker(Worker):
    __slots__ = ("_inner", "_ran")

    def __init__(self, inner: Worker, ran: threading.Event) -> None:
        super().__init__()
        self._inner = inner
        self._ran = ran

    def schedule(self, task: Callable[[], Any], delay: float = 0.0) -> Any:
        def run() -> None:
            try:
                task()
            finally:
                self._ran.set()

        return self._inner.schedule(run, delay)

    def dispose(self) -> None:
        super().dispose()
        self._inner.dispose()


class _EmitThenWait:
    """A Publisher of one element whose request emits it, then waits for ``ran`` (a worker task
    has run) before returning and completing: a synchronous source seen from another thread."""

    def __init__(self, ran: threading.Event) -> None:
        self._ran = ran

    def subscribe(self, subscriber: Any) -> None:
        ran = self._ran

        class _Sub:
            done = False

            def request(self, n: int) -> None:
                if self.done:
                    return
                self.done = True
                subscriber.on_next(1)
                assert ran.wait(10)
                subscriber.on_complete()

            def cancel(self) -> None:
                self.done = True

        subscriber.on_subscribe(_Sub())


def test_rule_1_3_delay_element_due_while_on_subscribe_runs_waits_for_it() -> None:
    # the first request makes a synchronous source emit from inside on_subscribe; the delayed
    # element falls due on the worker's thread before on_subscribe has returned
    s = _SignallingScheduler()
    sub: TestSubscriber[int] = TestSubscriber()
    Flowable.from_publisher(_EmitThenWait(s.ran)).delay(0, s).subscribe(sub)
    sub.await_done(10).assert_result(1).assert_no_violations()

