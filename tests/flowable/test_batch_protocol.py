"""The library-internal batch protocol (``on_next_batch``): under it, signals stay exactly those of
the one-by-one path, no user function runs ahead of a one-by-one operator, and cancellation stops
delivery at once."""

from __future__ import annotations

from typing import Any

import pytest

from operators.harness import Boom
from rstreams import MAX_DEMAND, Flowable, schedulers
from rstreams.testing import TestSubscriber


def _collect(f: Flowable[Any]) -> tuple[list[Any], list[BaseException], list[bool]]:
    values: list[Any] = []
    errors: list[BaseException] = []
    done: list[bool] = []
    f.subscribe(on_next=values.append, on_error=errors.append, on_complete=lambda: done.append(True))
    return values, errors, done


@pytest.mark.parametrize("hidden", [True, False])
def test_mapper_failing_mid_batch_emits_the_prefix_then_the_error(hidden: bool) -> None:
    def f(x: int) -> int:
        if x == 300:
            raise Boom()
        return x

    src = Flowable.range(0, 1000)
    values, errors, done = _collect((src.hide() if hidden else src).map(f))
    assert values == list(range(300)) and len(errors) == 1 and isinstance(errors[0], Boom) and not done


def test_mapper_returning_none_mid_batch_is_a_type_error_after_the_prefix() -> None:
    values, errors, _ = _collect(Flowable.range(0, 1000).hide().map(lambda x: None if x == 70 else x))
    assert values == list(range(70)) and isinstance(errors[0], TypeError) and "map()" in str(errors[0])


def test_predicate_failing_mid_batch() -> None:
    def p(x: int) -> bool:
        if x == 501:
            raise Boom()
        return x % 2 == 0

    values, errors, _ = _collect(Flowable.range(0, 1000).hide().filter(p))
    assert values == list(range(0, 501, 2)) and isinstance(errors[0], Boom)


def test_no_user_function_runs_ahead_of_a_one_by_one_operator() -> None:
    calls: list[int] = []

    def f(x: int) -> int:
        calls.append(x)
        return x

    ts = Flowable.range(0, 10**6).hide().map(f).take_while(lambda x: x < 10).test()
    ts.assert_result(*range(10)).assert_no_violations()
    assert len(calls) == 11


def test_filter_batches_under_bounded_demand_request_replacements() -> None:
    ts = Flowable.range(0, 10_000).hide().filter(lambda x: x % 7 == 0).observe_on(schedulers.single(), prefetch=16).test()
    ts.await_done(10)
    assert ts.values == [x for x in range(10_000) if x % 7 == 0]
    ts.assert_complete().assert_no_violations()


def test_foreign_subscriber_cancelling_mid_batch_gets_nothing_more() -> None:
    class Cancels:
        def __init__(self) -> None:
            self.values: list[int] = []
            self.s: Any = None

        def on_subscribe(self, s: Any) -> None:
            self.s = s
            s.request(MAX_DEMAND)

        def on_next(self, x: int) -> None:
            self.values.append(x)
            if len(self.values) == 3:
                self.s.cancel()

        def on_error(self, e: BaseException) -> None:
            raise AssertionError(e)

        def on_complete(self) -> None:
            raise AssertionError("completed after cancel")

    c = Cancels()
    Flowable.range(0, 10_000).hide().map(lambda x: x + 1).subscribe(c)
    assert c.values == [1, 2, 3]


def test_aggregates_over_batches_match_one_by_one() -> None:
    for f in (Flowable.range(0, 5000).hide(), Flowable.range(0, 5000).hide().map(lambda x: x)):
        f.reduce(lambda a, b: a + b).test().assert_result(sum(range(5000))).assert_no_violations()
        f.count().test().assert_result(5000).assert_no_violations()
        f.to_list().test().assert_result(list(range(5000))).assert_no_violations()
        f.any(lambda x: x == 4000).test().assert_result(True).assert_no_violations()
        ts: TestSubscriber[Any] = TestSubscriber(0)
        f.all(lambda x: x < 4000).subscribe(ts)
        ts.request(1)
        ts.assert_result(False).assert_no_violations()


