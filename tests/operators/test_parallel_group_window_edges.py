"""Edge cases of group_by, window, buffer, retry/repeat(_when), on_error_*, scan, aggregates,
take_last/skip_last and parallel against RxJava 3's documented semantics and the rules.

Each test pins one behaviour that was wrong before the fix next to it (see the commit that adds
it). Every test subscribes a :class:`TestSubscriber` and ends with ``assert_no_violations()``.
"""

from __future__ import annotations

import functools
import operator
import threading
from typing import Any

import pytest

from rstreams import Flowable, plugins, schedulers
from rstreams._internal.atomics import AtomicInt
from rstreams.errors import BadRequestError, MissingBackpressureError, NoneElementError
from rstreams.testing import TestPublisher, TestSubscriber

# ---------------------------------------------------------------------------------------------
# parallel


@pytest.mark.parametrize("rails", [True, 1.5, "2"])
def test_parallel_rejects_non_int_rails_with_type_error(rails: Any) -> None:
    # parallel(True) used to build one rail (bool is an int subclass); 1.5 / "2" were ValueErrors
    with pytest.raises(TypeError, match="number of rails"):
        Flowable.range(0, 3).parallel(rails)
    ts: TestSubscriber[int] = Flowable.range(0, 3).parallel(1).sequential().test()
    ts.await_done(5).assert_result(0, 1, 2).assert_no_violations()


def test_parallel_rejects_bool_prefetch_at_assembly() -> None:
    # prefetch=True used to be accepted and fail at subscription with a rule 3.9 "request(True)" error
    with pytest.raises(TypeError, match="prefetch"):
        Flowable.range(0, 3).parallel(2, prefetch=True)
    ts: TestSubscriber[int] = Flowable.range(0, 3).parallel(2, prefetch=1).sequential().test()
    ts.await_done(5)
    assert sorted(ts.values) == [0, 1, 2]
    ts.assert_complete().assert_no_violations()


@pytest.mark.parametrize(
    "stage",
    [
        lambda p: p.map(5),
        lambda p: p.filter(None),
        lambda p: p.do_on_next("x"),
        lambda p: p.compose(3),
        lambda p: p.run_on(None),
        lambda p: p.run_on(schedulers.computation(), 0),
        lambda p: p.run_on(schedulers.computation(), True),
        lambda p: p.sequential(0),
    ],
)
def test_parallel_stage_arguments_are_checked_at_assembly(stage: Any) -> None:
    # they used to be checked only when the rails were built at subscription (as a stream error)
    with pytest.raises((TypeError, ValueError)):
        stage(Flowable.range(0, 3).parallel(2))
    ts: TestSubscriber[int] = Flowable.range(0, 4).parallel(2).map(lambda x: x * 10).sequential().test()
    ts.await_done(5)
    assert sorted(ts.values) == [0, 10, 20, 30]
    ts.assert_complete().assert_no_violations()


class _CancelOnFirstGet(AtomicInt):
    """A rail's demand counter whose first read lets ``hook`` run: a rail cancelling on another
    thread exactly between the dispatcher's "is this rail subscribed?" check and its ``on_next``."""

    __slots__ = ("hook",)

    def __init__(self, value: int, hook: Any) -> None:
        super().__init__(value)
        self.hook = hook

    def get(self) -> int:
        h = self.hook
        if h is not None:
            self.hook = None
            h()
        return super().get()


