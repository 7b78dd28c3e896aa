"""reactivex (RxPY 4+) Observables in and out: Flowable.from_observable(observable, strategy) and
Flowable.to_observable(prefetch)."""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest

rx = pytest.importorskip(
    "reactivex", reason="reactivex (RxPY) is optional: pip install reactivex (or rstreams[bench]) to run these"
)

from reactivex import operators as ops  # noqa: E402
from reactivex.subject import Subject  # noqa: E402
from reactivex.testing import TestScheduler as RxTestScheduler  # noqa: E402

from operators.harness import Boom  # noqa: E402
from rstreams import BackpressureOverflow, BackpressureStrategy, Flowable  # noqa: E402
from rstreams.errors import MissingBackpressureError  # noqa: E402
from rstreams.testing import TestScheduler, TestSubscriber  # noqa: E402

BUFFER = BackpressureStrategy.BUFFER
DROP = BackpressureStrategy.DROP
LATEST = BackpressureStrategy.LATEST
ERROR = BackpressureStrategy.ERROR
MISSING = BackpressureStrategy.MISSING

# ---------------------------------------------------------------------------------------------
# from_observable: each strategy


def test_buffer_keeps_everything_until_requested_one_by_one() -> None:
    ts: TestSubscriber[int] = Flowable.from_observable(rx.of(1, 2, 3, 4), BUFFER).test(0)
    ts.assert_no_values().assert_not_complete()
    for i in range(1, 5):
        ts.request(1)
        ts.assert_values(*range(1, i + 1))
    ts.assert_result(1, 2, 3, 4).assert_no_violations()


def test_bounded_buffer_overflow_error_drop_oldest_drop_latest() -> None:
    src = rx.of(1, 2, 3, 4, 5)
    ts = Flowable.from_observable(src, BUFFER, capacity=2).test(0)
    ts.assert_failure(MissingBackpressureError).assert_no_violations()
    ts = Flowable.from_observable(src, BUFFER, 2, BackpressureOverflow.DROP_OLDEST).test(0)
    ts.request(10)
    ts.assert_result(4, 5).assert_no_violations()
    # DROP_LATEST drops the newest buffered element to make room (RxJava's meaning): 2, 3, 4 go
    ts = Flowable.from_observable(src, BUFFER, 2, BackpressureOverflow.DROP_LATEST).test(0)
    ts.request(10)
    ts.assert_result(1, 5).assert_no_violations()
    Flowable.from_observable(src, BUFFER, capacity=5).test(0).request(5).assert_result(1, 2, 3, 4, 5).assert_no_violations()


def test_drop_drops_what_arrives_without_demand() -> None:
    subject: Subject[int] = Subject()
    ts: TestSubscriber[int] = Flowable.from_observable(subject, DROP).test(1)
    subject.on_next(1)
    subject.on_next(2)  # no demand: dropped
    ts.request(1)
    subject.on_next(3)
    subject.on_next(4)  # dropped
    subject.on_completed()
    ts.assert_result(1, 3).assert_no_violations()


def test_latest_keeps_the_newest_undemanded_element() -> None:
    ts: TestSubscriber[int] = Flowable.from_observable(rx.of(1, 2, 3), LATEST).test(0)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_result(3).assert_no_violations()
    subject: Subject[int] = Subject()
    ts2: TestSubscriber[int] = Flowable.from_observable(subject, LATEST).test(1)
    for i in range(1, 6):
        subject.on_next(i)
    ts2.assert_values(1)
    ts2.request(1)
    ts2.assert_values(1, 5)
    subject.on_completed()
    ts2.assert_result(1, 5).assert_no_violations()


def test_error_strategy_signals_missing_backpressure() -> None:
    ts: TestSubscriber[int] = Flowable.from_observable(rx.of(1, 2, 3), ERROR).test(1)
    ts.assert_failure(MissingBackpressureError, 1).assert_no_violations()
    Flowable.from_observable(rx.of(1, 2, 3), ERROR).test().assert_result(1, 2, 3).assert_no_violations()


def test_missing_pushes_regardless_for_a_downstream_operator_to_cope() -> None:
    f = Flowable.from_observable(rx.of(1, 2, 3), MISSING)
    f.test().assert_result(1, 2, 3).assert_no_violations()
    f.on_backpressure_buffer().test(0).request(3).assert_result(1, 2, 3).assert_no_violations()


