"""blocking_latest, blocking_next, blocking_most_recent: iterators over samples of a stream.

They request unbounded (no backpressure, as RxJava) and keep at most one element; closing, leaving
a loop, garbage collection or an interrupt while waiting cancel the upstream; they start no thread.
Hot sources are driven by hand (TestPublisher) or in virtual time (TestScheduler)."""

from __future__ import annotations

import gc
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from rstreams import Flowable, plugins, schedulers
from rstreams.errors import NoneElementError
from rstreams.testing import TestPublisher, TestScheduler

from .harness import Boom

MAX = 2**63 - 1


def hot() -> tuple[TestPublisher[int], Flowable[int], list[bool]]:
    tp: TestPublisher[int] = TestPublisher.create()
    cancelled: list[bool] = []
    return tp, Flowable.from_publisher(tp).do_on_cancel(lambda: cancelled.append(True)), cancelled


def when(condition: Callable[[], bool], action: Callable[[], Any]) -> threading.Thread:
    """Run ``action`` on a helper thread as soon as ``condition`` holds (e.g. the consumer waits)."""

    def run() -> None:
        deadline = time.monotonic() + 5
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.0005)
        action()

    t = threading.Thread(target=run)
    t.start()
    return t


def waiting(it: Any) -> Callable[[], bool]:
    return lambda: it._sub is not None and it._sub._waiting


# ----------------------------------------------------------------------------------------------
# blocking_latest


def test_latest_returns_the_latest_element_not_taken_yet() -> None:
    tp, src, _ = hot()
    it = src.blocking_latest()
    tp.next(1, 2, 3)
    assert next(it) == 3
    tp.next(4)
    assert next(it) == 4
    tp.next(5, 6)
    tp.complete()
    assert next(it) == 6  # taken before the completion is reported (RxJava drops it)
    with pytest.raises(StopIteration):
        next(it)


def test_latest_blocks_until_a_new_element_arrives() -> None:
    tp, src, _ = hot()
    it = src.blocking_latest()
    tp.next(1)
    assert next(it) == 1
    t = when(waiting(it), lambda: tp.next(2))
    assert next(it) == 2  # not 1 again
    t.join(5)
    it.close()


def test_latest_over_a_synchronous_source_yields_its_last_element() -> None:
    assert list(Flowable.range(0, 5).blocking_latest()) == [4]
    assert list(Flowable.range(0, 5).hide().blocking_latest()) == [4]
    assert list(Flowable.empty().blocking_latest()) == []


def test_latest_in_virtual_time_skips_what_arrived_meanwhile() -> None:
    sched = TestScheduler()
    it = Flowable.interval(1.0, scheduler=sched).blocking_latest()
    sched.advance_by(3)
    assert next(it) == 2
    sched.advance_by(1)
    assert next(it) == 3
    it.close()
    assert sched.pending == 0  # the interval was cancelled: no timer left


def test_latest_raises_the_error_after_the_pending_element() -> None:
    tp, src, _ = hot()
    it = src.blocking_latest()
    tp.next(1)
    tp.error(Boom("x"))
    assert next(it) == 1
    with pytest.raises(Boom):
        next(it)
    with pytest.raises(StopIteration):
        next(it)


# ----------------------------------------------------------------------------------------------
# blocking_next


def test_next_subscribes_at_the_first_next_and_waits_for_an_element_after_the_call() -> None:
    tp, src, _ = hot()
    it = src.blocking_next()
    assert not tp.has_subscribers  # lazy, as RxJava's NextIterator
    t = when(lambda: tp.has_subscribers, lambda: tp.next(1, 2))
    assert next(it) == 1  # 2 arrived while nobody waited: dropped
    t.join(5)
    tp.next(3)  # nobody waits: dropped
    t = when(lambda: it._sub is not None and it._sub._want, lambda: tp.next(4))
    assert next(it) == 4
    t.join(5)
    tp.complete()
    with pytest.raises(StopIteration):
        next(it)


