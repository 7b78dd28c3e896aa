"""blocking_for_each(fn, prefetch, timeout): the per-element wait bound, cancellation on timeout and
on a raising ``fn``, argument checks, and no thread left behind.

The bridge blocks the test's thread, so a TestSubscriber cannot observe it: a TestPublisher driven
from a helper thread (or ``do_on_cancel``) shows what the upstream saw."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from rstreams import BackpressureStrategy, Flowable, plugins, schedulers
from rstreams.errors import MissingBackpressureError
from rstreams.testing import TestPublisher, Violation

WAIT = 5.0


class Boom(Exception):
    pass


@pytest.fixture(autouse=True)
def _restore_handler() -> Iterator[None]:
    previous = plugins.get_error_handler()
    yield
    plugins.set_error_handler(previous)


def _when_requested(tp: TestPublisher[int], n: int, action: Callable[[], Any]) -> threading.Thread:
    """Run ``action`` on a helper thread once ``tp`` has at least ``n`` outstanding demand (the
    bridge subscribes and requests on the test's thread, inside ``blocking_for_each``)."""

    def run() -> None:
        deadline = time.monotonic() + WAIT
        while tp.requested < n and time.monotonic() < deadline:
            time.sleep(0.001)
        action()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_rule_3_12_timeout_cancels_the_upstream_and_raises() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    got: list[int] = []
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"blocking_for_each\(\): no element within 0.05 s"):
        Flowable.from_publisher(tp).blocking_for_each(got.append, timeout=0.05)
    assert 0.04 <= time.monotonic() - started < WAIT
    tp.assert_was_cancelled()
    assert got == []


def test_elements_then_silence_times_out_after_the_elements() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    got: list[int] = []
    t = _when_requested(tp, 3, lambda: tp.next(1, 2, 3))
    with pytest.raises(TimeoutError):
        Flowable.from_publisher(tp).blocking_for_each(got.append, timeout=0.2)
    t.join(WAIT)
    assert got == [1, 2, 3]
    tp.assert_was_cancelled()


def test_timeout_bounds_each_wait_not_the_whole_stream_nor_fn() -> None:
    """``fn`` takes longer than the timeout per element: the time is not counted; the stream as a
    whole takes several timeouts."""
    got: list[int] = []

    def slow(x: int) -> None:
        time.sleep(0.03)
        got.append(x)

    Flowable.range(0, 8).subscribe_on(schedulers.io()).blocking_for_each(slow, timeout=0.02)
    assert got == list(range(8))


def test_completion_and_error_within_the_timeout_as_usual() -> None:
    got: list[int] = []
    Flowable.range(0, 300).observe_on(schedulers.single()).blocking_for_each(got.append, timeout=WAIT)
    assert got == list(range(300))
    got.clear()
    Flowable.range(0, 300).blocking_for_each(got.append, timeout=0.0)  # fused: runs here, no wait
    assert got == list(range(300))
    with pytest.raises(Boom):
        Flowable.error(Boom("up")).subscribe_on(schedulers.io()).blocking_for_each(got.append, timeout=WAIT)
    got.clear()
    Flowable.empty().hide().blocking_for_each(got.append, timeout=math.inf)
    assert got == []


@pytest.mark.parametrize("timeout", [math.inf, 1e300, None])
def test_huge_or_no_timeout_means_no_deadline(timeout: float | None) -> None:
    got: list[int] = []
    Flowable.just(1).delay(0.01).blocking_for_each(got.append, timeout=timeout)
    assert got == [1]


@pytest.mark.parametrize(
    ("timeout", "error"),
    [(-1, ValueError), (math.nan, ValueError), ("1", TypeError), (True, TypeError), ([1.0], TypeError)],
)
def test_bad_timeout_is_refused_before_subscribing(timeout: Any, error: type[Exception]) -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    with pytest.raises(error, match=r"blocking_for_each\(\): timeout"):
        Flowable.from_publisher(tp).blocking_for_each(print, timeout=timeout)
    tp.assert_was_not_subscribed()


@pytest.mark.parametrize(("prefetch", "error"), [(0, ValueError), (-3, ValueError), (2.0, TypeError)])
def test_bad_prefetch_is_refused_before_subscribing(prefetch: Any, error: type[Exception]) -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    with pytest.raises(error, match=r"blocking_for_each\(\): prefetch"):
        Flowable.from_publisher(tp).blocking_for_each(print, prefetch)
    tp.assert_was_not_subscribed()


def test_bad_fn_is_refused() -> None:
    with pytest.raises(TypeError, match="fn must be callable"):
        Flowable.just(1).blocking_for_each(3, timeout=1)  # type: ignore[arg-type]


def test_raising_fn_cancels_the_upstream_and_reraises() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    got: list[int] = []
    err = Boom("fn")

    def fn(x: int) -> None:
        if x == 2:
            raise err
        got.append(x)

    t = _when_requested(tp, 4, lambda: tp.next(1, 2, 3, 4))
    with pytest.raises(Boom) as info:
        Flowable.from_publisher(tp).blocking_for_each(fn, prefetch=4, timeout=WAIT)
    t.join(WAIT)
    assert info.value is err
    assert got == [1]  # the rest of what was buffered is never handed to fn
    tp.assert_was_cancelled()