@pytest.mark.parametrize("prefetch", [1, 7, 128])
def test_observe_on_queues_whole_batches_and_splits_them_at_the_demand_boundary(prefetch: int) -> None:
    # observe_on -> observe_on: the second one takes batches but requests `prefetch` at a time, so
    # queued batches are split where demand ends; then a test subscriber requesting odd amounts.
    ts: TestSubscriber[int] = TestSubscriber(initial_request=0)
    (
        Flowable.range(0, 5000)
        .observe_on(schedulers.single(), prefetch=prefetch)
        .observe_on(schedulers.new_thread(), prefetch=prefetch)
        .map(lambda x: x * 2)
        .subscribe(ts)
    )
    total = 0
    for k in (1, 3, 250, 17, 1000, 3729):
        ts.request(k)
        total += k
        ts.await_count(total, timeout=10)
        assert ts.values == [2 * x for x in range(total)]  # nothing beyond demand, in order
    ts.await_done(10)
    ts.assert_complete()
    assert ts.values == [2 * x for x in range(5000)]
    ts.assert_no_violations()


def test_observe_on_batches_with_an_error_cutting_ahead_or_delayed() -> None:
    def src(n: int = 3000) -> Flowable[int]:
        return Flowable.range(0, n).concat_with(Flowable.error(Boom()))

    delayed: TestSubscriber[int] = TestSubscriber()
    src().observe_on(schedulers.new_thread(), delay_error=True).subscribe(delayed)
    delayed.await_done(10)
    assert delayed.values == list(range(3000))
    delayed.assert_error(Boom)
    delayed.assert_no_violations()

    slow: TestSubscriber[int] = TestSubscriber(initial_request=10)
    # 50 elements and the error fit in the prefetch queue: once the error is queued it cuts ahead
    # of the elements still waiting for demand, so no further request is needed to see it
    src(50).observe_on(schedulers.new_thread()).subscribe(slow)
    slow.await_done(10)
    assert slow.values == list(range(len(slow.values))) and len(slow.values) <= 10
    slow.assert_error(Boom)
    slow.assert_no_violations()


def test_blocking_iterable_takes_batches_within_prefetch_and_flags_an_overflow() -> None:
    from rstreams.errors import MissingBackpressureError
    from rstreams.flowable.operators._blocking import _END, _QueueSubscriber

    class _Sub:
        def __init__(self) -> None:
            self.requested: list[int] = []
            self.cancelled = False

        def request(self, n: int) -> None:
            self.requested.append(n)

        def cancel(self) -> None:
            self.cancelled = True

    q: _QueueSubscriber[int] = _QueueSubscriber(8)
    up = _Sub()
    q.on_subscribe(up)
    assert up.requested == [8]
    q.on_next_batch([0, 1, 2, 3, 4])
    assert [q.poll() for _ in range(5)] == [0, 1, 2, 3, 4]  # 6 consumed: replenished by limit 6 later
    q.on_next_batch([5, 6, 7, 8, 9, 10, 11, 12, 13])  # 9 more where 3 were requested (rule 1.1)
    assert up.cancelled
    got = []
    with pytest.raises(MissingBackpressureError, match="rule 1.1"):
        while (x := q.poll()) is not _END:
            got.append(x)
    assert got == [5, 6, 7]  # what was requested, in order; then the error


def test_blocking_iterable_over_an_async_fused_source_is_exact() -> None:
    n = 50_000
    it = Flowable.range(0, n).subscribe_on(schedulers.single()).blocking_iterable(prefetch=7)
    assert list(it) == list(range(n))


def test_none_free_chains_skip_the_none_scan_and_others_keep_it() -> None:
    """A range cannot yield None, nor can stages that only pass its elements on: their batches
    skip the rule 2.13 scan. A stage running user code (map) or a foreign iterable keeps it."""
    from rstreams.errors import NoneElementError

    r = Flowable.range(0, 10)
    assert r._fusion.none_free  # type: ignore[attr-defined]
    assert r.filter(lambda x: x > 2).take(5)._fusion.none_free  # type: ignore[attr-defined]
    assert not r.map(lambda x: x)._fusion.none_free  # type: ignore[attr-defined]
    assert not Flowable.from_iterable([1, 2])._fusion.none_free  # type: ignore[attr-defined]
    ts: TestSubscriber[Any] = TestSubscriber()
    Flowable.range(0, 300).map(lambda x: None if x == 200 else x).subscribe_on(schedulers.single()).subscribe(ts)
    ts.await_done(5)
    ts.assert_values(*range(200)).assert_error(NoneElementError)
    ts.assert_no_violations()
    ts2: TestSubscriber[Any] = TestSubscriber()
    Flowable.from_iterable([1, 2, None, 4]).subscribe_on(schedulers.single()).subscribe(ts2)
    ts2.await_done(5)
    ts2.assert_values(1, 2).assert_error(NoneElementError)
    ts2.assert_no_violations()
