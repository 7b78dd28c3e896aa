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

from rstreams import Flowable, plugins, schedulers
from rstreams.testing import TestPublisher

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
    assert not set(threading.enumerate()) - before  # the bridge waits on the calling thread only
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