def test_raising_fn_mid_batch_over_a_boundary_cancels_there() -> None:
    cancelled = threading.Event()
    got: list[int] = []

    def fn(x: int) -> None:
        if x == 50:
            raise Boom("at 50")
        got.append(x)

    src = Flowable.range(0, 10_000).do_on_cancel(cancelled.set).observe_on(schedulers.single())
    with pytest.raises(Boom, match="at 50"):
        src.blocking_for_each(fn, timeout=WAIT)
    assert got == list(range(50))
    assert cancelled.wait(WAIT)


def test_rule_1_1_prefetch_bounds_the_demand_with_a_timeout() -> None:
    tp: TestPublisher[int] = TestPublisher.create()  # compliant: raises in the producer on overflow
    got: list[int] = []

    def produce() -> None:
        for i in range(20):
            deadline = time.monotonic() + WAIT
            while tp.requested < 1 and time.monotonic() < deadline:
                time.sleep(0.0005)
            tp.next(i)
        tp.complete()

    t = threading.Thread(target=produce, daemon=True)
    t.start()
    Flowable.from_publisher(tp).blocking_for_each(got.append, prefetch=4, timeout=WAIT)
    t.join(WAIT)
    assert got == list(range(20))
    assert tp.request_calls[0] == 4
    assert all(n == 3 for n in tp.request_calls[1:])  # prefetch - prefetch // 4


def test_rule_1_1_overflow_is_named_after_the_bridge() -> None:
    cancels: list[bool] = []

    def push(e: Any) -> None:
        e.set_cancellable(lambda: cancels.append(True))
        for i in range(10):
            e.on_next(i)  # ignores the demand of 4

    src = Flowable.create(push, BackpressureStrategy.MISSING)
    with pytest.raises(MissingBackpressureError, match=r"blocking_for_each\(prefetch=4\)"):
        src.blocking_for_each(print, prefetch=4, timeout=WAIT)
    assert cancels == [True]


def test_rule_2_13_error_after_the_timeout_goes_to_the_hook() -> None:
    """An error in flight when the wait timed out is not stored for a consumer that is gone."""
    tp: TestPublisher[int] = TestPublisher.create_noncompliant(Violation.DEFER_CANCELLATION)
    with pytest.raises(TimeoutError):
        Flowable.from_publisher(tp).blocking_for_each(print, timeout=0.02)
    tp.assert_was_cancelled()
    late = ValueError("in flight")
    with plugins.collect_errors() as errors:
        tp.error(late)
    assert errors == [late]


def test_no_thread_left_behind_after_a_timeout_or_a_raising_fn() -> None:
    before = set(threading.enumerate())
    tp: TestPublisher[int] = TestPublisher.create()
    with pytest.raises(TimeoutError):
        Flowable.from_publisher(tp).blocking_for_each(print, timeout=0.02)
    tp2: TestPublisher[int] = TestPublisher.create()
    t = _when_requested(tp2, 1, lambda: tp2.next(1))
    with pytest.raises(Boom):
        Flowable.from_publisher(tp2).blocking_for_each(lambda x: (_ for _ in ()).throw(Boom()), timeout=WAIT)
    t.join(WAIT)
    assert not t.is_alive()
    assert set(threading.enumerate()) == before  # the bridge waits on the calling thread only
    tp.assert_was_cancelled()
    tp2.assert_was_cancelled()
    assert not tp.has_subscribers and not tp2.has_subscribers


def test_close_from_another_thread_stops_a_waiting_for_each() -> None:
    """blocking_subscribe's iterator path with a timeout: a cancel from elsewhere ends the wait
    without a TimeoutError."""
    tp: TestPublisher[int] = TestPublisher.create()
    got: list[int] = []
    it = Flowable.from_publisher(tp).blocking_iterable(4, timeout=WAIT)
    threading.Timer(0.05, it.close).start()
    started = time.monotonic()
    it.for_each(got.append)
    assert time.monotonic() - started < WAIT
    tp.assert_was_cancelled()
    assert got == []


# ---------------------------------------------------------------------------------------------
# blocking_iterable's generator (the loop blocking_for_each shares its accounting with) yields
# what is buffered as runs: the same requests, and a break in the middle of a run stops there


def test_rule_1_1_iterator_runs_request_as_one_by_one() -> None:
    requests: list[int] = []
    cancels: list[bool] = []
    src = Flowable.range(0, 1000).hide().do_on_request(requests.append).do_on_cancel(lambda: cancels.append(True))
    assert list(src.blocking_iterable(8)) == list(range(1000))
    assert requests[0] == 8 and set(requests[1:]) == {6}  # prefetch, then limit = 8 - 8 // 4
    assert sum(requests) >= 1000 and not cancels
    got: list[int] = []
    for x in src.blocking_iterable(8):
        got.append(x)
        if x == 4:  # in the middle of the first run
            break
    assert got == [0, 1, 2, 3, 4] and cancels == [True]
