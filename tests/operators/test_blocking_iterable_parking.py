"""blocking_iterable's parking: the consumer sleeps on a raw lock used as a one-permit semaphore.

The protocol under test: the consumer raises ``_waiting`` under ``_lock`` before it re-checks the
queue, the done and the cancelled flags there; a waker (an element, a batch, a terminal signal,
a cancel) releases the permit only when it lowers the flag under ``_lock``. So no wake-up is lost
in either window (an element queued just before the flag is raised, or between the flag and the
park), there is never more than one permit, and every way out of the wait (woken, timed out,
interrupted) leaves the flag down and no permit behind. These tests force each window
deterministically by wrapping ``_wait`` and ``_park``, and check the permit after each run; they
also check the run delegation: ``close()`` from the loop body or from another thread stops the
loop inside a run. The API is an iterator, so the tests iterate it directly (no TestSubscriber)
and end with checks of the publisher's requests and cancellation.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from rstreams import Flowable, plugins
from rstreams.flowable.operators import _blocking
from rstreams.testing import TestPublisher

WAIT = 5.0

QS = _blocking._QueueSubscriber


def _started(prefetch: int = 4, timeout: float | None = None) -> tuple[TestPublisher[int], Any, Any]:
    tp: TestPublisher[int] = TestPublisher.create()
    it = Flowable.from_publisher(tp).blocking_iterable(prefetch, timeout=timeout)
    it._start()  # subscribes: the queue subscriber exists, nothing is consumed yet
    sub = it._sub
    assert sub is not None and tp.request_calls == [prefetch]
    return tp, it, sub


def _assert_settled(sub: Any) -> None:
    """No flag raised and no permit left: the next wait starts clean."""
    assert not sub._waiting
    assert not sub._wake.acquire(False)


@pytest.fixture(params=[False, True], ids=["gil-wake", "locked-wake"])
def locked_wake(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """``locked-wake`` runs the wakers as on a build without the GIL (the flag read under the lock)."""
    monkeypatch.setattr(_blocking, "_LOCKED_WAKE", request.param)
    return bool(request.param)


def _wrap(monkeypatch: pytest.MonkeyPatch, name: str, before: Callable[[], object]) -> list[int]:
    """Run ``before`` once, on the consumer's thread, at the start of ``_QueueSubscriber.<name>``."""
    original = getattr(QS, name)
    calls: list[int] = []

    def wrapped(self: Any, *args: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            before()
        return original(self, *args)

    monkeypatch.setattr(QS, name, wrapped)
    return calls


# ----------------------------------------------------------------------------------------------
# the two lost-wake-up windows


def test_an_element_queued_just_before_the_flag_is_raised_is_taken_without_parking(
    monkeypatch: pytest.MonkeyPatch, locked_wake: bool
) -> None:
    tp, it, sub = _started()
    waits = _wrap(monkeypatch, "_wait", lambda: tp.next(7))  # after next_run saw an empty queue
    parks = _wrap(monkeypatch, "_park", lambda: None)
    assert next(it) == 7
    assert waits == [1] and parks == []  # the re-check under the lock found it: no sleep
    _assert_settled(sub)
    tp.next(8).complete()
    assert list(it) == [8]
    assert tp.request_calls == [4] and not tp.was_cancelled


def test_an_element_queued_between_the_flag_and_the_park_releases_the_permit(
    monkeypatch: pytest.MonkeyPatch, locked_wake: bool
) -> None:
    tp, it, sub = _started()

    def emit_while_flag_raised() -> None:
        assert sub._waiting
        tp.next(7)  # the producer sees the flag raised: it lowers it and releases the permit
        assert not sub._waiting

    parks = _wrap(monkeypatch, "_park", emit_while_flag_raised)
    assert next(it) == 7  # the park takes the permit at once
    assert parks == [1]
    _assert_settled(sub)
    tp.complete()
    assert list(it) == []
    assert tp.request_calls == [4] and not tp.was_cancelled


@pytest.mark.parametrize("signal", ["complete", "error", "cancel"])
def test_a_terminal_signal_or_a_cancel_while_parking_wakes_the_consumer(
    signal: str, monkeypatch: pytest.MonkeyPatch, locked_wake: bool
) -> None:
    tp, it, sub = _started()

    def terminate() -> None:
        if signal == "complete":
            tp.complete()
        elif signal == "error":
            tp.error(ValueError("boom"))
        else:
            sub.cancel()  # as close() from another thread does

    _wrap(monkeypatch, "_park", terminate)
    if signal == "error":
        with pytest.raises(ValueError, match="boom"):
            next(it)
    else:
        with pytest.raises(StopIteration):
            next(it)
    _assert_settled(sub)
    assert tp.request_calls == [4]
    assert tp.was_cancelled == (signal == "cancel")


def test_an_interrupt_after_a_permit_was_released_leaves_no_permit_and_cancels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A KeyboardInterrupt that lands right after a producer released the permit: the permit is
    taken back (a later wait would otherwise return at once with nothing), the upstream is
    cancelled, and the element that came is dropped with the buffer (rule 3.13)."""
    tp, it, sub = _started()

    def emit_then_interrupt(self: Any, wait_s: float) -> bool:
        tp.next(7)
        raise KeyboardInterrupt

    monkeypatch.setattr(QS, "_park", emit_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        next(it)
    monkeypatch.undo()
    _assert_settled(sub)
    tp.assert_was_cancelled()
    with pytest.raises(StopIteration):
        next(it)


def test_the_backstop_slice_finds_an_element_whose_wake_up_was_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    """Should a wake-up ever be lost, the slice ends the park and the re-check takes the element."""
    monkeypatch.setattr(_blocking, "_WAIT_SLICE", 0.01)
    tp, it, sub = _started()

    def queue_silently() -> None:
        sub._in += 1
        sub._queue.append(7)  # no wake-up

    parks = _wrap(monkeypatch, "_park", queue_silently)
    assert next(it) == 7
    assert parks == [1]  # the park ran out after one slice; the re-check under the lock found it
    _assert_settled(sub)
    tp.complete()
    assert list(it) == []


# ----------------------------------------------------------------------------------------------
# timeouts: the permit after a timed-out wait


def test_a_timed_out_wait_leaves_no_permit_and_cancels() -> None:
    tp, it, sub = _started(timeout=0.02)
    with pytest.raises(TimeoutError, match="no element within"):
        next(it)
    _assert_settled(sub)
    tp.assert_was_cancelled()
    assert tp.request_calls == [4]


def test_an_element_racing_the_deadline_is_taken_instead_of_timing_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The park times out, but an element arrived meanwhile (its waker lowered the flag and released
    the permit): the permit is taken back and the element is returned, no TimeoutError."""
    tp, it, sub = _started(timeout=0.02)

    def emit_then_time_out(self: Any, wait_s: float) -> bool:
        tp.next(7)
        return False  # as if the deadline had passed first

    monkeypatch.setattr(QS, "_park", emit_then_time_out)
    assert next(it) == 7
    monkeypatch.undo()
    _assert_settled(sub)
    assert not tp.was_cancelled
    tp.complete()
    assert list(it) == []


# ----------------------------------------------------------------------------------------------
# many parks in a row, from a real producer thread


@pytest.mark.parametrize("prefetch", [1, 2, 16])
def test_a_producer_thread_emitting_one_by_one_never_strands_the_consumer(
    prefetch: int, locked_wake: bool
) -> None:
    """Each element emitted on another thread while the consumer tends to be parked: every wake-up
    arrives (a lost one would show as a half-second stall per element: the test would time out),
    and the permit is settled at the end."""
    n = 300
    tp: TestPublisher[int] = TestPublisher.create()
    it = Flowable.from_publisher(tp).blocking_iterable(prefetch, timeout=WAIT)
    failures: list[BaseException] = []

    def produce() -> None:
        try:
            i = 0
            while i < n:
                if tp.requested > 0:
                    tp.next(i)
                    i += 1
                else:
                    threading.Event().wait(0.0001)
            tp.complete()
        except BaseException as e:  # noqa: BLE001 - reported below
            failures.append(e)

    t = threading.Thread(target=produce, daemon=True)
    t.start()
    out = list(it)
    t.join(WAIT)
    assert not failures, failures
    assert out == list(range(n))
    assert sum(tp.request_calls) - n <= prefetch  # rule 1.1: asked only for what was made room for
    assert not tp.was_cancelled


# ----------------------------------------------------------------------------------------------
# run delegation: close() inside a run


class _BatchPublisher(Flowable[int]):
    """Emits whole batches through on_next_batch when told to; records requests and cancel."""

    def __init__(self) -> None:
        self.requests: list[int] = []
        self.cancelled = False
        self.sub: Any = None

    def _subscribe_actual(self, subscriber: Any) -> None:
        src = self

        class _Subscription:
            def request(self, n: int) -> None:
                src.requests.append(n)

            def cancel(self) -> None:
                src.cancelled = True

        self.sub = subscriber
        subscriber.on_subscribe(_Subscription())


def test_close_from_another_thread_empties_the_current_run() -> None:
    src = _BatchPublisher()
    it = src.blocking_iterable(16)
    gen: Iterator[int] = iter(it)
    it._start()
    src.sub.on_next_batch(list(range(10)))
    got = [next(gen), next(gen)]  # the generator now delegates to the run's list iterator
    t = threading.Thread(target=it.close)
    t.start()
    t.join(WAIT)
    got.extend(gen)  # nothing more: the run was emptied, then the generator saw the close
    assert got == [0, 1]
    assert src.cancelled and src.requests == [16]


def test_a_batch_list_is_left_whole_by_close() -> None:
    """close() empties the run's iterator, never the list the producer handed over."""
    src = _BatchPublisher()
    it = src.blocking_iterable(16)
    gen: Iterator[int] = iter(it)
    it._start()
    batch = list(range(10))
    src.sub.on_next_batch(batch)
    assert next(gen) == 0
    it.close()
    assert list(gen) == []
    assert batch == list(range(10))
    assert src.cancelled and src.requests == [16]


def test_an_error_after_close_still_goes_to_the_hook() -> None:
    src = _BatchPublisher()
    it = src.blocking_iterable(4)
    gen: Iterator[int] = iter(it)
    it._start()
    src.sub.on_next_batch([0, 1])
    assert next(gen) == 0
    it.close()
    late = ValueError("in flight")
    with plugins.collect_errors() as errors:
        src.sub.on_error(late)
    assert errors == [late]
    assert list(gen) == [] and src.cancelled
