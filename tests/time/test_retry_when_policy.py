"""retry_when, repeat_when and the declarative policies of rstreams.retry (virtual time)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams import Flowable
from rstreams.retry import Retry, RetryExhaustedError, RetrySignal
from rstreams.testing import TestScheduler, TestSubscriber
from spec._helpers import _failing

# -- retry_when ---------------------------------------------------------------------------------


def test_retry_when_resubscribes_per_handler_element() -> None:
    n = [0]
    sub = _failing(2, [7], n).retry_when(lambda errors: errors.map(lambda e: 1)).test()
    sub.assert_result(7).assert_no_violations()
    assert n[0] == 3


def test_retry_when_handler_completion_completes() -> None:
    n = [0]
    sub = _failing(5, [7], n).retry_when(lambda errors: errors.take(2)).test()
    sub.assert_result().assert_no_violations()


def test_retry_when_handler_error_fails() -> None:
    n = [0]
    sub = (
        _failing(5, [7], n)
        .retry_when(lambda errors: errors.flat_map(lambda e: Flowable.error(KeyError("stop"))))
        .test()
    )
    sub.assert_error(KeyError).assert_no_violations()


def test_retry_when_handler_raising_or_none() -> None:
    def boom(errors: Any) -> Any:
        raise ZeroDivisionError

    Flowable.just(1).retry_when(boom).test().assert_error(ZeroDivisionError).assert_no_violations()
    Flowable.just(1).retry_when(lambda e: None).test().assert_error(
        TypeError, match="retry_when"
    ).assert_no_violations()  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError):
        Flowable.just(1).retry_when(3)  # type: ignore[arg-type]


def test_retry_when_trampolines_synchronous_resubscription() -> None:
    n = [0]
    sub = _failing(5000, [1], n).retry_when(lambda e: e).test()
    sub.assert_result(1).assert_no_violations()  # no RecursionError


# -- repeat_when --------------------------------------------------------------------------------


def test_repeat_when_counts_completions() -> None:
    seen: list[int] = []
    sub = (
        Flowable.just(1)
        .repeat_when(lambda done: done.do_on_next(seen.append).take_while(lambda k: k < 3))
        .test()
    )
    sub.assert_result(1, 1, 1).assert_no_violations()
    assert seen == [1, 2, 3]


def test_repeat_when_with_delay() -> None:
    ts = TestScheduler()
    sub = (
        Flowable.just("x")
        .repeat_when(lambda done: done.take(2).concat_map(lambda k: Flowable.timer(1, ts)))
        .test()
    )
    sub.assert_values("x")
    ts.advance_by(1)
    sub.assert_values("x", "x")
    ts.advance_by(1)
    sub.assert_result("x", "x", "x").assert_no_violations()


def test_repeat_when_errors_pass_through() -> None:
    sub = Flowable.error(KeyError("k")).repeat_when(lambda d: d).test()
    sub.assert_error(KeyError).assert_no_violations()


# -- policies -----------------------------------------------------------------------------------


def test_retry_max_succeeds_within_attempts() -> None:
    n = [0]
    _failing(3, [5], n).retry_policy(Retry.max(3)).test().assert_result(5).assert_no_violations()
    assert n[0] == 4


def test_retry_max_exhausted_carries_last_error() -> None:
    n = [0]
    sub = _failing(10, [5], n).retry_policy(Retry.max(2)).test()
    sub.assert_error(RetryExhaustedError, match="2/2").assert_no_violations()
    err = sub.errors[0]
    assert isinstance(err.__cause__, OSError) and str(err.__cause__) == "#3"
    assert n[0] == 3


def test_retry_policy_filter() -> None:
    n = [0]
    sub = _failing(3, [5], n).retry_policy(Retry.max(5).filter(lambda e: isinstance(e, KeyError))).test()
    sub.assert_error(OSError).assert_no_violations()
    assert n[0] == 1


def test_retry_policy_on_retry_exhausted() -> None:
    n = [0]
    sub = (
        _failing(10, [5], n)
        .retry_policy(
            Retry.max(1).on_retry_exhausted(
                lambda s: ValueError(f"gave up after {s.total_retries}: {s.failure}")
            )
        )
        .test()
    )
    sub.assert_error(ValueError, match="gave up after 1: #2").assert_no_violations()


def test_retry_backoff_delays_on_virtual_time() -> None:
    ts = TestScheduler()
    n = [0]
    times: list[float] = []

    def make() -> Flowable[int]:
        times.append(ts.now())
        n[0] += 1
        return Flowable.error(OSError("down")) if n[0] <= 3 else Flowable.just(1)

    sub = Flowable.defer(make).retry_policy(Retry.backoff(5, 1.0, jitter=0).with_scheduler(ts)).test()
    ts.advance_by(100)
    sub.assert_result(1).assert_no_violations()
    assert times == [0.0, 1.0, 3.0, 7.0]


def test_retry_backoff_respects_max_backoff_and_exhausts() -> None:
    ts = TestScheduler()
    sub = (
        Flowable.error(OSError("down"))
        .retry_policy(Retry.backoff(3, 1.0, max_backoff=1.5, jitter=0).with_scheduler(ts))
        .test()
    )
    ts.advance_by(1 + 1.5 + 1.5 - 0.01)
    sub.assert_no_errors()
    ts.advance_by(0.01)
    sub.assert_error(RetryExhaustedError).assert_no_violations()
    assert ts.pending == 0


def test_retry_policy_counts_per_subscription() -> None:
    policy = Retry.max(1)
    n = [0]
    f = _failing(100, [1], n).retry_policy(policy)
    f.test().assert_error(RetryExhaustedError).assert_no_violations()
    f.test().assert_error(RetryExhaustedError).assert_no_violations()
    assert n[0] == 4  # two subscriptions, each one retry


def test_retry_policy_does_not_retry_base_exceptions() -> None:
    class Stop(BaseException):
        pass

    n = [0]

    def make() -> Flowable[int]:
        n[0] += 1
        return Flowable.error(Stop())

    Flowable.defer(make).retry_policy(Retry.max(5)).test().assert_error(Stop).assert_no_violations()
    assert n[0] == 1


def test_retry_spec_is_immutable_and_validates() -> None:
    base = Retry.max(3)
    filtered = base.filter(lambda e: True)
    assert base is not filtered and base.predicate is not filtered.predicate
    with pytest.raises(ValueError):
        Retry.max(-1)
    with pytest.raises(TypeError):
        Retry.max(1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Retry.backoff(3, 2.0, max_backoff=1.0)
    with pytest.raises(ValueError):
        Retry.backoff(3, 1.0, jitter=2)
    with pytest.raises(TypeError):
        Retry.max(1).with_scheduler("x")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Retry.max(1).filter(3)  # type: ignore[arg-type]
    assert RetrySignal(1, KeyError()).total_retries == 1


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 8), st.floats(0.01, 2), st.floats(0, 1), st.integers(0, 2**32))
def test_property_backoff_delays_within_bounds(k: int, lo: float, jitter: float, seed: int) -> None:
    spec = Retry.backoff(10, lo, max_backoff=lo * 10, jitter=jitter).with_random(random.Random(seed))
    d = spec.delay_for(k)
    base = min(lo * 2 ** (k - 1), lo * 10)
    assert lo - 1e-9 <= d <= lo * 10 + 1e-9
    assert base * (1 - jitter) - 1e-9 <= d <= base * (1 + jitter) + 1e-9


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 6), st.integers(0, 6), st.lists(st.integers(1, 4), min_size=1, max_size=10))
def test_property_retry_max_model(failures: int, attempts: int, reqs: list[int]) -> None:
    n = [0]
    sub: TestSubscriber[int] = TestSubscriber(0)
    _failing(failures, [1, 2, 3], n, values_before=[0]).retry_policy(Retry.max(attempts)).subscribe(sub)
    for i in range(100):
        if sub.completions or sub.errors:
            break
        sub.request(reqs[i % len(reqs)])
    subs = min(failures, attempts) + 1
    if failures <= attempts:
        assert sub.values == [0] * failures + [1, 2, 3]
        sub.assert_complete()
    else:
        assert sub.values == [0] * subs
        sub.assert_error(RetryExhaustedError)
    assert n[0] == subs
    sub.assert_no_violations()