def test_parallel_rail_cancelled_between_check_and_delivery_does_not_crash_the_dispatcher() -> None:
    # race: rail.cancel() on the rail's thread sets rail.subscriber = None while the dispatcher
    # (upstream thread) is between its "subscriber is not None" check and "subscriber.on_next";
    # it used to raise AttributeError ('NoneType' object has no attribute 'on_next') into the source
    rails: list[Any] = []
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber(0)
    (
        Flowable.from_publisher(tp)
        .parallel(2, prefetch=8)
        .compose(lambda f: f.do_on_subscribe(rails.append))
        .sequential()
        .subscribe(ts)
    )
    assert len(rails) == 2
    rail1: Any = rails[1]
    rail1.requested = _CancelOnFirstGet(rail1.requested.get(), rail1.cancel)
    ts.request(6)
    tp.next(0, 1, 2, 3, 4, 5)
    # rail 1 was cancelled from the side (its element may or may not have reached it: rule 3.6
    # allows that), so the merge waits for it forever; rail 0 got every other element, no crash
    ts.await_count(5, 2)
    assert not ts.errors, ts.errors
    assert set(ts.values) >= {0, 2, 3, 4, 5}, ts.values
    ts.assert_no_violations()


def test_parallel_rail_cancelled_twice_counts_once() -> None:
    # rule 3.5: cancel is idempotent. A second cancel of rail 0 was counted again towards "every
    # rail cancelled", so with 2 rails the source was cancelled while rail 1 was still consuming
    rails: list[Any] = []
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber()
    (
        Flowable.from_publisher(tp)
        .parallel(2, prefetch=8)
        .compose(lambda f: f.do_on_subscribe(rails.append))
        .sequential()
        .subscribe(ts)
    )
    rails[0].cancel()
    rails[0].cancel()
    assert not tp.was_cancelled
    tp.next(1, 2, 3)
    tp.complete()
    ts.await_count(3, 2)
    assert sorted(ts.values) == [1, 2, 3]  # all went to rail 1
    ts.assert_no_errors().assert_no_violations()


def test_parallel_rails_all_cancelled_before_the_source_is_subscribed_cancel_it() -> None:
    # every rail cancelled while the rails were still being subscribed (take(0) on each rail):
    # the cancel went to the not-yet-set upstream, and the source subscribed afterwards was asked
    # for the prefetch and never cancelled (a leak); now it is cancelled at once
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.from_publisher(tp).parallel(2).compose(lambda f: f.take(0)).sequential().subscribe(ts)
    assert tp.was_cancelled or tp.subscriber_count == 0
    assert not tp.request_calls, tp.request_calls
    ts.assert_result().assert_no_violations()


# ---------------------------------------------------------------------------------------------
# group_by


def test_group_by_unhashable_key_fails_the_stream() -> None:
    # the dict lookup of an unhashable key raised TypeError out of on_next (rule 2.13): a
    # compliant upstream reported it as undeliverable and the stream hung; now it is on_error
    # (and the upstream is cancelled), as a raising key_fn is
    tp: TestPublisher[int] = TestPublisher.create()
    with plugins.collect_errors() as undeliverable:
        ts: TestSubscriber[int] = (
            Flowable.from_publisher(tp).group_by(lambda x: [x]).flat_map(lambda g: g).test()
        )
        tp.next(1)
    ts.assert_error(TypeError).assert_no_values()
    assert tp.was_cancelled
    assert not undeliverable, undeliverable
    ts.assert_no_violations()


class _GroupsBy:
    """Main subscriber of group_by: subscribes each group with a TestSubscriber (``initial[key]``
    its initial request, default 0)."""

    def __init__(self, initial: dict[Any, int]) -> None:
        self.initial = initial
        self.groups: dict[Any, TestSubscriber[Any]] = {}
        self.main: TestSubscriber[Any] = TestSubscriber(10)

    def on_subscribe(self, s: Any) -> None:
        self.main.on_subscribe(s)

    def on_next(self, g: Any) -> None:
        self.main.on_next(g)
        t: TestSubscriber[Any] = TestSubscriber(self.initial.get(g.key, 0))
        self.groups[g.key] = t
        g.subscribe(t)

    def on_error(self, e: BaseException) -> None:
        self.main.on_error(e)

    def on_complete(self) -> None:
        self.main.on_complete()