def test_strategies_over_virtual_time_with_a_reactivex_scheduler() -> None:
    sched = RxTestScheduler()
    ticks = rx.interval(1.0, scheduler=sched).pipe(ops.take(6))
    ts: TestSubscriber[int] = Flowable.from_observable(ticks, LATEST).test(1)
    sched.advance_by(3.0)
    ts.assert_values(0)  # 1 and 2 arrived without demand: only 2 kept
    ts.request(1)
    ts.assert_values(0, 2)
    sched.advance_by(3.0)
    ts.request(1)
    ts.assert_result(0, 2, 5).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# from_observable: terminal signals, cancellation, resubscription


def test_errors_pass_through_after_the_values_before_them() -> None:
    Flowable.from_observable(rx.throw(Boom("rx")), BUFFER).test().assert_failure(Boom).assert_no_violations()
    subject: Subject[int] = Subject()
    ts: TestSubscriber[int] = Flowable.from_observable(subject, BUFFER).test(0)
    subject.on_next(1)
    subject.on_error(Boom("later"))
    ts.assert_no_values()
    ts.request(1)
    ts.assert_failure(Boom, 1).assert_no_violations()  # BUFFER: the error waits behind the element


def test_cancel_stops_a_synchronous_observable_emitting_inside_subscribe() -> None:
    produced: list[int] = []
    huge = rx.range(0, 10**9).pipe(ops.do_action(produced.append))
    Flowable.from_observable(huge, DROP).take(3).test().assert_result(0, 1, 2).assert_no_violations()
    assert len(produced) <= 4  # stopped at once, not after 10**9 elements
    Flowable.from_observable(huge, BUFFER).take(2).test().assert_result(0, 1).assert_no_violations()


def test_completion_disposes_and_each_subscriber_subscribes_anew() -> None:
    subscriptions: list[int] = []

    def factory(_: Any) -> Any:
        subscriptions.append(1)
        return rx.of(1, 2)

    f = Flowable.from_observable(rx.defer(factory), BUFFER)
    f.test().assert_result(1, 2).assert_no_violations()
    f.test().assert_result(1, 2).assert_no_violations()
    assert len(subscriptions) == 2


def test_elements_pushed_from_another_thread_arrive_in_order() -> None:
    subject: Subject[int] = Subject()
    ts: TestSubscriber[int] = Flowable.from_observable(subject, BUFFER).test(0)

    def push() -> None:
        for i in range(1000):
            subject.on_next(i)
        subject.on_completed()

    t = threading.Thread(target=push)
    t.start()
    for _ in range(1000):
        ts.request(1)
    t.join(5)
    ts.request(1)
    ts.await_done(5).assert_result(*range(1000)).assert_no_violations()


def test_from_observable_bad_arguments() -> None:
    with pytest.raises(TypeError, match=r"expected a reactivex Observable, got list"):
        Flowable.from_observable([1, 2], BUFFER)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got a Flowable; use it directly"):
        Flowable.from_observable(Flowable.just(1), BUFFER)  # type: ignore[arg-type]

    class Publisher:
        def subscribe(self, s: Any) -> None: ...

    with pytest.raises(TypeError, match="goes through Flowable.from_publisher"):
        Flowable.from_observable(Publisher(), BUFFER)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"strategy must be a BackpressureStrategy.*got 'buffer'"):
        Flowable.from_observable(rx.of(1), "buffer")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'strategy'"):
        Flowable.from_observable(rx.of(1))  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="capacity bounds the BUFFER strategy's buffer; it means nothing with DROP"):
        Flowable.from_observable(rx.of(1), DROP, capacity=3)
    with pytest.raises(ValueError, match="capacity must be >= 1"):
        Flowable.from_observable(rx.of(1), BUFFER, capacity=0)
    with pytest.raises(TypeError, match="capacity must be a positive int"):
        Flowable.from_observable(rx.of(1), BUFFER, capacity=2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="on_overflow needs a bounded buffer"):
        Flowable.from_observable(rx.of(1), BUFFER, on_overflow=BackpressureOverflow.DROP_OLDEST)
    with pytest.raises(TypeError, match="on_overflow must be a BackpressureOverflow"):
        Flowable.from_observable(rx.of(1), BUFFER, 2, "drop")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# to_observable


class Recorder:
    def __init__(self) -> None:
        self.values: list[Any] = []
        self.errors: list[BaseException] = []
        self.completed = 0

    def subscribe_to(self, observable: Any) -> Any:
        return observable.subscribe(self.values.append, self.errors.append, self._done)

    def _done(self) -> None:
        self.completed += 1


