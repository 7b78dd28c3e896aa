"""Reactive Streams rule tests (``test_rule_*``) of the asynchronous, combining and multicast operators and the processors.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_async_combining_multicast.py``."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from operators.harness import Boom
from operators.test_async_combining_multicast import _io
from rstreams import Flowable, plugins
from rstreams.testing import TestPublisher, TestSubscriber


def test_rule_3_6_amb_request_after_cancel_is_a_no_op() -> None:
    a: TestPublisher[int] = TestPublisher.create()
    b: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.amb(a, b).subscribe(ts)
    sub = ts.subscription
    assert sub is not None
    ts.cancel()
    sub.request(1)  # used to raise IndexError
    assert a.was_cancelled and b.was_cancelled
    ts.assert_no_values().assert_not_terminated().assert_no_violations()


# ---------------------------------------------------------------------------------------------
# rule 3.9 in the asynchronous operators


def test_rule_3_9_amb_bad_request_before_a_winner_reaches_on_error() -> None:
    a: TestPublisher[int] = TestPublisher.create()
    b: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.amb(a, b).subscribe(ts)
    ts.request(0)
    ts.assert_error(ValueError, match="3.9").assert_no_values().assert_no_violations()
    assert a.was_cancelled and b.was_cancelled


def test_rule_3_9_observe_on_bad_request_after_upstream_completed_reaches_on_error() -> None:
    from rstreams import schedulers

    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.range(0, 5).hide().observe_on(schedulers.single()).subscribe(ts)
    ts.request(0)  # the upstream has completed; its elements wait for demand in the queue
    ts.await_done(5).assert_error(ValueError, match="3.9").assert_no_values().assert_no_violations()


# ---------------------------------------------------------------------------------------------
# windows and groups subscribed late (from another thread)


class _SlowOnSubscribe(TestSubscriber[Any]):
    """Stays inside on_subscribe for a while and records any signal that arrives meanwhile."""

    def __init__(self, initial_request: int, entered: threading.Event) -> None:
        super().__init__(initial_request)
        self.entered = entered
        self.inside = False
        self.overlapping: list[str] = []

    def on_subscribe(self, subscription: Any) -> None:
        self.inside = True
        super().on_subscribe(subscription)
        self.entered.set()
        time.sleep(0.2)  # widens the race window; the assertion does not depend on timing
        self.inside = False

    def on_next(self, item: Any) -> None:
        if self.inside:
            self.overlapping.append("on_next")
        super().on_next(item)

    def on_error(self, error: BaseException) -> None:
        if self.inside:
            self.overlapping.append("on_error")
        super().on_error(error)

    def on_complete(self) -> None:
        if self.inside:
            self.overlapping.append("on_complete")
        super().on_complete()


def test_rule_1_3_late_window_subscriber_is_not_signalled_during_on_subscribe() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    main: TestSubscriber[Any] = TestSubscriber()
    Flowable.from_publisher(tp).window(3).subscribe(main)
    tp.next(1)
    window = main.values[0]  # not subscribed during on_next: abandoned, still buffering
    entered = threading.Event()
    ws = _SlowOnSubscribe(0, entered)
    t = threading.Thread(target=lambda: window.subscribe(ws))
    t.start()
    assert entered.wait(5)
    tp.error(Boom("while the window subscriber is inside on_subscribe"))
    t.join(5)
    ws.assert_no_values().assert_no_errors()  # the queued element precedes the error (RxJava)
    ws.request(1)
    ws.await_done(5)
    assert ws.overlapping == [], f"signalled during on_subscribe: {ws.overlapping}"
    ws.assert_failure(Boom, 1).assert_no_violations()
    main.assert_error(Boom).assert_no_violations()


def _src() -> Flowable[int]:
    return Flowable.range(0, 6).hide()


OPERATORS: dict[str, Any] = {
    "flat_map": lambda: _src().flat_map(lambda x: Flowable.just(x, x + 100).hide()),
    "flat_map(max_concurrency=1)": lambda: _src().flat_map(lambda x: Flowable.just(x, x + 100).hide(), max_concurrency=1),
    "flat_map(async inners)": lambda: _src().flat_map(lambda x: Flowable.just(x, x + 100).subscribe_on(_io()), max_concurrency=2, prefetch=1),
    "merge": lambda: Flowable.merge(_src(), _src().map(lambda x: x + 100)),
    "merge(async)": lambda: Flowable.merge(_src().subscribe_on(_io()), _src().subscribe_on(_io()), prefetch=2),
    "merge_with": lambda: _src().merge_with(_src()),
    "concat(async)": lambda: Flowable.concat(_src().subscribe_on(_io()), _src().subscribe_on(_io())),
    "zip": lambda: Flowable.zip(_src(), _src().subscribe_on(_io()), prefetch=2),
    "zip_with": lambda: _src().zip_with(_src(), lambda a, b: a + b),
    "combine_latest": lambda: Flowable.combine_latest(Flowable.just(1), _src(), prefetch=2),
    "with_latest_from": lambda: _src().with_latest_from(Flowable.just(1)),
    "amb": lambda: Flowable.amb(_src(), Flowable.never()),
    "amb_with": lambda: Flowable.never().amb_with(_src()),
    "switch_map": lambda: _src().switch_map(lambda x: Flowable.just(x, x + 100).hide()),
    "concat_map_eager": lambda: _src().concat_map_eager(lambda x: Flowable.just(x, x + 100).subscribe_on(_io()), max_concurrency=2, prefetch=1),
    "take_until": lambda: _src().take_until(Flowable.never()),
    "skip_until": lambda: _src().skip_until(Flowable.just(0)),
    "publish().ref_count()": lambda: _src().publish().ref_count(),
    "share": lambda: _src().share(),
    "replay(2).auto_connect()": lambda: _src().replay(2).auto_connect(),
    "cache": lambda: _src().cache(),
    "window(2)": lambda: _src().window(2).flat_map(lambda w: w.to_list()),
    "window(2, 3)": lambda: _src().window(2, 3).flat_map(lambda w: w.to_list()),
    "window(3, 1)": lambda: _src().window(3, 1).concat_map(lambda w: w.to_list()),
    "group_by": lambda: _src().group_by(lambda x: x % 2).flat_map(lambda g: g.map(lambda v: (g.key, v))),
    "observe_on": lambda: _src().observe_on(_io(), prefetch=2),
    "subscribe_on": lambda: _src().subscribe_on(_io()),
}


def _expected(name: str) -> list[Any]:
    ts = OPERATORS[name]().test()
    ts.await_done(5).assert_complete().assert_no_errors().assert_no_violations()
    return list(ts.values)


@pytest.mark.parametrize("name", sorted(OPERATORS))
@pytest.mark.parametrize("bad", [0, -1])
def test_rule_3_9_bad_request_reaches_on_error(name: str, bad: int) -> None:
    with plugins.collect_errors():
        ts: TestSubscriber[Any] = TestSubscriber(0)
        OPERATORS[name]().subscribe(ts)
        ts.request(bad)
        ts.await_done(5)
        ts.assert_error(ValueError, match="3.9").assert_no_values().assert_no_violations()


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_rule_1_1_request_one_at_a_time_gets_everything(name: str) -> None:
    want = _expected(name)
    ts: TestSubscriber[Any] = TestSubscriber(0)
    OPERATORS[name]().subscribe(ts)
    for _ in range(1000):
        if ts.is_terminated:
            break
        before = len(ts.values)
        ts.request(1)
        if len(ts.values) == before and not ts.is_terminated:
            ts.await_count(before + 1, 5) if len(want) > before else ts.await_done(5)
    ts.await_done(5)
    if name in ("merge(async)", "flat_map(async inners)", "group_by"):
        assert sorted(ts.values, key=repr) == sorted(want, key=repr)
    elif name == "switch_map":
        # the outer is consumed unbounded: each new element replaces an inner that had no demand
        assert ts.values == [5, 105]
    else:
        assert ts.values == want
    ts.assert_complete().assert_no_violations()


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_rule_3_12_cancel_mid_stream_nothing_after(name: str) -> None:
    want = _expected(name)
    assert len(want) >= 2
    k = len(want) // 2
    ts: TestSubscriber[Any] = TestSubscriber(k)
    OPERATORS[name]().subscribe(ts)
    ts.await_count(k, 5)
    ts.cancel()
    ts.request(100)
    got = list(ts.values)
    assert len(got) == k
    time.sleep(0.01)  # nothing may arrive after the cancel (asynchronous stages too)
    assert ts.values == got
    ts.assert_not_terminated().assert_no_violations()


def test_rule_2_13_every_processor_refuses_none() -> None:
    from rstreams.processors import (
        AsyncProcessor,
        BehaviorProcessor,
        MulticastProcessor,
        PublishProcessor,
        ReplayProcessor,
        UnicastProcessor,
    )

    for p in (
        PublishProcessor.create(),
        BehaviorProcessor.create(),
        ReplayProcessor.create(),
        UnicastProcessor.create(),
        AsyncProcessor.create(),
        MulticastProcessor.create(),
    ):
        if isinstance(p, MulticastProcessor):
            p.start()
        ts = p.test()
        with pytest.raises(TypeError):
            p.on_next(None)
        with pytest.raises(TypeError):
            p.on_error(None)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            p.on_subscribe(None)  # type: ignore[arg-type]
        p.on_next(1)
        p.on_complete()
        ts.assert_no_errors().assert_complete().assert_no_violations()


class _BadRequestInOnSubscribe(TestSubscriber[Any]):
    def __init__(self, bad: Any) -> None:
        super().__init__(0)
        self.bad = bad

    def on_subscribe(self, subscription: Any) -> None:
        super().on_subscribe(subscription)
        subscription.request(self.bad)


@pytest.mark.parametrize("bad", [0, -3])
@pytest.mark.parametrize(
    "name",
    ["with_latest_from", "skip_until", "take_until", "amb", "combine_latest", "zip", "merge", "flat_map", "switch_map"],
)
def test_rule_3_9_bad_request_inside_on_subscribe_reaches_on_error(name: str, bad: int) -> None:
    # with_latest_from and skip_until hand the downstream its Subscription before the main source
    # is subscribed: a bad request then must not be dropped by the deferred request
    make: Any = {
        "with_latest_from": lambda: Flowable.range(0, 3).with_latest_from(Flowable.just(1)),
        "skip_until": lambda: Flowable.range(0, 3).skip_until(Flowable.just(1)),
        "take_until": lambda: Flowable.range(0, 3).take_until(Flowable.never()),
        "amb": lambda: Flowable.amb(Flowable.range(0, 3), Flowable.never()),
        "combine_latest": lambda: Flowable.combine_latest(Flowable.just(1), Flowable.range(0, 3)),
        "zip": lambda: Flowable.zip(Flowable.range(0, 3), Flowable.range(0, 3).hide()),
        "merge": lambda: Flowable.merge(Flowable.range(0, 3), Flowable.range(0, 3).hide()),
        "flat_map": lambda: Flowable.range(0, 3).hide().flat_map(lambda x: Flowable.just(x).hide()),
        "switch_map": lambda: Flowable.range(0, 3).hide().switch_map(lambda x: Flowable.just(x).hide()),
    }[name]
    ts = _BadRequestInOnSubscribe(bad)
    make().subscribe(ts)
    ts.await_done(5).assert_error(ValueError, match="3.9").assert_no_values().assert_no_violations()


def test_rule_3_9_last_subscriber_of_a_ref_counted_multicast_processor_gets_its_error() -> None:
    from rstreams.processors import MulticastProcessor

    mp: MulticastProcessor[int] = MulticastProcessor.create(4, ref_count=True)
    mp.start()
    ts: TestSubscriber[int] = TestSubscriber(0)
    mp.subscribe(ts)
    assert mp.offer(1)
    ts.request(0)  # the last subscriber leaves with the error; the processor ends
    ts.assert_error(ValueError, match="3.9").assert_no_values().assert_no_violations()
    assert mp.has_complete
    mp.test().assert_result().assert_no_violations()


@pytest.mark.parametrize("op", ["observe_on", "flat_map", "switch_map", "concat_map_eager", "merge", "zip"])
def test_rule_1_1_source_ignoring_backpressure_is_missing_backpressure(op: str) -> None:
    # RxJava: observeOn "Queue is full?!", flatMap/switchMap/concatMapEager inner queue overflow
    from rstreams.errors import MissingBackpressureError
    from rstreams.testing import Violation

    tp: TestPublisher[int] = TestPublisher.create_noncompliant(Violation.REQUEST_OVERFLOW)
    make: Any = {
        "observe_on": lambda: Flowable.from_publisher(tp).observe_on(_io(), prefetch=4),
        "flat_map": lambda: Flowable.just(1).flat_map(lambda _: tp, prefetch=4),
        "switch_map": lambda: Flowable.just(1).switch_map(lambda _: tp, prefetch=4),
        "concat_map_eager": lambda: Flowable.just(1).concat_map_eager(lambda _: tp, prefetch=4),
        "merge": lambda: Flowable.merge(tp, Flowable.never(), prefetch=4),
        "zip": lambda: Flowable.zip(tp, Flowable.never(), prefetch=4),
    }[op]
    ts: TestSubscriber[int] = TestSubscriber(0)
    make().subscribe(ts)
    tp.next(*range(20))  # 20 elements against a request of 4, nobody consuming
    # a foreign publisher subscribed as a source (observe_on's, merge's, zip's) is caught at the
    # door (from_publisher counts its demand); one returned by a mapper, by the inner's queue
    where = r"from_publisher\(TestPublisher\)" if op in ("observe_on", "merge", "zip") else op
    ts.await_done(5).assert_error(MissingBackpressureError, match=where).assert_no_values().assert_no_violations()
    assert tp.was_cancelled

