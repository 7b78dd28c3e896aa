"""on_error_return, on_error_resume_next, on_error_complete, retry and repeat: scenarios, counts,
predicates, demand carry-over, rules, trampolining (a million resubscriptions) and properties."""

from __future__ import annotations

import os
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from operators.harness import Boom, check_scenarios
from operators.test_merge_zip import CountingSource, ThreadedRange, run_pattern
from rstreams import Flowable, NoneElementError
from rstreams.testing import TestSubscriber

MAX = 2**63 - 1


def failing_after(values: list[int], error: BaseException) -> Flowable[int]:
    return Flowable.concat(Flowable.from_iterable(values), Flowable.error(error))


class Flaky:
    """A source that fails the first ``failures`` subscriptions (after emitting ``prefix``)."""

    def __init__(self, failures: int, prefix: list[int], final: list[int]) -> None:
        self.failures = failures
        self.prefix = prefix
        self.final = final
        self.subscriptions = 0

    def flowable(self) -> Flowable[int]:
        def make() -> Flowable[int]:
            self.subscriptions += 1
            if self.subscriptions <= self.failures:
                return failing_after(self.prefix, Boom(f"attempt {self.subscriptions}")).hide()
            return Flowable.from_iterable(self.final).hide()

        return Flowable.defer(make)


# ---------------------------------------------------------------------------------------------
# on_error_return


def test_on_error_return_scenarios() -> None:
    check_scenarios(
        lambda f: f.on_error_return(lambda e: -1),
        range(6),
        lambda d: d,
        on_error_expected=lambda d: (d + [-1], None),
    )


def test_on_error_return_value_waits_for_demand() -> None:
    ts = failing_after([0, 1, 2], Boom()).on_error_return(lambda e: -1).test(3)
    ts.assert_values(0, 1, 2).assert_not_complete()
    ts.request(1)
    ts.assert_result(0, 1, 2, -1).assert_no_violations()
    ts2 = failing_after([0], Boom()).hide().on_error_return(lambda e: -1).test(0)
    ts2.assert_no_values()
    ts2.request(5)
    ts2.assert_result(0, -1).assert_no_violations()


def test_on_error_return_function_gets_the_error() -> None:
    Flowable.error(Boom("x")).on_error_return(lambda e: str(e)).test().assert_result("x")
    Flowable.error(Boom("x")).on_error_return_item(7).test().assert_result(7)