def test_next_over_a_synchronous_source_yields_its_first_element() -> None:
    assert list(Flowable.range(0, 5).blocking_next()) == [0]
    assert list(Flowable.empty().blocking_next()) == []


def test_next_raises_the_stream_error() -> None:
    it = Flowable.error(Boom("x")).blocking_next()
    with pytest.raises(Boom):
        next(it)
    with pytest.raises(StopIteration):
        next(it)


def test_next_in_virtual_time() -> None:
    sched = TestScheduler()
    src = Flowable.interval(1.0, scheduler=sched)
    it = src.blocking_next()
    t = when(waiting(it), lambda: sched.advance_by(2))
    assert next(it) == 0  # 1 arrived in the same advance, after the hand-over: dropped
    t.join(5)
    it.close()
    assert sched.pending == 0


# ----------------------------------------------------------------------------------------------
# blocking_most_recent


def test_most_recent_never_blocks_and_repeats_the_most_recent_element() -> None:
    tp, src, _ = hot()
    it = src.blocking_most_recent(0)
    assert [next(it), next(it)] == [0, 0]
    tp.next(1)
    assert [next(it), next(it)] == [1, 1]
    tp.next(2, 3)
    assert next(it) == 3
    tp.complete()
    with pytest.raises(StopIteration):
        next(it)


def test_most_recent_over_a_synchronous_source_yields_nothing_as_rxjava() -> None:
    assert list(Flowable.range(0, 5).blocking_most_recent(-1)) == []


def test_most_recent_raises_the_error() -> None:
    tp, src, _ = hot()
    it = src.blocking_most_recent(0)
    tp.error(Boom("x"))
    with pytest.raises(Boom):
        next(it)
    with pytest.raises(StopIteration):
        next(it)


def test_most_recent_initial_none_is_refused() -> None:
    with pytest.raises(NoneElementError):
        Flowable.just(1).blocking_most_recent(None)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------
# All three: demand, cancellation, interrupts, threads

SAMPLERS: list[tuple[str, Callable[[Flowable[int]], Any]]] = [
    ("latest", lambda f: f.blocking_latest()),
    ("next", lambda f: f.blocking_next()),
    ("most_recent", lambda f: f.blocking_most_recent(-1)),
]
IDS = [s[0] for s in SAMPLERS]


def _started(name: str, make: Callable[[Flowable[int]], Any], src: Flowable[int], tp: TestPublisher[int]) -> Any:
    it = make(src)
    if name == "next":  # subscribes at the first next(): give it one element to take
        t = when(lambda: tp.has_subscribers, lambda: tp.next(7))
        assert next(it) == 7
        t.join(5)
    return it


@pytest.mark.parametrize(("name", "make"), SAMPLERS, ids=IDS)
def test_no_backpressure_requests_unbounded(name: str, make: Callable[[Flowable[int]], Any]) -> None:
    calls: list[int] = []
    tp, src, _ = hot()
    it = _started(name, make, src.do_on_request(calls.append), tp)
    assert calls == [MAX]
    tp.next(*range(1000))  # a fast producer is never refused, whatever the consumer does
    it.close()


@pytest.mark.parametrize(("name", "make"), SAMPLERS, ids=IDS)
def test_close_cancels_the_upstream(name: str, make: Callable[[Flowable[int]], Any]) -> None:
    tp, src, cancelled = hot()
    it = _started(name, make, src, tp)
    it.close()
    assert cancelled == [True]
    with pytest.raises(StopIteration):
        next(it)
    it.close()  # idempotent
    assert cancelled == [True]


@pytest.mark.parametrize(("name", "make"), SAMPLERS, ids=IDS)
def test_with_block_and_break_cancel_the_upstream(name: str, make: Callable[[Flowable[int]], Any]) -> None:
    tp, src, cancelled = hot()
    with _started(name, make, src, tp):
        pass
    assert cancelled == [True]
    tp2, src2, cancelled2 = hot()
    it = _started(name, make, src2, tp2)
    if name != "next":
        tp2.next(1)
        for _ in it:
            break
    else:
        t = when(waiting(it), lambda: tp2.next(1))
        for _ in it:
            break
        t.join(5)
    assert cancelled2 == [True]