def test_group_by_cancelled_group_does_not_count_as_starved_by_a_slow_group() -> None:
    # slow_group="error" fails the stream when a full group would starve *other open* groups;
    # a group its subscriber cancelled (not yet evicted: its key did not come again) was still
    # counted, so a lone slow group failed with MissingBackpressureError instead of waiting
    tp: TestPublisher[str] = TestPublisher.create()
    m = _GroupsBy({"a": 1})
    Flowable.from_publisher(tp).group_by(lambda x: x[0], buffer_size=4).subscribe(m)
    tp.next("a1")
    m.groups["a"].cancel()
    tp.next("b1", "b2", "b3", "b4")  # b's queue is full: plain backpressure, nobody else waits
    b = m.groups["b"]
    b.assert_no_errors().assert_no_values()
    m.main.assert_no_errors()
    b.request(10)
    b.assert_values("b1", "b2", "b3", "b4")
    tp.complete()
    b.assert_complete().assert_no_violations()
    m.main.assert_complete().assert_no_violations()
    m.groups["a"].assert_values("a1").assert_no_violations()


def test_group_by_slow_group_still_fails_when_another_group_is_open() -> None:
    # the counterpart (documented behaviour kept): another open group would starve -> error
    tp: TestPublisher[str] = TestPublisher.create()
    m = _GroupsBy({"a": 1})
    Flowable.from_publisher(tp).group_by(lambda x: x[0], buffer_size=4).subscribe(m)
    tp.next("a1")  # a consumes it (and asks for nothing more): a stays open
    tp.next("b1", "b2", "b3", "b4")
    assert tp.was_cancelled
    m.groups["b"].assert_error(MissingBackpressureError).assert_no_violations()
    m.main.assert_error(MissingBackpressureError).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# window