def test_on_error_return_raising_function_signals_both() -> None:
    ts = Flowable.error(Boom("orig")).on_error_return(lambda e: 1 // 0).test()
    ts.assert_error(ExceptionGroup).assert_no_violations()
    group = ts.errors[0]
    assert isinstance(group, ExceptionGroup)
    assert [type(e) for e in group.exceptions] == [Boom, ZeroDivisionError]


def test_on_error_return_none_is_type_error() -> None:
    Flowable.error(Boom()).on_error_return(lambda e: None).test().assert_error(NoneElementError)


def test_on_error_return_bad_arguments() -> None:
    with pytest.raises(TypeError):
        Flowable.just(1).on_error_return(5)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# on_error_resume_next


def test_on_error_resume_next_with_publisher_scenarios() -> None:
    check_scenarios(
        lambda f: f.on_error_resume_next(Flowable.range(100, 2).hide()),
        range(6),
        lambda d: d,
        on_error_expected=lambda d: (d + [100, 101], None),
    )


def test_on_error_resume_next_with_function_scenarios() -> None:
    check_scenarios(
        lambda f: f.on_error_resume_next(lambda e: Flowable.just(type(e).__name__)),
        range(6),
        lambda d: d,
        on_error_expected=lambda d: (d + ["Boom"], None),
    )


def test_on_error_resume_next_demand_carries_over() -> None:
    ts = failing_after([0, 1], Boom()).on_error_resume_next(Flowable.range(10, 5).hide()).test(4)
    ts.assert_values(0, 1, 10, 11).assert_not_complete()
    ts.request(3)
    ts.assert_result(0, 1, 10, 11, 12, 13, 14).assert_no_violations()


def test_on_error_resume_next_fallback_error_is_signalled() -> None:
    Flowable.error(Boom("a")).on_error_resume_next(Flowable.error(KeyError("b"))).test().assert_error(KeyError)


def test_on_error_resume_next_function_failures() -> None:
    ts = Flowable.error(Boom()).on_error_resume_next(lambda e: 1 // 0).test()
    ts.assert_error(ExceptionGroup).assert_no_violations()
    Flowable.error(Boom()).on_error_resume_next(lambda e: None).test().assert_error(NoneElementError)
    Flowable.error(Boom()).on_error_resume_next(lambda e: 5).test().assert_error(TypeError)


def test_on_error_resume_next_bad_arguments() -> None:
    with pytest.raises(TypeError):
        Flowable.just(1).on_error_resume_next(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Flowable.just(1).on_error_resume_next(5)  # type: ignore[arg-type]


def test_on_error_resume_next_not_subscribed_without_error() -> None:
    fb = CountingSource(Flowable.just(1))
    Flowable.range(0, 3).on_error_resume_next(fb).test().assert_result(0, 1, 2)
    assert fb.subscriptions == 0


# ---------------------------------------------------------------------------------------------
# on_error_complete


def test_on_error_complete_scenarios() -> None:
    check_scenarios(
        lambda f: f.on_error_complete(),
        range(6),
        lambda d: d,
        on_error_expected=lambda d: (d, None),
    )


def test_on_error_complete_predicate() -> None:
    Flowable.error(Boom()).on_error_complete(lambda e: isinstance(e, Boom)).test().assert_result()
    Flowable.error(KeyError()).on_error_complete(lambda e: isinstance(e, Boom)).test().assert_error(KeyError)
    ts = Flowable.error(Boom()).on_error_complete(lambda e: 1 // 0).test()
    ts.assert_error(ExceptionGroup).assert_no_violations()
    with pytest.raises(TypeError):
        Flowable.just(1).on_error_complete(3)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# retry


def test_retry_scenarios() -> None:
    # the harness's error source fails every time: retry(2) runs it three times in all
    check_scenarios(
        lambda f: f.retry(2),
        range(4),
        lambda d: d,
        on_error_expected=lambda d: (d * 3, Boom),
    )


def test_retry_counts() -> None:
    for times, expected_subs in [(0, 1), (1, 2), (3, 4)]:
        flaky = Flaky(10, [1], [9])
        ts = flaky.flowable().retry(times).test()
        ts.assert_error(Boom).assert_no_violations()
        assert flaky.subscriptions == expected_subs
        assert ts.values == [1] * expected_subs


def test_retry_succeeds_after_failures() -> None:
    flaky = Flaky(3, [1], [7, 8])
    flaky.flowable().retry(3).test().assert_result(1, 1, 1, 7, 8).assert_no_violations()
    assert flaky.subscriptions == 4


def test_retry_forever() -> None:
    flaky = Flaky(50, [], [5])
    flaky.flowable().retry().test().assert_result(5).assert_no_violations()
    assert flaky.subscriptions == 51


def test_retry_predicate() -> None:
    flaky = Flaky(10, [], [1])
    ts = flaky.flowable().retry(None, lambda e: "attempt 3" not in str(e)).test()
    ts.assert_error(Boom, match="attempt 3").assert_no_violations()
    assert flaky.subscriptions == 3
    ts2 = Flowable.error(Boom()).retry(5, lambda e: 1 // 0).test()
    ts2.assert_error(ExceptionGroup).assert_no_violations()


def test_retry_demand_carries_over() -> None:
    flaky = Flaky(2, [1, 2], [3, 4, 5])
    ts = flaky.flowable().retry(5).test(5)
    ts.assert_values(1, 2, 1, 2, 3).assert_not_complete()
    ts.request(2)
    ts.assert_result(1, 2, 1, 2, 3, 4, 5).assert_no_violations()


def test_retry_bad_arguments() -> None:
    with pytest.raises(ValueError):
        Flowable.just(1).retry(-1)
    with pytest.raises(TypeError):
        Flowable.just(1).retry(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Flowable.just(1).retry(1, 5)  # type: ignore[arg-type]


def test_retry_cancel_stops_resubscribing() -> None:
    src = CountingSource(failing_after([1, 2, 3], Boom()).hide())
    ts = Flowable.from_publisher(src).retry().test(5)
    ts.assert_values(1, 2, 3, 1, 2)
    ts.cancel()
    assert src.subscriptions == 2
    ts.assert_not_complete().assert_no_errors().assert_no_violations()


def test_retry_100k_synchronous_errors_do_not_recurse() -> None:
    n = 100_000
    subscriptions = [0]
    failing: Flowable[int] = Flowable.error(Boom())
    success = Flowable.just(42)

    def make() -> Flowable[int]:
        subscriptions[0] += 1
        return failing if subscriptions[0] <= n else success

    t0 = time.monotonic()
    Flowable.defer(make).retry(n).test().assert_result(42).assert_no_violations()
    assert subscriptions[0] == n + 1
    assert time.monotonic() - t0 < 60


# ---------------------------------------------------------------------------------------------
# repeat


def test_repeat_scenarios() -> None:
    check_scenarios(lambda f: f.repeat(3), range(4), lambda d: d * 3)


def test_repeat_counts() -> None:
    Flowable.just(1).repeat(3).test().assert_result(1, 1, 1)
    Flowable.just(1).hide().repeat(3).test().assert_result(1, 1, 1).assert_no_violations()
    Flowable.just(1).hide().repeat(1).test().assert_result(1)
    Flowable.just(1).hide().repeat(0).test().assert_result()
    src = CountingSource(Flowable.just(1, 2))
    Flowable.from_publisher(src).repeat(4).test().assert_value_count(8).assert_complete()
    assert src.subscriptions == 4


def test_repeat_forever_with_take() -> None:
    Flowable.just(1, 2).hide().repeat().take(5).test().assert_result(1, 2, 1, 2, 1).assert_no_violations()
    Flowable.just(1, 2).repeat().take(5).test().assert_result(1, 2, 1, 2, 1).assert_no_violations()


def test_repeat_error_stops() -> None:
    src = CountingSource(failing_after([1], Boom()))
    Flowable.from_publisher(src).repeat(5).test().assert_failure(Boom, 1).assert_no_violations()
    assert src.subscriptions == 1


def test_repeat_demand_carries_over() -> None:
    ts = Flowable.range(0, 3).hide().repeat(2).test(4)
    ts.assert_values(0, 1, 2, 0).assert_not_complete()
    ts.request(2)
    ts.assert_result(0, 1, 2, 0, 1, 2).assert_no_violations()


def test_repeat_fuses_finite_counts() -> None:
    f = Flowable.range(0, 3).repeat(2)
    fz = f._fused()
    assert fz is not None and fz.sizer is not None and fz.sizer() == 6
    run_pattern(f, [1, 4]).assert_result(0, 1, 2, 0, 1, 2).assert_no_violations()


def test_repeat_bad_arguments() -> None:
    with pytest.raises(ValueError):
        Flowable.just(1).repeat(-1)
    with pytest.raises(TypeError):
        Flowable.just(1).repeat("3")  # type: ignore[arg-type]


def test_repeat_one_million_fused() -> None:
    Flowable.just(1).repeat(1_000_000).count().test().assert_result(1_000_000).assert_no_violations()
    Flowable.just(1).repeat(1_000_000).skip(999_998).test().assert_result(1, 1).assert_no_violations()


def test_repeat_unfused_100k_resubscriptions_do_not_recurse() -> None:
    n = 100_000
    t0 = time.monotonic()
    Flowable.just(1).hide().repeat(n).count().test().assert_result(n).assert_no_violations()
    assert time.monotonic() - t0 < 60


class _OneSubscription:
    __slots__ = ("subscriber", "done")

    def __init__(self, subscriber: Any) -> None:
        self.subscriber = subscriber
        self.done = False

    def request(self, n: int) -> None:
        if not self.done:
            self.done = True
            self.subscriber.on_next(1)
            self.subscriber.on_complete()

    def cancel(self) -> None:
        self.done = True


class _One(Flowable[int]):
    """A minimal synchronous one-element source (keeps a million resubscriptions cheap)."""

    __slots__ = ()

    def _subscribe_actual(self, subscriber: Any) -> None:
        subscriber.on_subscribe(_OneSubscription(subscriber))


@pytest.mark.stress
@pytest.mark.skipif(not os.environ.get("RSTREAMS_SLOW"), reason="~5-15 s: set RSTREAMS_SLOW=1 (100k runs by default)")
def test_repeat_unfused_one_million_resubscriptions() -> None:
    n = 1_000_000
    _One().repeat(n).count().test().assert_result(n).assert_no_violations()


def test_repeat_unfused_one_by_one_requests() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.just(7).hide().repeat(5_000).subscribe(ts)
    for _ in range(5_000):
        ts.request(1)
    ts.assert_value_count(5_000).assert_complete().assert_no_violations()


def test_repeat_threaded_source() -> None:
    src = ThreadedRange(0, 20, seed=3)
    ts = Flowable.from_publisher(src).repeat(4).test()
    ts.await_done(10).assert_values(*(list(range(20)) * 4)).assert_complete().assert_no_violations()


def test_retry_threaded_source() -> None:
    src = ThreadedRange(0, 10, seed=4, fail=Boom())
    ts = Flowable.from_publisher(src).retry(2).test()
    ts.await_done(10).assert_error(Boom).assert_no_violations()
    assert ts.values == list(range(10)) * 3


# ---------------------------------------------------------------------------------------------
# properties


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(), max_size=6),
    st.integers(0, 4),
    st.lists(st.integers(1, 5), max_size=8),
    st.booleans(),
)
def test_property_repeat_equals_list_times(data: list[int], times: int, pattern: list[int], hidden: bool) -> None:
    src = Flowable.from_iterable(data)
    if hidden:
        src = src.hide()
    ts = run_pattern(src.repeat(times), pattern)
    assert ts.values == data * times
    ts.assert_complete().assert_no_violations()


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(), max_size=5),
    st.integers(0, 5),
    st.integers(0, 5),
    st.lists(st.integers(1, 5), max_size=8),
)
def test_property_retry_model(prefix: list[int], failures: int, times: int, pattern: list[int]) -> None:
    flaky = Flaky(failures, prefix, [99])
    ts = run_pattern(flaky.flowable().retry(times), pattern)
    attempts = min(failures, times + 1)
    if failures <= times:
        assert ts.values == prefix * attempts + [99]
        ts.assert_complete()
    else:
        assert ts.values == prefix * attempts
        ts.assert_error(Boom)
    ts.assert_no_violations()


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(), max_size=6),
    st.lists(st.integers(), max_size=6),
    st.lists(st.integers(1, 5), max_size=8),
    st.booleans(),
)
def test_property_on_error_resume_and_return(
    prefix: list[int], fallback: list[int], pattern: list[int], hidden: bool
) -> None:
    src = failing_after(prefix, Boom())
    if hidden:
        src = src.hide()
    ts = run_pattern(src.on_error_resume_next(Flowable.from_iterable(fallback)), pattern)
    assert ts.values == prefix + fallback
    ts.assert_complete().assert_no_violations()
    ts2 = run_pattern(src.on_error_return(lambda e: -1), pattern)
    assert ts2.values == prefix + [-1]
    ts2.assert_complete().assert_no_violations()
