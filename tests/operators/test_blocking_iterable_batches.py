"""blocking_iterable, blocking_for_each and blocking_subscribe over batches (``on_next_batch``).

A batch is queued as one entry and handed to the consuming thread as a run: a list served without
a lock or an accounting per element, never cut. These tests pin what must not change with that:
the requests (``prefetch`` upfront, then, once the runs consumed hold at least ``limit = prefetch -
prefetch // 4``, what they hold; single elements one by one: ``limit`` each time; never more than
``prefetch`` outstanding: rule 1.1), the place of the replenish after a batch, a cancel in the middle of a batch (break, close, garbage collection), an error after a
partial batch, the per-element timeout between batches, and batches mixed with single elements.
The API is an iterator, so these tests iterate it directly (no TestSubscriber); each ends with
checks of the source's requests.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from rstreams import Flowable, schedulers
from rstreams.errors import MissingBackpressureError
from rstreams.flowable.operators import _blocking
from rstreams.testing import TestPublisher

WAIT = 5.0


class Boom(Exception):
    pass


class _BatchSource(Flowable[int]):
    """A hand-driven source that emits batches (``on_next_batch``) or single elements, records every
    request and refuses to emit beyond the outstanding demand (rule 1.1, as a compliant TestPublisher
    does). One subscriber at a time."""

    def __init__(self) -> None:
        self.requests: list[int] = []
        self.demand = 0
        self.cancelled = False
        self.sub: Any = None
        self.lock = threading.Lock()
        self.requested_event = threading.Event()

    def _subscribe_actual(self, subscriber: Any) -> None:
        src = self

        class _Subscription:
            def request(self, n: int) -> None:
                with src.lock:
                    src.requests.append(n)
                    src.demand += n
                src.requested_event.set()

            def cancel(self) -> None:
                src.cancelled = True

        self.sub = subscriber
        subscriber.on_subscribe(_Subscription())

    def emit_batch(self, items: list[int]) -> _BatchSource:
        with self.lock:
            assert len(items) <= self.demand, f"rule 1.1: {len(items)} emitted, {self.demand} requested"
            self.demand -= len(items)
        assert hasattr(self.sub, "on_next_batch"), "the bridge takes batches"
        self.sub.on_next_batch(items)
        return self

    def emit(self, *items: int) -> _BatchSource:
        for x in items:
            with self.lock:
                assert self.demand > 0, "rule 1.1"
                self.demand -= 1
            self.sub.on_next(x)
        return self

    def finish(self) -> None:
        self.sub.on_complete()

    def fail(self, e: BaseException) -> None:
        self.sub.on_error(e)


# ----------------------------------------------------------------------------------------------
# batch boundaries and the requests


def test_a_batch_is_served_in_order_and_the_replenish_goes_out_once_it_was_consumed_generator() -> None:
    src = _BatchSource()
    gen = iter(src.blocking_iterable(8))  # limit 6
    got: list[int] = []

    def produce() -> None:
        src.requested_event.wait(WAIT)
        src.emit_batch(list(range(8)))

    t = threading.Thread(target=produce)
    t.start()
    got.append(next(gen))  # subscribes, waits for the batch
    t.join(WAIT)
    for _ in range(7):
        got.append(next(gen))
    assert got == list(range(8))
    assert src.requests == [8]  # the batch is one run, past the 6th element too
    t = _when(lambda: len(src.requests) == 2, lambda: src.emit_batch(list(range(8, 14))))
    assert next(gen) == 8  # asked for the element after the batch: its 8 are requested again
    t.join(WAIT)
    assert src.requests == [8, 8]
    assert [next(gen) for _ in range(5)] == [9, 10, 11, 12, 13]  # 6 consumed: a replenish is due
    assert src.requests == [8, 8]
    src.finish()
    assert list(gen) == []
    assert src.requests == [8, 8] and not src.cancelled  # no request or cancel reaches a completed source


def test_a_batch_crossing_the_replenish_point_is_one_run_with_next() -> None:
    """``next()`` replenishes before returning the last element of the run that reaches ``limit``:
    a batch is never cut there, it is requested again whole."""
    src = _BatchSource()
    it = src.blocking_iterable(8)  # limit 6
    src_ready = _when_requested(src, lambda: src.emit_batch(list(range(8))))
    assert [next(it) for _ in range(7)] == [0, 1, 2, 3, 4, 5, 6]
    src_ready.join(WAIT)
    assert src.requests == [8]
    assert next(it) == 7
    assert src.requests == [8, 8]  # before the batch's last element is returned
    src.emit_batch([8, 9, 10]).emit_batch([11, 12, 13])
    assert [next(it) for _ in range(3)] == [8, 9, 10]
    assert src.requests == [8, 8]
    assert [next(it), next(it)] == [11, 12]  # 6 consumed with this batch: due after it
    assert src.requests == [8, 8]
    assert next(it) == 13
    assert src.requests == [8, 8, 6]
    src.emit_batch([14]).finish()
    assert list(it) == [14]
    assert src.requests == [8, 8, 6] and not src.cancelled


@pytest.mark.parametrize("locked_wake", [False, True], ids=["gil-wake", "locked-wake"])
@pytest.mark.parametrize("prefetch", [1, 2, 3, 5, 8, 16, 128])
@pytest.mark.parametrize("way", ["generator", "next", "for_each", "subscribe"])
def test_a_threaded_batch_source_answering_every_request_is_exact(
    prefetch: int, way: str, locked_wake: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every request answered with batches of odd sizes from another thread: all elements in order,
    the requests ``prefetch``, then each between ``limit`` and ``prefetch`` (what was consumed,
    once at least ``limit``), never more than ``prefetch`` outstanding (the source asserts its
    demand for every batch). ``locked-wake`` runs the producer's wake-up
    as on a build without the GIL (the flag read under the lock)."""
    monkeypatch.setattr(_blocking, "_LOCKED_WAKE", locked_wake)
    n = 1000
    limit = prefetch - prefetch // 4
    if way == "subscribe":
        prefetch, limit = 128, 96  # blocking_subscribe's own prefetch
    src = _BatchSource()
    failures: list[BaseException] = []
    stop = threading.Event()

    def produce() -> None:
        i, size = 0, 1
        try:
            while i < n and not stop.is_set():
                src.requested_event.wait(0.01)
                with src.lock:
                    src.requested_event.clear()  # before the read: a later request sets it again
                    d = src.demand
                while d > 0 and i < n:
                    k = min(d, size, n - i)
                    src.emit_batch(list(range(i, i + k)))
                    i += k
                    d -= k
                    size = size % 7 + 1  # 1..7, so batches straddle every replenish point
            src.finish()
        except BaseException as e:  # noqa: BLE001 - reported by the test below
            failures.append(e)

    t = threading.Thread(target=produce, daemon=True)
    t.start()
    out: list[int] = []
    try:
        if way == "generator":
            out = list(src.blocking_iterable(prefetch))
        elif way == "next":
            it = src.blocking_iterable(prefetch)
            while True:
                try:
                    out.append(next(it))
                except StopIteration:
                    break
        elif way == "for_each":
            src.blocking_for_each(out.append, prefetch=prefetch)
        else:
            done = threading.Event()
            src.blocking_subscribe(out.append, None, done.set)
            assert done.is_set()
    finally:
        stop.set()
        t.join(WAIT)
    assert not failures, failures
    assert out == list(range(n))
    assert src.requests[0] == prefetch and all(limit <= r <= prefetch for r in src.requests[1:])
    assert sum(src.requests) - n <= prefetch  # asked only for what the consumer made room for
    assert not src.cancelled