class _Windows:
    """Main subscriber of window: requests ``n`` windows and subscribes each one unbounded."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.main: TestSubscriber[Any] = TestSubscriber(n)
        self.windows: list[TestSubscriber[Any]] = []

    def on_subscribe(self, s: Any) -> None:
        self.main.on_subscribe(s)

    def on_next(self, w: Any) -> None:
        self.main.on_next(w)
        t: TestSubscriber[Any] = TestSubscriber()
        self.windows.append(t)
        w.subscribe(t)

    def on_error(self, e: BaseException) -> None:
        self.main.on_error(e)

    def on_complete(self) -> None:
        self.main.on_complete()


def test_window_overlapping_upstream_cancelled_when_main_cancelled_and_emitted_windows_done() -> None:
    # window(3, 1) with one window requested opens windows 2 and 3 without main demand (they wait
    # in a queue); after the main cancel they can never be subscribed, but they still counted as
    # live, so the upstream was never cancelled once the one emitted window completed (a leak)
    tp: TestPublisher[int] = TestPublisher.create()
    m = _Windows(1)
    Flowable.from_publisher(tp).window(3, 1).subscribe(m)
    tp.next(0, 1, 2)
    assert len(m.windows) == 1
    m.windows[0].assert_result(0, 1, 2).assert_no_violations()
    assert not tp.was_cancelled
    m.main.cancel()
    assert tp.was_cancelled
    m.main.assert_not_complete().assert_no_errors().assert_no_violations()


def test_window_overlapping_main_cancel_keeps_a_subscribed_open_window_running() -> None:
    # the counterpart (RxJava): an emitted, subscribed window keeps the upstream alive after the
    # main cancel until it is done
    tp: TestPublisher[int] = TestPublisher.create()
    m = _Windows(1)
    Flowable.from_publisher(tp).window(3, 1).subscribe(m)
    tp.next(0, 1)
    m.main.cancel()
    assert not tp.was_cancelled
    tp.next(2)
    m.windows[0].assert_result(0, 1, 2).assert_no_violations()
    assert tp.was_cancelled
    m.main.assert_no_errors().assert_no_violations()


def _bad_request_during_main_on_next(op: Any) -> None:
    """Request(0) on another thread while the upstream thread is inside the main subscriber's
    ``on_next`` (a window or group being emitted): the rule 3.9 error must not overlap it."""
    ts: TestSubscriber[Any] = TestSubscriber(0)
    in_on_next = threading.Event()
    release = threading.Event()
    overlaps: list[str] = []
    state = {"inside": False}

    class Main:
        _rs_no_wrap = True  # raw signals, as a library operator (flat_map) receives them

        def on_subscribe(self, s: Any) -> None:
            ts.on_subscribe(s)

        def on_next(self, w: Any) -> None:
            state["inside"] = True
            ts.on_next(w)
            in_on_next.set()
            release.wait(5)
            state["inside"] = False

        def on_error(self, e: BaseException) -> None:
            if state["inside"]:
                overlaps.append(threading.current_thread().name)
            ts.on_error(e)

        def on_complete(self) -> None:
            ts.on_complete()

    tp: TestPublisher[int] = TestPublisher.create()
    op(Flowable.from_publisher(tp)).subscribe(Main())
    ts.request(1)
    emitter = threading.Thread(target=lambda: tp.next(0), name="upstream")
    emitter.start()
    assert in_on_next.wait(5)
    requester = threading.Thread(target=lambda: ts.request(0), name="requester")
    requester.start()
    requester.join(5)
    release.set()
    emitter.join(5)
    assert not overlaps, f"on_error during on_next, on {overlaps}"
    assert len(ts.values) == 1
    ts.assert_error(BadRequestError).assert_no_violations()


def test_window_rule_3_9_error_never_overlaps_a_window_being_emitted() -> None:
    # rule 1.3: the rule 3.9 error used to be signalled at once from the requesting thread,
    # overlapping the on_next(window) in progress; now the drain owner delivers it afterwards
    _bad_request_during_main_on_next(lambda f: f.window(2))


def test_group_by_rule_3_9_error_never_overlaps_a_group_being_emitted() -> None:
    # rule 1.3: the same for group_by's main output (now behind a HalfSerializer)
    _bad_request_during_main_on_next(lambda f: f.group_by(lambda x: x % 2))


# ---------------------------------------------------------------------------------------------
# on_error_resume_next, retry_when: a foreign Publisher from a user function


class _ForeignNoneThenComplete:
    """A non-Flowable Publisher (no rule 2.13 guard of its own): its first request is answered
    with ``on_next(None)``, the next one with ``on_complete()``."""

    def __init__(self) -> None:
        self.subscribed = 0

    def subscribe(self, subscriber: Any) -> None:
        self.subscribed += 1
        calls = [0]

        class _Sub:
            def request(self, n: int) -> None:
                calls[0] += 1
                if calls[0] == 1:
                    subscriber.on_next(None)
                elif calls[0] == 2:
                    subscriber.on_complete()

            def cancel(self) -> None:
                calls[0] = 99

        subscriber.on_subscribe(_Sub())


def test_on_error_resume_next_function_foreign_publisher_gets_the_rule_2_13_guard() -> None:
    # the fallback *function*'s foreign Publisher was subscribed unguarded: its None reached the
    # downstream (a rule 2.13 violation); a fallback Publisher given directly was already guarded
    foreign = _ForeignNoneThenComplete()
    with plugins.collect_errors():
        ts: TestSubscriber[Any] = (
            Flowable.error(ValueError("x")).on_error_resume_next(lambda e: foreign).test()
        )
    assert foreign.subscribed == 1
    ts.assert_error(NoneElementError).assert_no_values().assert_no_violations()


def test_retry_when_foreign_handler_publisher_gets_the_rule_2_13_guard() -> None:
    # the handler's foreign Publisher was subscribed unguarded: its None counted as "resubscribe"
    # (with an always-None handler, an endless retry loop); now it fails the stream
    foreign = _ForeignNoneThenComplete()
    subscriptions = [0]

    def source_once() -> Flowable[int]:
        subscriptions[0] += 1
        return Flowable.error(ValueError("x"))

    with plugins.collect_errors():
        ts: TestSubscriber[Any] = Flowable.defer(source_once).retry_when(lambda errors: foreign).test()
    assert subscriptions[0] == 1  # never resubscribed on the None
    ts.assert_error(NoneElementError).assert_no_values().assert_no_violations()


# ---------------------------------------------------------------------------------------------
# aggregates


@pytest.mark.parametrize("data", [[0.1] * 10, [1] + [0.1] * 10, [1, 2.5, 3], list(range(100))])
def test_reduce_add_fused_equals_the_element_by_element_fold(data: list[Any]) -> None:
    # the fused reduce(operator.add) folds chunks with sum(); from Python 3.12 sum() adds floats
    # with compensated summation, so the fused result (1.0) differed from the unfused fold
    # (0.9999999999999999) and from RxJava's left fold. (On 3.11 both paths already agreed.)
    want = functools.reduce(operator.add, data)
    for f in (Flowable.from_iterable(data), Flowable.from_iterable(data).hide()):
        ts: TestSubscriber[Any] = f.reduce(operator.add).test()
        assert type(ts.values[0]) is type(want)
        ts.assert_result(want).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# take_last, buffer: counts beyond sys.maxsize (Python ints are unbounded; a C ssize_t is not)


@pytest.mark.parametrize("hidden", [False, True])
def test_take_last_count_beyond_maxsize_keeps_everything(hidden: bool) -> None:
    # deque(maxlen=2**64) raised OverflowError: on the fused path as the stream's error, on the
    # hidden path out of subscribe (rule 1.9: reported as undeliverable, the subscriber hung)
    src = Flowable.range(0, 3).hide() if hidden else Flowable.range(0, 3)
    with plugins.collect_errors() as undeliverable:
        ts: TestSubscriber[int] = src.take_last(2**64).test()
    assert not undeliverable, undeliverable
    ts.assert_result(0, 1, 2).assert_no_violations()


def test_buffer_count_beyond_maxsize_on_a_fused_source() -> None:
    # the fused batches used islice(it, count), which rejects a stop above sys.maxsize (ValueError)
    ts: TestSubscriber[list[int]] = Flowable.range(0, 3).buffer(2**64).test()
    ts.assert_result([0, 1, 2]).assert_no_violations()
    ts2: TestSubscriber[list[int]] = Flowable.range(0, 3).hide().buffer(2**64).test()
    ts2.assert_result([0, 1, 2]).assert_no_violations()


def test_window_delivers_its_queued_elements_before_the_upstream_error() -> None:
    # RxJava's windows are UnicastProcessor.create(n, onTerminate): delayError = true
    tp: TestPublisher[int] = TestPublisher.create()
    main: TestSubscriber[Flowable[int]] = Flowable.from_publisher(tp).window(3).test()
    tp.next(1, 2)
    inner: TestSubscriber[int] = TestSubscriber(0)
    main.values[0].subscribe(inner)
    tp.error(KeyError("up"))
    main.assert_error(KeyError).assert_no_violations()
    inner.assert_no_values().assert_no_errors()
    inner.request(1)
    inner.assert_values(1).assert_no_errors()
    inner.request(1)
    inner.assert_failure(KeyError, 1, 2).assert_no_violations()


def test_group_by_group_error_is_not_delayed_behind_queued_elements() -> None:
    # groupBy(delayError = false), RxJava's default: the error drops what the group still holds
    tp: TestPublisher[int] = TestPublisher.create()
    inner: TestSubscriber[int] = TestSubscriber(0)
    # subscribed during on_next (a group not subscribed then is abandoned: RxJava 3)
    main: TestSubscriber[Any] = Flowable.from_publisher(tp).group_by(lambda x: x % 2).do_on_next(lambda g: g.subscribe(inner)).test()
    tp.next(1)
    inner.assert_no_values()
    tp.error(KeyError("up"))
    main.assert_error(KeyError).assert_no_violations()
    inner.assert_failure(KeyError).assert_no_violations()
