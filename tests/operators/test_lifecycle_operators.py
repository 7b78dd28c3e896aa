"""The lifecycle operators (do_on_cancel, do_finally, do_on_subscribe, raising callbacks),
default_if_empty/switch_if_empty demand, element_at, lift and retry backoff arguments, as RxJava 3."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator

import pytest

from rstreams import Flowable, plugins
from rstreams._internal.atomics import AtomicInt
from rstreams.errors import (
    NoneElementError,
    NoSuchElementError,
)
from rstreams.retry import Retry
from rstreams.testing import TestPublisher, TestSubscriber

WAIT = 5.0


@pytest.fixture(autouse=True)
def _restore_handler() -> Iterator[None]:
    previous = plugins.get_error_handler()
    yield
    plugins.set_error_handler(previous)


def _raise(error: BaseException) -> None:
    raise error


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