@pytest.mark.parametrize(("name", "make"), SAMPLERS, ids=IDS)
def test_garbage_collection_cancels_the_upstream(name: str, make: Callable[[Flowable[int]], Any]) -> None:
    tp, src, cancelled = hot()
    it = _started(name, make, src, tp)
    del it
    gc.collect()
    assert cancelled == [True]


@pytest.mark.parametrize(("name", "make"), SAMPLERS[:2], ids=IDS[:2])
def test_close_from_another_thread_wakes_a_blocked_next(name: str, make: Callable[[Flowable[int]], Any]) -> None:
    tp, src, cancelled = hot()
    it = _started(name, make, src, tp)
    t = when(waiting(it), it.close)
    with pytest.raises(StopIteration):
        next(it)
    t.join(5)
    assert cancelled == [True]


@pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread()
    or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    or not hasattr(signal, "pthread_kill"),
    reason="needs the main thread with Python's own SIGINT handler (POSIX)",
)
@pytest.mark.parametrize(("name", "make"), SAMPLERS[:2], ids=IDS[:2])
def test_an_interrupt_while_waiting_cancels_and_propagates(name: str, make: Callable[[Flowable[int]], Any]) -> None:
    tp, src, cancelled = hot()
    it = _started(name, make, src, tp)
    main = threading.main_thread().ident
    assert main is not None
    t = when(waiting(it), lambda: signal.pthread_kill(main, signal.SIGINT))
    with pytest.raises(KeyboardInterrupt):
        next(it)
    t.join(5)
    assert cancelled == [True]
    with pytest.raises(StopIteration):
        next(it)


@pytest.mark.parametrize(("name", "make"), SAMPLERS, ids=IDS)
def test_no_thread_is_left_behind(name: str, make: Callable[[Flowable[int]], Any]) -> None:
    before = set(threading.enumerate())
    sched = TestScheduler()
    it = make(Flowable.interval(1.0, scheduler=sched))
    if name != "next":
        sched.advance_by(2)
        next(it)
    it.close()
    assert set(threading.enumerate()) <= before
    assert sched.pending == 0


@pytest.mark.parametrize(("name", "make"), SAMPLERS, ids=IDS)
def test_an_error_after_close_goes_to_the_hook(name: str, make: Callable[[Flowable[int]], Any]) -> None:
    from rstreams.testing import Violation

    tp: TestPublisher[int] = TestPublisher.create_noncompliant(Violation.DEFER_CANCELLATION)
    with plugins.collect_errors() as errors:
        it = make(Flowable.from_publisher(tp))
        if name == "next":
            t = when(lambda: tp.has_subscribers, lambda: tp.next(1))
            next(it)
            t.join(5)
        it.close()
        tp.error(Boom("late"))
    assert len(errors) == 1


def test_many_elements_from_another_thread_latest_never_repeats_or_goes_back() -> None:
    n = 200_000
    it = Flowable.range(0, n).subscribe_on(schedulers.io()).blocking_latest()
    seen = list(it)
    assert seen, "nothing sampled"
    assert seen == sorted(set(seen)), "an element was repeated or came out of order"
    assert seen[-1] == n - 1


def test_next_and_latest_keep_up_with_a_fast_producer_on_another_thread() -> None:
    import itertools

    for make in (lambda f: f.blocking_next(), lambda f: f.blocking_latest()):
        cancelled: list[bool] = []
        src = Flowable.from_iterable(lambda: itertools.count()).subscribe_on(schedulers.io()).do_on_cancel(lambda c=cancelled: c.append(True))
        it = make(src)
        got = [next(it) for _ in range(50)]  # a lost hand-over would hang here
        it.close()
        assert all(a < b for a, b in itertools.pairwise(got)), "an element was repeated or came out of order"
        assert cancelled == [True]
