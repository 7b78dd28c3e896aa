"""merge and zip: scenarios, rules, property tests against plain-Python models, threaded sources.

``ThreadedRange`` (also used by the other combining-operator tests) is a small, rule-abiding,
test-only Publisher that emits a range from its own thread under demand, with seeded jitter.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from operators.harness import Boom, check_scenarios
from rstreams import Flowable, plugins
from rstreams._internal.requests import validate_request
from rstreams.testing import TestSubscriber

MAX = 2**63 - 1


# ---------------------------------------------------------------------------------------------
# test-only publishers


class _ThreadedSubscription:
    def __init__(self, owner: ThreadedRange, subscriber: Any) -> None:
        self._owner = owner
        self._subscriber = subscriber
        self._cond = threading.Condition()
        self._demand = 0
        self._cancelled = False
        self._bad: BaseException | None = None

    def request(self, n: int) -> None:
        err = validate_request(n)
        with self._cond:
            if err is not None:
                self._bad = err
            else:
                self._demand = min(MAX, self._demand + n)
            self._cond.notify_all()

    def cancel(self) -> None:
        with self._cond:
            self._cancelled = True
            self._cond.notify_all()

    def run(self) -> None:
        o = self._owner
        rnd = random.Random(o.seed)
        s = self._subscriber
        deadline = time.monotonic() + o.max_seconds
        i = o.start
        end = o.start + o.count
        while i < end:
            with self._cond:
                while self._demand == 0 and not self._cancelled and self._bad is None:
                    if not self._cond.wait(timeout=deadline - time.monotonic()) and time.monotonic() > deadline:
                        return  # bounded in time: give up silently (the test will fail on values)
                if self._cancelled:
                    return
                if self._bad is not None:
                    bad = self._bad
                    self._cancelled = True
                    break
                take = min(self._demand, end - i)
                if self._demand < MAX:
                    self._demand -= take
            for _ in range(take):
                if self._cancelled:
                    return
                s.on_next(i)
                i += 1
                if o.jitter and rnd.random() < o.jitter:
                    time.sleep(rnd.random() * 0.0005)
        else:
            if o.fail is not None:
                s.on_error(o.fail)
            else:
                s.on_complete()
            return
        s.on_error(bad)  # rule 3.9


class ThreadedRange:
    """Emits ``start .. start+count-1`` from a new thread per subscriber, honouring demand (rule 1.1),
    serial signals (rule 1.3), cancellation (rule 3.12) and rule 3.9; optionally ends with ``fail``."""

    def __init__(
        self,
        start: int,
        count: int,
        *,
        seed: int = 0,
        jitter: float = 0.05,
        fail: BaseException | None = None,
        max_seconds: float = 10.0,
    ) -> None:
        self.start = start
        self.count = count
        self.seed = seed
        self.jitter = jitter
        self.fail = fail
        self.max_seconds = max_seconds
        self.threads: list[threading.Thread] = []

    def subscribe(self, subscriber: Any) -> None:
        sub = _ThreadedSubscription(self, subscriber)
        subscriber.on_subscribe(sub)
        t = threading.Thread(target=sub.run, daemon=True, name=f"threaded-range-{self.start}")
        self.threads.append(t)
        t.start()


class CountingSource:
    """Wraps a Flowable; counts subscriptions and cancellations (test-only)."""

    def __init__(self, inner: Flowable[Any]) -> None:
        self.inner = inner
        self.subscriptions = 0
        self.cancels = 0

    def subscribe(self, subscriber: Any) -> None:
        self.subscriptions += 1
        outer = self

        class _Spy:
            _rs_no_wrap = True

            def on_subscribe(self, s: Any) -> None:
                self._s = s
                subscriber.on_subscribe(self)

            def on_next(self, x: Any) -> None:
                subscriber.on_next(x)

            def on_error(self, e: BaseException) -> None:
                subscriber.on_error(e)

            def on_complete(self) -> None:
                subscriber.on_complete()

            def request(self, n: int) -> None:
                self._s.request(n)

            def cancel(self) -> None:
                outer.cancels += 1
                self._s.cancel()

        self.inner.subscribe(_Spy())


def run_pattern(f: Flowable[Any], pattern: list[int], timeout: float = 5.0) -> TestSubscriber[Any]:
    """Request according to ``pattern``, then unbounded; wait for the end."""
    ts: TestSubscriber[Any] = TestSubscriber(0)
    f.subscribe(ts)
    for n in pattern:
        if ts.is_terminated:
            break
        ts.request(n)
    ts.request(MAX)
    ts.await_done(timeout)
    return ts


# ---------------------------------------------------------------------------------------------
# merge: scenarios


def test_merge_scenarios_with_scalar() -> None:
    check_scenarios(
        # a scalar source ahead of the others is emitted first in every scenario (as in RxJava)
        lambda f: Flowable.merge(Flowable.just(-1), f),
        range(10),
        lambda d: [-1] + d,
    )


def test_merge_scenarios_two_hidden_sources_in_order_when_synchronous() -> None:
    check_scenarios(
        lambda f: Flowable.merge(f, Flowable.range(100, 5).hide()),
        range(20),
        lambda d: d + list(range(100, 105)),
    )


def test_merge_scenarios_max_concurrency_one_is_concat() -> None:
    check_scenarios(
        lambda f: Flowable.merge(f.hide(), Flowable.range(100, 5), f, max_concurrency=1, prefetch=2),
        range(7),
        lambda d: d + list(range(100, 105)) + d,
    )


def test_merge_of_nothing_and_of_one() -> None:
    Flowable.merge().test().assert_result().assert_no_violations()
    Flowable.merge(Flowable.just(1, 2).hide()).test().assert_result(1, 2).assert_no_violations()
    Flowable.merge(Flowable.empty(), Flowable.empty().hide()).test().assert_result().assert_no_violations()


def test_merge_accepts_an_iterable_of_sources() -> None:
    Flowable.merge([Flowable.just(1), Flowable.just(2)]).test().assert_result(1, 2).assert_no_violations()


def test_merge_bad_arguments_raise_at_assembly() -> None:
    with pytest.raises(TypeError):
        Flowable.merge(Flowable.just(1), None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Flowable.merge(Flowable.just(1), 5)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Flowable.merge(Flowable.just(1), Flowable.just(2), max_concurrency=0)
    with pytest.raises(ValueError):
        Flowable.merge(Flowable.just(1), Flowable.just(2), prefetch=0)
    with pytest.raises(TypeError):
        Flowable.merge(Flowable.just(1), Flowable.just(2), prefetch=1.5)  # type: ignore[arg-type]


def test_merge_delay_error_runs_every_source_then_signals_the_error() -> None:
    boom = Boom("a")
    ts = Flowable.merge(
        Flowable.just(1).concat_with(Flowable.error(boom)), Flowable.range(10, 3).hide(), delay_error=True
    ).test()
    ts.assert_values(1, 10, 11, 12).assert_error(Boom).assert_no_violations()
    assert ts.errors[0] is boom


def test_merge_delay_error_several_errors_arrive_as_an_exception_group() -> None:
    a, b = Boom("a"), Boom("b")
    ts = Flowable.merge(Flowable.error(a), Flowable.just(5), Flowable.error(b), delay_error=True).test()
    ts.assert_values(5).assert_no_violations()
    err = ts.errors[0]
    assert isinstance(err, BaseExceptionGroup) and list(err.exceptions) == [a, b]


def test_merge_without_delay_error_the_first_error_cancels_the_others() -> None:
    cancelled: list[bool] = []
    never = Flowable.never().do_on_cancel(lambda: cancelled.append(True))
    ts = Flowable.merge(never, Flowable.error(Boom("x"))).test()
    ts.assert_error(Boom).assert_no_violations()
    assert cancelled == [True]


def test_merge_with_delay_error_one_by_one_and_max_concurrency() -> None:
    src = [Flowable.range(0, 3).hide(), Flowable.error(Boom("e")), Flowable.range(3, 3).hide()]
    ts = Flowable.merge(*src, max_concurrency=1, delay_error=True).test(0)
    for _ in range(10):
        ts.request(1)
    ts.assert_values(0, 1, 2, 3, 4, 5).assert_error(Boom).assert_no_violations()
    ts2 = Flowable.just(1).merge_with(Flowable.error(Boom("w")), delay_error=True).test()
    ts2.assert_values(1).assert_error(Boom).assert_no_violations()


def test_merge_delay_error_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="delay_error"):
        Flowable.merge(Flowable.just(1), Flowable.just(2), delay_error="yes")  # type: ignore[arg-type]


def test_merge_scalar_order_matches_rxjava() -> None:
    srcs = (Flowable.range(0, 3).hide(), Flowable.range(3, 3).hide(), Flowable.just(9))
    Flowable.merge(*srcs).test().assert_result(0, 1, 2, 3, 4, 5, 9).assert_no_violations()
    ts = Flowable.merge(*srcs).test(2)
    ts.assert_values(0, 1)
    ts.request(10)
    ts.assert_result(0, 1, 9, 2, 3, 4, 5).assert_no_violations()


def test_merge_first_error_cancels_everything() -> None:
    never = CountingSource(Flowable.never())
    Flowable.merge(never, Flowable.error(Boom("x"))).test().assert_error(Boom).assert_no_violations()
    assert never.cancels == 1


def test_merge_second_error_goes_to_the_hook(undeliverable: list[BaseException]) -> None:
    a = ThreadedRange(0, 5, fail=Boom("a"), jitter=0)
    b = ThreadedRange(10, 5, fail=Boom("b"), jitter=0)
    ts = Flowable.merge(a, b).test()
    ts.await_done(5).assert_error(Boom).assert_no_violations()
    for t in a.threads + b.threads:
        t.join(5)
    # the later error, if its source got as far as signalling it, is reported, never dropped
    assert all(isinstance(e, Boom) for e in undeliverable)


def test_merge_cancel_cancels_all_sources_and_stops() -> None:
    srcs = [CountingSource(Flowable.never()) for _ in range(3)]
    ts = Flowable.merge(*srcs, Flowable.range(0, 10).hide()).test(3)
    ts.assert_values(0, 1, 2)
    ts.cancel()
    ts.request(10)
    ts.assert_values(0, 1, 2).assert_no_violations()
    assert [s.cancels for s in srcs] == [1, 1, 1]


def test_merge_max_concurrency_limits_subscribed_sources() -> None:
    srcs = [CountingSource(Flowable.range(i * 10, 3).hide()) for i in range(6)]
    ts = Flowable.merge(*srcs, max_concurrency=2, prefetch=1).test(0)
    assert [s.subscriptions for s in srcs] == [1, 1, 0, 0, 0, 0]
    ts.request(3)
    ts.request(MAX)
    ts.assert_value_count(18).assert_complete().assert_no_violations()
    assert all(s.subscriptions == 1 for s in srcs)


def test_merge_many_sources_does_not_recurse() -> None:
    srcs = [Flowable.just(i).hide() for i in range(5_000)] + [Flowable.just(i) for i in range(5_000)]
    Flowable.merge(*srcs, max_concurrency=1).test().assert_value_count(10_000).assert_complete()


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.lists(st.integers(), max_size=12), max_size=5),
    st.lists(st.integers(1, 6), max_size=8),
    st.booleans(),
    st.sampled_from([None, 1, 2]),
    st.sampled_from([1, 2, 16]),
)
def test_property_merge_of_synchronous_sources_equals_chain(
    lists: list[list[int]], pattern: list[int], hidden: bool, mc: int | None, prefetch: int
) -> None:
    srcs = [Flowable.from_iterable(x) for x in lists]
    if hidden:
        srcs = [s.hide() for s in srcs]
    ts = run_pattern(Flowable.merge(*srcs, max_concurrency=mc, prefetch=prefetch), pattern)
    # synchronous sources with max_concurrency=1 come out in order; otherwise compare as multisets
    want = [x for xs in lists for x in xs]
    if mc == 1:
        assert ts.values == want
    else:
        assert Counter(ts.values) == Counter(want)
    ts.assert_complete().assert_no_violations()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_merge_threaded_sources_serialized_no_loss_no_duplicates(seed: int) -> None:
    srcs = [ThreadedRange(i * 1000, 300, seed=seed * 10 + i) for i in range(4)]
    ts = Flowable.merge(*srcs, prefetch=16).test()
    ts.await_done(10).assert_complete().assert_no_errors().assert_no_violations()
    vals = ts.values
    assert sorted(vals) == sorted(x for i in range(4) for x in range(i * 1000, i * 1000 + 300))
    for i in range(4):  # each source's order is kept
        mine = [v for v in vals if i * 1000 <= v < i * 1000 + 300]
        assert mine == list(range(i * 1000, i * 1000 + 300))


@pytest.mark.parametrize("seed", [4, 5])
def test_merge_threaded_sources_with_bounded_requests_from_main_thread(seed: int) -> None:
    rnd = random.Random(seed)
    srcs = [ThreadedRange(i * 1000, 200, seed=seed * 10 + i) for i in range(3)]
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.merge(*srcs, prefetch=8).subscribe(ts)
    deadline = time.monotonic() + 10
    while not ts.is_terminated and time.monotonic() < deadline:
        ts.request(rnd.randint(1, 20))
        time.sleep(0.0005)
    ts.assert_complete().assert_value_count(600).assert_no_violations()
    assert len(set(ts.values)) == 600


# ---------------------------------------------------------------------------------------------
# zip


def test_zip_scenarios_with_range() -> None:
    check_scenarios(
        lambda f: Flowable.zip(f, Flowable.range(0, 1000)),
        range(10),
        lambda d: list(zip(d, range(1000), strict=False)),
    )


def test_zip_scenarios_with_zipper_and_hidden_other() -> None:
    check_scenarios(
        lambda f: Flowable.zip(f, Flowable.range(0, 1000).hide(), lambda a, b: a * 1000 + b),
        range(10),
        lambda d: [a * 1000 + b for a, b in zip(d, range(1000), strict=False)],
    )


def test_zip_shorter_other_completes_early() -> None:
    check_scenarios(
        lambda f: Flowable.zip(f, Flowable.range(0, 3).hide()),
        range(10),
        lambda d: list(zip(d, range(3), strict=False)),
        # errors are immediate (RxJava's zip without delay_error): the first source fails while
        # being subscribed, before the second is, so no row is made
        on_error_expected=lambda d: ([], Boom),
    )


def test_zip_fuses_synchronous_sources() -> None:
    f = Flowable.zip(Flowable.range(0, 3), Flowable.just("a", "b", "c", "d"))
    assert f._fused() is not None
    f.test().assert_result((0, "a"), (1, "b"), (2, "c")).assert_no_violations()


def test_zip_with_facade() -> None:
    Flowable.just(1, 2).zip_with(Flowable.just(3, 4).hide(), lambda a, b: a + b).test().assert_result(4, 6)
    Flowable.just(1).hide().zip_with(Flowable.just(2)).test().assert_result((1, 2))


def test_zip_of_nothing_is_empty() -> None:
    Flowable.zip().test().assert_result().assert_no_violations()


def test_zip_completes_eagerly_and_cancels_the_others() -> None:
    never = CountingSource(Flowable.never())
    Flowable.zip(never, Flowable.empty().hide()).test(0).assert_result().assert_no_violations()
    assert never.cancels == 1
    later = CountingSource(Flowable.never())
    Flowable.zip(Flowable.empty().hide(), later).test(0).assert_result().assert_no_violations()
    # already complete: as RxJava, the later sources are still subscribed and cancelled at once
    assert later.subscriptions == 1
    assert later.cancels == 1
    other = CountingSource(Flowable.range(0, 100).hide())
    ts = Flowable.zip(Flowable.just(1, 2).hide(), other).test()
    ts.assert_result((1, 0), (2, 1)).assert_no_violations()
    assert other.cancels == 1


def test_zip_zipper_returning_none_is_type_error() -> None:
    for a in (Flowable.just(1, 2), Flowable.just(1, 2).hide()):
        Flowable.zip(a, Flowable.just(3, 4), lambda x, y: None).test().assert_error(TypeError).assert_no_violations()


def test_zip_raising_zipper_cancels_all() -> None:
    srcs = [CountingSource(Flowable.range(0, 10).hide()), CountingSource(Flowable.never())]
    ts = Flowable.zip(srcs[0], Flowable.range(0, 10).hide(), lambda a, b: 1 // (a - 2)).test()
    ts.assert_error(ZeroDivisionError).assert_values(-1, -1).assert_no_violations()
    assert srcs[0].cancels == 1
    ts2 = Flowable.zip(Flowable.just(1).hide(), srcs[1], lambda a, b: 1).test()
    ts2.cancel()
    assert srcs[1].cancels == 1


def test_zip_source_error_is_immediate() -> None:
    never = CountingSource(Flowable.never())
    Flowable.zip(never, Flowable.error(Boom())).test().assert_error(Boom).assert_no_violations()
    assert never.cancels == 1


def test_zip_bad_arguments_raise_at_assembly() -> None:
    with pytest.raises(TypeError):
        Flowable.zip(Flowable.just(1), None)
    with pytest.raises(TypeError):
        Flowable.zip(Flowable.just(1), 3)
    with pytest.raises(ValueError):
        Flowable.zip(Flowable.just(1), Flowable.just(1), prefetch=0)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.lists(st.integers(), max_size=10), min_size=1, max_size=4),
    st.lists(st.integers(1, 5), max_size=8),
    st.booleans(),
    st.booleans(),
    st.sampled_from([1, 3, 128]),
)
def test_property_zip_equals_builtin_zip(
    lists: list[list[int]], pattern: list[int], hidden: bool, with_zipper: bool, prefetch: int
) -> None:
    srcs: list[Any] = [Flowable.from_iterable(x) for x in lists]
    if hidden:
        srcs = [s.hide() for s in srcs]
    if with_zipper:
        want: list[Any] = [sum(row) for row in zip(*lists, strict=False)]
        f = Flowable.zip(*srcs, lambda *xs: sum(xs), prefetch=prefetch)
    else:
        want = list(zip(*lists, strict=False))
        f = Flowable.zip(*srcs, prefetch=prefetch)
    ts = run_pattern(f, pattern)
    assert ts.values == want
    ts.assert_complete().assert_no_violations()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_zip_threaded_sources(seed: int) -> None:
    a = ThreadedRange(0, 400, seed=seed)
    b = ThreadedRange(1000, 300, seed=seed + 100)
    ts = Flowable.zip(a, b, prefetch=8).test()
    ts.await_done(10).assert_complete().assert_no_violations()
    assert ts.values == list(zip(range(0, 400), range(1000, 1300), strict=False))


def test_zip_threaded_sources_with_bounded_requests() -> None:
    rnd = random.Random(7)
    ts: TestSubscriber[Any] = TestSubscriber(0)
    Flowable.zip(ThreadedRange(0, 200, seed=1), ThreadedRange(0, 200, seed=2), lambda x, y: x + y, prefetch=4).subscribe(ts)
    deadline = time.monotonic() + 10
    while not ts.is_terminated and time.monotonic() < deadline:
        ts.request(rnd.randint(1, 9))
        time.sleep(0.0005)
    assert ts.values == [2 * i for i in range(200)]
    ts.assert_complete().assert_no_violations()


def test_no_undeliverable_errors_in_normal_runs() -> None:
    with plugins.collect_errors() as errs:
        Flowable.merge(Flowable.range(0, 10).hide(), Flowable.just(1)).test().assert_complete()
        Flowable.zip(Flowable.range(0, 10).hide(), Flowable.just(1)).test().assert_complete()
    assert not errs


class OverEmitter:
    """A rule 1.1 breaking publisher: on the first request it emits ``count`` elements at once."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.cancelled = False

    def subscribe(self, subscriber: Any) -> None:
        outer = self

        class Sub:
            fired = False

            def request(self, n: int) -> None:
                if not self.fired:
                    self.fired = True
                    for i in range(outer.count):
                        if outer.cancelled:
                            return
                        subscriber.on_next(i)

            def cancel(self) -> None:
                outer.cancelled = True

        subscriber.on_subscribe(Sub())


def test_merge_source_over_delivering_is_missing_backpressure() -> None:
    from rstreams import MissingBackpressureError

    bad = OverEmitter(10)
    ts = Flowable.merge(bad, Flowable.never(), prefetch=4).test(0)
    ts.assert_error(MissingBackpressureError).assert_no_violations()
    assert bad.cancelled


def test_zip_source_over_delivering_is_missing_backpressure() -> None:
    from rstreams import MissingBackpressureError

    bad = OverEmitter(10)
    ts = Flowable.zip(bad, Flowable.never(), prefetch=4).test(0)
    ts.assert_error(MissingBackpressureError).assert_no_violations()
    assert bad.cancelled


class CancelAfter(TestSubscriber[Any]):
    """A TestSubscriber that cancels from inside ``on_next`` once it has ``n`` values."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def on_next(self, item: Any) -> None:
        super().on_next(item)
        if len(self.values) == self.n:
            self.cancel()