def test_to_observable_delivers_values_errors_and_completion() -> None:
    r = Recorder()
    r.subscribe_to(Flowable.range(1, 3).to_observable())
    assert (r.values, r.errors, r.completed) == ([1, 2, 3], [], 1)
    r2 = Recorder()
    r2.subscribe_to(Flowable.concat(Flowable.just(1), Flowable.error(Boom("f"))).to_observable())
    assert r2.values == [1] and len(r2.errors) == 1 and isinstance(r2.errors[0], Boom) and r2.completed == 0


def test_to_observable_requests_unbounded_by_default_and_in_batches_with_prefetch() -> None:
    requests: list[int] = []
    r = Recorder()
    r.subscribe_to(Flowable.range(0, 10).do_on_request(requests.append).to_observable())
    assert requests == [2**63 - 1] and r.values == list(range(10))
    requests.clear()
    r2 = Recorder()
    r2.subscribe_to(Flowable.range(0, 10).do_on_request(requests.append).to_observable(prefetch=4))
    assert r2.values == list(range(10)) and r2.completed == 1
    assert requests[0] == 4 and set(requests[1:]) == {3}  # n, then n - n // 4 each time


def test_to_observable_prefetch_bounds_how_far_an_async_upstream_runs_ahead() -> None:
    sched = TestScheduler()
    requested: list[int] = []
    r = Recorder()
    r.subscribe_to(Flowable.interval(1.0, scheduler=sched).on_backpressure_drop().do_on_request(requested.append)
                   .take(10).to_observable(prefetch=2))
    sched.advance_by(10)
    assert r.values == list(range(10)) and r.completed == 1
    assert requested[0] == 2 and all(n <= 2 for n in requested)


def test_disposing_the_observer_cancels_the_subscription() -> None:
    cancelled: list[bool] = []
    r = Recorder()
    d = r.subscribe_to(Flowable.never().do_on_cancel(lambda: cancelled.append(True)).to_observable())
    assert not cancelled
    d.dispose()
    assert cancelled == [True]
    # a take downstream in reactivex cancels the (synchronous) Flowable at once
    cancelled.clear()
    r2 = Recorder()
    r2.subscribe_to(Flowable.range(0, 10**9).do_on_cancel(lambda: cancelled.append(True)).to_observable().pipe(ops.take(3)))
    assert r2.values == [0, 1, 2] and r2.completed == 1 and cancelled == [True]


def test_an_observer_raising_cancels_the_upstream() -> None:
    cancelled: list[bool] = []
    seen: list[int] = []

    def on_next(x: int) -> None:
        seen.append(x)
        if x == 2:
            raise Boom("observer")

    obs = Flowable.range(1, 100).hide().do_on_cancel(lambda: cancelled.append(True)).to_observable()
    try:
        obs.subscribe(on_next, lambda e: None)
    except Boom:
        pass
    assert seen == [1, 2] and cancelled == [True]


def test_to_observable_bad_arguments() -> None:
    for bad in (0, -2):
        with pytest.raises(ValueError, match="prefetch must be >= 1"):
            Flowable.range(1, 2).to_observable(prefetch=bad)
    with pytest.raises(TypeError, match="prefetch must be a positive int or None"):
        Flowable.range(1, 2).to_observable(prefetch=2.0)  # type: ignore[arg-type]


def test_round_trip_keeps_backpressure_at_the_flowable_end() -> None:
    back = Flowable.from_observable(Flowable.range(0, 5).to_observable(), BUFFER)
    ts: TestSubscriber[int] = back.test(0)
    ts.request(2)
    ts.assert_values(0, 1)
    ts.request(3)
    ts.assert_result(0, 1, 2, 3, 4).assert_no_violations()


def test_a_missing_reactivex_is_an_import_error_naming_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "reactivex", None)
    with pytest.raises(ImportError, match=r"to_observable\(\) needs reactivex.*pip install reactivex"):
        Flowable.range(1, 2).to_observable()
    with pytest.raises(ImportError, match=r"from_observable\(\) needs reactivex"):
        Flowable.from_observable(object(), BUFFER)  # type: ignore[arg-type]


def test_round_trip_of_a_huge_synchronous_flowable_is_cancelled_by_take() -> None:
    cancelled: list[bool] = []
    huge = Flowable.range(0, 10**9).do_on_cancel(lambda: cancelled.append(True))
    back = Flowable.from_observable(huge.to_observable(), DROP).take(3)
    back.test().assert_result(0, 1, 2).assert_no_violations()
    assert cancelled == [True]
