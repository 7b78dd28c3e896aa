"""The blocking bridges (blocking_first/last/iterable/subscribe) at their edges: empty sources,
timeouts (huge, NaN, interrupted), errors after close, prefetch, tracebacks, no subscription left
behind."""

from __future__ import annotations

import math
import threading
import traceback
import types
from collections.abc import Iterator

import pytest

from rstreams import Flowable, plugins, schedulers
from rstreams.errors import (
    NoSuchElementError,
)
from rstreams.flowable.operators import _blocking
from rstreams.testing import TestPublisher, Violation

WAIT = 5.0


@pytest.fixture(autouse=True)
def _restore_handler() -> Iterator[None]:
    previous = plugins.get_error_handler()
    yield
    plugins.set_error_handler(previous)


# ---------------------------------------------------------------------------------------------
# Blocking bridges


def test_blocking_first_last_empty_default_and_error() -> None:
    for src in (Flowable.empty(), Flowable.empty().hide()):
        with pytest.raises(NoSuchElementError):
            src.blocking_first()
        with pytest.raises(NoSuchElementError):
            src.blocking_last()
        assert src.blocking_first(default=7) == 7
        assert src.blocking_last(default=7) == 7
    err = KeyError("orig")
    with pytest.raises(KeyError) as info:
        Flowable.error(err).hide().blocking_first()
    assert info.value is err


def test_blocking_first_timeout_cancels_the_upstream() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    with pytest.raises(TimeoutError):
        Flowable.from_publisher(tp).blocking_first(timeout=0.05)
    tp.assert_was_cancelled()


@pytest.mark.parametrize("name", ["blocking_first", "blocking_last"])
@pytest.mark.parametrize("timeout", [math.inf, 1e300])
def test_blocking_huge_timeout_means_no_deadline(name: str, timeout: float) -> None:
    """Regression: Event.wait(inf) raised OverflowError (and cancelled the stream)."""
    src = Flowable.just(1).delay(0.01)
    assert getattr(src, name)(timeout=timeout) == 1


@pytest.mark.parametrize("name", ["blocking_first", "blocking_last"])
def test_blocking_nan_timeout_is_refused(name: str) -> None:
    """Regression: timeout=nan was accepted and timed out at once."""
    with pytest.raises(ValueError, match="timeout must be >= 0"):
        getattr(Flowable.just(1).delay(0.01), name)(timeout=math.nan)


