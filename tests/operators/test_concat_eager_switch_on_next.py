"""concat_eager and switch_on_next: scenarios, eager subscription with bounded prefetch, order,
switching, errors (immediate and delayed), threaded sources, rules and bad arguments."""

from __future__ import annotations

from typing import Any

import pytest

from operators.harness import Boom, check_scenarios, run_one_by_one
from operators.test_merge_zip import ThreadedRange
from rstreams import Flowable, NoneElementError
from rstreams.testing import TestPublisher, TestSubscriber

# ---------------------------------------------------------------------------------------------
# concat_eager


def test_concat_eager_scenarios() -> None:
    check_scenarios(
        lambda f: Flowable.concat_eager(f, Flowable.range(100, 3).hide(), Flowable.just(7)),
        range(8),
        lambda d: list(d) + [100, 101, 102, 7],
    )


def test_concat_eager_subscribes_to_all_and_emits_in_order() -> None:
    tp1: TestPublisher[int] = TestPublisher.create()
    tp2: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.concat_eager(tp1, tp2).test()
    tp1.assert_was_subscribed()
    tp2.assert_was_subscribed()
    tp2.emit(20, 21)
    ts.assert_no_values()
    tp1.next(10)
    ts.assert_values(10)
    tp1.complete()
    ts.assert_result(10, 20, 21).assert_no_violations()


def test_concat_eager_prefetch_bounds_each_source() -> None:
    tp1: TestPublisher[int] = TestPublisher.create()
    tp2: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.concat_eager(tp1, tp2, prefetch=4).subscribe(ts)
    tp1.assert_max_requested(4)
    tp2.assert_max_requested(4)
    tp2.next(1, 2, 3, 4)
    ts.request(1)
    ts.assert_no_values()
    tp1.next(0)
    ts.assert_values(0)
    tp1.complete()
    ts.request(10)
    ts.assert_values(0, 1, 2, 3, 4).assert_not_terminated()
    assert tp2.request_calls[0] == 4 and sum(tp2.request_calls) > 4  # replenished once consumed
    tp2.complete()
    ts.assert_complete().assert_no_violations()


def test_concat_eager_max_concurrency_one_is_concat() -> None:
    tp1: TestPublisher[int] = TestPublisher.create()
    tp2: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.concat_eager(tp1, tp2, max_concurrency=1).test()
    tp2.assert_was_not_subscribed()
    tp1.emit(1)
    tp2.assert_was_subscribed()
    tp2.emit(2)
    ts.assert_result(1, 2).assert_no_violations()


def test_concat_eager_error_is_immediate_and_cancels_the_others() -> None:
    tp1: TestPublisher[int] = TestPublisher.create()
    tp2: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.concat_eager(tp1, tp2).test()
    tp1.next(1)
    tp2.error(Boom())
    ts.assert_values(1).assert_error(Boom).assert_no_violations()
    tp1.assert_was_cancelled()


def test_concat_eager_iterable_empty_and_single() -> None:
    Flowable.concat_eager([Flowable.just(1), Flowable.just(2).hide()]).test().assert_result(1, 2).assert_no_violations()
    Flowable.concat_eager().test().assert_result().assert_no_violations()
    one = Flowable.just(3)
    assert Flowable.concat_eager(one) is one


def test_concat_eager_one_by_one_with_threaded_sources_keeps_order() -> None:
    sources: list[Any] = [ThreadedRange(i * 10, 5, seed=i, jitter=0.001) for i in range(6)]
    ts = run_one_by_one(Flowable.concat_eager(*sources, prefetch=2))
    ts.await_done(10)
    assert ts.values == [i * 10 + k for i in range(6) for k in range(5)]
    ts.assert_complete().assert_no_violations()


def test_concat_eager_bad_arguments() -> None:
    with pytest.raises(TypeError, match="expected a Publisher"):
        Flowable.concat_eager(Flowable.just(1), 2)  # type: ignore[arg-type]
    with pytest.raises(NoneElementError):
        Flowable.concat_eager(Flowable.just(1), None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="prefetch must be > 0"):
        Flowable.concat_eager(Flowable.just(1), prefetch=0)
    with pytest.raises(ValueError, match="max_concurrency must be > 0"):
        Flowable.concat_eager(Flowable.just(1), max_concurrency=0)
    with pytest.raises(TypeError, match="max_concurrency must be an int"):
        Flowable.concat_eager(Flowable.just(1), max_concurrency=1.0)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# switch_on_next


def test_switch_on_next_fused_and_hidden_outer() -> None:
    for outer in (Flowable.just(Flowable.just(1, 2), Flowable.range(3, 2).hide()), Flowable.just(Flowable.just(1, 2), Flowable.range(3, 2).hide()).hide()):
        Flowable.switch_on_next(outer).test().assert_result(1, 2, 3, 4).assert_no_violations()


def test_switch_on_next_a_new_inner_cancels_the_previous() -> None:
    outer: TestPublisher[Any] = TestPublisher.create()
    a: TestPublisher[int] = TestPublisher.create()
    b: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.switch_on_next(outer).test()
    outer.next(a)
    a.next(1)
    outer.next(b)
    a.assert_was_cancelled()
    b.next(2)
    outer.complete()
    ts.assert_values(1, 2).assert_not_terminated()
    b.complete()
    ts.assert_result(1, 2).assert_no_violations()


def test_switch_on_next_backpressure_one_at_a_time_and_prefetch() -> None:
    inner: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.switch_on_next(Flowable.just(inner), prefetch=3).subscribe(ts)
    inner.assert_max_requested(3)
    inner.next(1, 2, 3)
    ts.assert_no_values()
    ts.request(1)
    ts.assert_values(1)
    ts.request(2)
    inner.complete()
    ts.assert_result(1, 2, 3).assert_no_violations()


def test_switch_on_next_error_is_immediate() -> None:
    outer: TestPublisher[Any] = TestPublisher.create()
    a: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.switch_on_next(outer).test()
    outer.next(a)
    outer.error(Boom())
    a.assert_was_cancelled()
    ts.assert_error(Boom).assert_no_violations()


def test_switch_on_next_delay_error_waits_for_the_last_inner() -> None:
    outer: TestPublisher[Any] = TestPublisher.create()
    a: TestPublisher[int] = TestPublisher.create()
    ts = Flowable.switch_on_next(outer, delay_error=True).test()
    outer.next(Flowable.error(Boom("inner")), a)
    outer.error(Boom("outer"))
    a.emit(5)
    ts.assert_values(5).assert_no_violations()
    err = ts.errors[0]
    assert isinstance(err, ExceptionGroup) and [str(e) for e in err.exceptions] == ["inner", "outer"]


def test_switch_on_next_inner_not_a_publisher_fails() -> None:
    ts = Flowable.switch_on_next(Flowable.just(1)).test()  # type: ignore[arg-type]
    ts.assert_error(TypeError).assert_no_violations()


def test_switch_on_next_bad_arguments() -> None:
    with pytest.raises(TypeError, match="expected a Publisher"):
        Flowable.switch_on_next([Flowable.just(1)])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="prefetch"):
        Flowable.switch_on_next(Flowable.just(Flowable.just(1)), prefetch=0)
    with pytest.raises(TypeError, match="delay_error must be a bool"):
        Flowable.switch_on_next(Flowable.just(Flowable.just(1)), delay_error=1)  # type: ignore[arg-type]