def test_batches_and_single_elements_keep_their_order_and_the_accounting() -> None:
    src = _BatchSource()
    it = src.blocking_iterable(8)  # limit 6
    src_t = _when_requested(src, lambda: src.emit(0, 1).emit_batch([2, 3, 4]).emit(5))
    assert [next(it) for _ in range(5)] == [0, 1, 2, 3, 4]
    src_t.join(WAIT)
    assert src.requests == [8]
    assert next(it) == 5 and src.requests == [8, 6]
    src.emit_batch([6, 7]).emit(8).emit_batch([9, 10, 11, 12, 13])
    assert [next(it) for _ in range(5)] == [6, 7, 8, 9, 10]
    assert src.requests == [8, 6]
    assert [next(it), next(it)] == [11, 12] and src.requests == [8, 6]
    assert next(it) == 13  # the batch crossed the replenish point: consumed whole, then its 8 asked
    assert src.requests == [8, 6, 8]
    src.finish()
    assert list(it) == []
    assert src.requests == [8, 6, 8]


def test_the_handed_list_is_never_modified() -> None:
    """The producer may still read the list it handed over (the fused driver takes its len)."""
    src = _BatchSource()
    it = src.blocking_iterable(4)  # limit 3
    batches = [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    copies = [list(b) for b in batches]
    t = _when_requested(src, lambda: src.emit_batch(batches[0]))
    assert [next(it) for _ in range(4)] == [0, 1, 2, 3]
    t.join(WAIT)
    src.emit_batch(batches[1])
    assert [next(it) for _ in range(3)] == [4, 5, 6]
    src.emit_batch(batches[2])
    assert [next(it) for _ in range(3)] == [7, 8, 9]
    src.finish()
    assert list(it) == []
    assert batches == copies
    assert src.requests == [4, 4, 3, 3]


# ----------------------------------------------------------------------------------------------
# leaving in the middle of a batch


def test_break_in_the_middle_of_a_batch_cancels_and_requests_nothing_more() -> None:
    src = _BatchSource()
    src_t = _when_requested(src, lambda: src.emit_batch(list(range(16))))
    got: list[int] = []
    it = src.blocking_iterable(16)  # limit 12
    for x in it:
        got.append(x)
        if x == 4:
            break
    src_t.join(WAIT)
    assert got == [0, 1, 2, 3, 4]
    assert src.cancelled
    assert src.requests == [16]


def test_close_in_the_loop_body_stops_at_the_next_element_of_the_batch() -> None:
    src = _BatchSource()
    it = src.blocking_iterable(16)
    src_t = _when_requested(src, lambda: src.emit_batch(list(range(10))))
    got: list[int] = []
    for x in it:
        got.append(x)
        if x == 2:
            it.close()
    src_t.join(WAIT)
    assert got == [0, 1, 2]
    assert src.cancelled and src.requests == [16]
    with pytest.raises(StopIteration):
        next(it)


def test_for_each_closing_from_fn_stops_at_the_next_element_of_the_batch() -> None:
    src = _BatchSource()
    it = src.blocking_iterable(16)
    got: list[int] = []

    def fn(x: int) -> None:
        got.append(x)
        if x == 3:
            it.close()

    src_t = _when_requested(src, lambda: src.emit_batch(list(range(10))))
    it.for_each(fn)
    src_t.join(WAIT)
    assert got == [0, 1, 2, 3]
    assert src.cancelled and src.requests == [16]


def test_garbage_collection_in_the_middle_of_a_batch_cancels() -> None:
    src = _BatchSource()
    it = src.blocking_iterable(8)
    src_t = _when_requested(src, lambda: src.emit_batch(list(range(8))))
    assert next(it) == 0 and next(it) == 1
    src_t.join(WAIT)
    del it
    gc.collect()
    assert src.cancelled
    assert src.requests == [8]


def test_a_batch_after_the_close_is_dropped() -> None:
    src = _BatchSource()
    it = src.blocking_iterable(8)
    src_t = _when_requested(src, lambda: src.emit_batch([0, 1]))
    assert next(it) == 0
    src_t.join(WAIT)
    it.close()
    src.emit_batch([2, 3])  # in flight when the cancel was issued: dropped (rule 2.8)
    with pytest.raises(StopIteration):
        next(it)
    assert src.cancelled and src.requests == [8]


# ----------------------------------------------------------------------------------------------
# errors and timeouts


@pytest.mark.parametrize("way", ["generator", "next", "for_each"])
def test_an_error_after_a_partial_batch_comes_after_its_elements(way: str) -> None:
    src = _BatchSource()
    it = src.blocking_iterable(8)  # limit 6
    got: list[int] = []

    def produce() -> None:
        src.requested_event.wait(WAIT)
        src.emit_batch([0, 1, 2])
        src.fail(Boom("after 3"))

    t = threading.Thread(target=produce)
    t.start()
    with pytest.raises(Boom, match="after 3"):
        if way == "generator":
            for x in it:
                got.append(x)
        elif way == "next":
            while True:
                got.append(next(it))
        else:
            it.for_each(got.append)
    t.join(WAIT)
    assert got == [0, 1, 2]
    assert src.requests == [8]  # 3 consumed: no replenish
    assert not src.cancelled  # rule 2.4: a failed source is not cancelled


def test_an_error_while_the_consumer_is_inside_a_batch_waits_for_the_batch() -> None:
    src = _BatchSource()
    it = src.blocking_iterable(16)  # limit 12
    t = _when_requested(src, lambda: src.emit_batch(list(range(10))))
    assert next(it) == 0
    t.join(WAIT)
    src.fail(Boom("late"))  # the consumer holds the rest of the batch: it still gets all of it
    assert [next(it) for _ in range(9)] == list(range(1, 10))
    with pytest.raises(Boom, match="late"):
        next(it)
    with pytest.raises(StopIteration):
        next(it)
    assert src.requests == [16] and not src.cancelled


def test_an_overflowing_batch_delivers_what_fits_then_missing_backpressure() -> None:
    src = _BatchSource()
    it = src.blocking_iterable(4)
    t = _when_requested(src, lambda: src.emit_batch([0, 1]))
    assert next(it) == 0
    t.join(WAIT)
    src.demand += 10  # let the test source break rule 1.1: 5 more while 2 were requested
    src.emit_batch([2, 3, 4, 5, 6])
    got = [next(it) for _ in range(3)]  # 1 from the first batch, then the 2 requested
    assert got == [1, 2, 3]
    with pytest.raises(MissingBackpressureError, match="rule 1.1"):
        next(it)
    assert src.cancelled and src.requests == [4]


@pytest.mark.parametrize("way", ["generator", "next", "for_each"])
def test_timeout_between_batches_cancels_after_the_buffered_elements(way: str) -> None:
    """The timeout bounds each wait: a buffered batch is never waited for, the gap after it is."""
    src = _BatchSource()
    it = src.blocking_iterable(8, timeout=0.1)
    got: list[int] = []
    t = _when_requested(src, lambda: src.emit_batch([0, 1, 2, 3, 4]))
    t0 = time.monotonic()
    with pytest.raises(TimeoutError, match="no element within"):
        if way == "generator":
            for x in it:
                got.append(x)
        elif way == "next":
            while True:
                got.append(next(it))
        else:

            def slow(x: int) -> None:
                got.append(x)
                if x < 4:
                    time.sleep(0.03)  # 0.12 s in fn: not counted against the timeout

            it.for_each(slow)
    t.join(WAIT)
    assert got == [0, 1, 2, 3, 4]
    assert time.monotonic() - t0 < WAIT
    assert src.cancelled and src.requests == [8]


def test_timeout_is_per_wait_so_slow_batches_within_it_pass() -> None:
    src = _BatchSource()
    it = src.blocking_iterable(4, timeout=1.0)  # limit 3

    def produce() -> None:
        src.requested_event.wait(WAIT)
        for lo in range(0, 12, 3):
            while True:
                with src.lock:
                    if src.demand >= 3:
                        break
                time.sleep(0.001)
            time.sleep(0.02)
            src.emit_batch([lo, lo + 1, lo + 2])
        src.finish()

    t = threading.Thread(target=produce)
    t.start()
    assert list(it) == list(range(12))
    t.join(WAIT)
    assert src.requests == [4, 3, 3, 3] and not src.cancelled


# ----------------------------------------------------------------------------------------------
# one by one (TestPublisher): exact request accounting unchanged


def test_testpublisher_one_by_one_requests_prefetch_then_limit() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    it = Flowable.from_publisher(tp).blocking_iterable(4)  # limit 3
    t = _when(lambda: tp.requested == 4, lambda: tp.next(0, 1, 2, 3))
    assert next(it) == 0
    t.join(WAIT)
    assert tp.request_calls == [4]
    assert next(it) == 1 and tp.request_calls == [4]
    assert next(it) == 2 and tp.request_calls == [4, 3]  # at the 3rd element, before it is returned
    assert tp.requested == 3
    tp.next(4, 5, 6)
    assert [next(it) for _ in range(3)] == [3, 4, 5]
    assert tp.request_calls == [4, 3, 3]
    tp.next(7).complete()
    assert list(it) == [6, 7]
    assert tp.request_calls == [4, 3, 3] and not tp.was_cancelled


def test_testpublisher_generator_requests_after_the_limit_was_consumed() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    gen = iter(Flowable.from_publisher(tp).blocking_iterable(4))  # limit 3
    t = _when(lambda: tp.requested == 4, lambda: tp.next(0, 1, 2, 3))
    assert [next(gen) for _ in range(3)] == [0, 1, 2]
    t.join(WAIT)
    assert tp.request_calls == [4]  # the generator replenishes once it is resumed after the 3rd
    assert next(gen) == 3 and tp.request_calls == [4, 3]
    tp.next(4, 5)
    gen.close()  # closing the generator cancels
    tp.assert_was_cancelled()
    assert tp.request_calls == [4, 3]


def test_over_a_real_boundary_the_requests_are_exact() -> None:
    requests: list[int] = []
    n = 10_000
    src = Flowable.range(0, n).subscribe_on(schedulers.single()).do_on_request(requests.append)
    assert sum(src.blocking_iterable(128)) == n * (n - 1) // 2
    # each request answered with one batch, consumed whole: 128 per hand-off
    assert requests[0] == 128 and set(requests[1:]) == {128}
    assert sum(requests) - n <= 128


@pytest.mark.parametrize("way", ["generator", "for_each"])
def test_next_then_a_loop_loses_no_element_of_the_run_next_took(way: str) -> None:
    """``next()`` takes a run and returns its first element; a loop afterwards starts with the rest."""
    src = _BatchSource()
    it = src.blocking_iterable(8)  # limit 6
    t = _when_requested(src, lambda: src.emit_batch(list(range(8))))
    assert next(it) == 0 and next(it) == 1
    t.join(WAIT)
    got: list[int] = []

    def produce_rest() -> None:
        _wait_for(lambda: len(src.requests) == 2)  # the first batch was consumed
        src.emit_batch(list(range(8, 14)))
        _wait_for(lambda: len(src.requests) == 3)  # 6 more consumed
        src.finish()

    t2 = threading.Thread(target=produce_rest)
    t2.start()
    if way == "generator":
        got = list(it)
    else:
        it.for_each(got.append)
    t2.join(WAIT)
    assert got == list(range(2, 14))
    assert src.requests == [8, 8, 6] and not src.cancelled


def _when(cond: Callable[[], bool], action: Callable[[], object]) -> threading.Thread:
    """A started thread that runs ``action`` once ``cond`` holds."""

    def run() -> None:
        _wait_for(cond)
        action()

    t = threading.Thread(target=run)
    t.start()
    return t


def _when_requested(src: _BatchSource, action: Callable[[], object]) -> threading.Thread:
    """A started thread that runs ``action`` once ``src`` was requested from."""
    return _when(src.requested_event.is_set, action)


def _wait_for(cond: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.001)


@pytest.mark.parametrize("prefetch", [4, 128])
def test_an_element_beyond_what_was_requested_is_missing_backpressure_even_with_a_run_taken(prefetch: int) -> None:
    """Rule 1.1 counts what was requested, not what is buffered: a run the consumer took (before
    its replenish) makes no room for an element nobody asked for."""
    requests: list[int] = []

    class Upstream:
        def request(self, n: int) -> None:
            requests.append(n)

        def cancel(self) -> None:
            requests.append(-1)

    q: _blocking._QueueSubscriber[int] = _blocking._QueueSubscriber(prefetch)
    q.on_subscribe(Upstream())  # type: ignore[arg-type]
    q.on_next_batch(list(range(prefetch)))
    run = q.next_run()
    assert run is not None and len(run) == prefetch  # the batch whole (taken before its replenish)
    assert requests == [prefetch]
    q.on_next(prefetch)  # one more than requested
    assert q._done and isinstance(q._error, MissingBackpressureError)
    assert requests == [prefetch, -1]  # the upstream is cancelled