def test_blocking_first_interrupted_wait_cancels_and_late_error_goes_to_the_hook(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Regression: after a KeyboardInterrupt in the wait, an upstream error arriving with the cancel
    was stored for a waiter that was gone (lost), not sent to the undeliverable-error hook."""

    class InterruptedEvent(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            raise KeyboardInterrupt

    fake = types.SimpleNamespace(Event=InterruptedEvent, Condition=threading.Condition, Lock=threading.Lock)
    monkeypatch.setattr(_blocking, "threading", fake)
    tp: TestPublisher[int] = TestPublisher.create_noncompliant(Violation.DEFER_CANCELLATION)
    with pytest.raises(KeyboardInterrupt):
        Flowable.from_publisher(tp).blocking_first()
    monkeypatch.undo()
    tp.assert_was_cancelled()
    late = ValueError("in flight")
    with plugins.collect_errors() as errors:
        tp.error(late)
    assert errors == [late]


def test_blocking_iterable_error_after_close_goes_to_the_hook() -> None:
    """Regression: an error in flight while the consumer closed the iterator was dropped."""
    tp: TestPublisher[int] = TestPublisher.create_noncompliant(Violation.DEFER_CANCELLATION)
    it = Flowable.from_publisher(tp).blocking_iterable(4)
    tp_started = threading.Event()

    def produce() -> None:
        tp_started.wait(WAIT)
        tp.next(1)

    t = threading.Thread(target=produce)
    t.start()
    tp_started.set()
    assert next(it) == 1
    t.join(WAIT)
    it.close()
    tp.assert_was_cancelled()
    late = ValueError("in flight")
    with plugins.collect_errors() as errors:
        tp.error(late)
    assert errors == [late]


def test_blocking_iterable_prefetch_and_replenish() -> None:
    requests: list[int] = []
    src = Flowable.range(0, 100).do_on_request(requests.append).hide()
    it = src.blocking_iterable(8)
    assert next(it) == 0
    assert requests == [8]
    for _ in range(6):
        next(it)
    assert requests == [8]  # the batch of 8 is one run: replenished before its last element
    assert next(it) == 7
    assert requests == [8, 8]  # at least limit = 8 - 8 // 4 consumed: what was consumed again
    it.close()


def test_blocking_iterable_context_manager_and_break_cancel() -> None:
    cancels: list[int] = []
    src = Flowable.range(0, 100).do_on_cancel(lambda: cancels.append(1)).hide()
    with src.blocking_iterable(4) as it:
        assert next(it) == 0
    assert cancels == [1]
    for _ in src.blocking_iterable(4):
        break
    assert cancels == [1, 1]


def test_blocking_iterable_close_from_another_thread_wakes_the_consumer() -> None:
    it = Flowable.never().blocking_iterable()
    timer = threading.Timer(0.05, it.close)
    timer.start()
    assert list(it) == []
    timer.join(WAIT)


def test_blocking_subscribe_callback_error_cancels_and_is_raised() -> None:
    tp: TestPublisher[int] = TestPublisher.create()

    def on_next(x: int) -> None:
        raise ValueError("cb")

    def produce() -> None:
        tp.next(1)

    threading.Timer(0.02, produce).start()
    with pytest.raises(ValueError, match="cb"):
        Flowable.from_publisher(tp).blocking_subscribe(on_next)
    tp.assert_was_cancelled()


def _fail_in_worker() -> int:
    raise LookupError("from the worker")


@pytest.mark.parametrize("bridge", ["blocking_first", "blocking_last", "blocking_iterable", "blocking_subscribe"])
def test_blocking_bridges_raise_the_original_error_with_its_traceback(bridge: str) -> None:
    src = Flowable.from_callable(_fail_in_worker).subscribe_on(schedulers.computation())
    with pytest.raises(LookupError) as info:
        if bridge == "blocking_iterable":
            list(src.blocking_iterable())
        else:
            getattr(src, bridge)()
    names = [frame.f_code.co_name for frame, _ in traceback.walk_tb(info.value.__traceback__)]
    assert "_fail_in_worker" in names  # the worker's frames are kept


def test_blocking_iterable_interrupted_wait_cancels_the_upstream(monkeypatch: pytest.MonkeyPatch) -> None:
    parked: list[_blocking._QueueSubscriber[int]] = []

    def interrupted_park(self: _blocking._QueueSubscriber[int], wait_s: float) -> bool:
        parked.append(self)
        raise KeyboardInterrupt  # as a Ctrl-C arriving while the consumer sleeps

    monkeypatch.setattr(_blocking._QueueSubscriber, "_park", interrupted_park)
    tp: TestPublisher[int] = TestPublisher.create()
    it = Flowable.from_publisher(tp).blocking_iterable(4)
    with pytest.raises(KeyboardInterrupt):
        next(it)
    monkeypatch.undo()
    assert len(parked) == 1  # the interrupt came from the wait itself
    tp.assert_was_cancelled()
    sub = parked[0]
    assert not sub._waiting and not sub._wake.acquire(False)  # no flag, no permit left behind
    with pytest.raises(StopIteration):
        next(it)


def test_blocking_first_timeout_leaves_no_subscription_behind() -> None:
    cancels: list[int] = []
    with pytest.raises(TimeoutError):
        Flowable.timer(30.0).do_on_cancel(lambda: cancels.append(1)).blocking_first(timeout=0.05)
    assert cancels == [1]
