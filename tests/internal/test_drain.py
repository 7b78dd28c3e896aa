"""Drain idioms: enter/leave, ErrorCollector, HalfSerializer, post-complete (single-threaded)."""

from __future__ import annotations

from collections import deque

import pytest

from rstreams._internal import plugins
from rstreams._internal.atomics import AtomicInt
from rstreams._internal.drain import (
    COMPLETED_MASK,
    REQUESTED_MASK,
    TERMINATED,
    ErrorCollector,
    HalfSerializer,
    enter,
    leave,
    post_complete,
    post_complete_request,
)

from ._helpers import RecordingSubscriber

MAX = 2**63 - 1


def test_masks() -> None:
    assert COMPLETED_MASK == 2**63 and REQUESTED_MASK == MAX
    assert COMPLETED_MASK & REQUESTED_MASK == 0


def test_enter_leave_missed_accounting() -> None:
    wip = AtomicInt()
    assert enter(wip) is True
    assert enter(wip) is False  # a second caller records missed work
    assert enter(wip) is False
    missed = leave(wip, 1)
    assert missed == 2  # the owner must loop again
    assert leave(wip, missed) == 0
    assert enter(wip) is True


# ------------------------------------------------------------------ ErrorCollector


def test_error_collector_empty_terminates_to_none_then_terminated() -> None:
    ec = ErrorCollector()
    assert not ec.has_error() and ec.peek() is None
    assert ec.terminate() is None
    assert ec.is_terminated
    assert ec.terminate() is TERMINATED


def test_error_collector_single_error_is_itself() -> None:
    ec = ErrorCollector()
    e = ValueError("a")
    assert ec.add(e) is True
    assert ec.has_error() and ec.peek() is e
    assert ec.terminate() is e


def test_error_collector_several_become_exception_group() -> None:
    ec = ErrorCollector()
    a, b = ValueError("a"), KeyError("b")
    ec.add(a)
    ec.add(b)
    g = ec.terminate()
    assert type(g) is ExceptionGroup
    assert list(g.exceptions) == [a, b]


def test_error_collector_non_exception_gives_base_exception_group() -> None:
    ec = ErrorCollector()
    a, k = ValueError("a"), KeyboardInterrupt()
    ec.add(a)
    ec.add(k)
    g = ec.terminate()
    assert isinstance(g, BaseExceptionGroup) and not isinstance(g, ExceptionGroup)
    assert list(g.exceptions) == [a, k]


def test_error_collector_add_after_terminate() -> None:
    ec = ErrorCollector()
    ec.terminate()
    late = ValueError("late")
    with plugins.collect_errors() as errors:
        assert ec.add(late) is False
        assert errors == []
        assert ec.add_or_report(late) is False
    assert errors == [late]
    ok = ErrorCollector()
    with plugins.collect_errors() as errors2:
        assert ok.add_or_report(late) is True
    assert errors2 == []


def test_error_collector_terminate_into() -> None:
    e = ValueError("x")
    ec = ErrorCollector()
    ec.add(e)
    sub = RecordingSubscriber()
    ec.terminate_into(sub)
    ec.terminate_into(sub)  # already terminated: nothing more
    assert sub.events == [("error", e)]
    sub2 = RecordingSubscriber()
    ErrorCollector().terminate_into(sub2)
    assert sub2.events == [("complete",)]


def test_error_collector_report_remaining() -> None:
    e = ValueError("x")
    ec = ErrorCollector()
    ec.add(e)
    with plugins.collect_errors() as errors:
        ec.report_remaining()
        ErrorCollector().report_remaining()  # nothing to report
    assert errors == [e]


# ------------------------------------------------------------------ HalfSerializer


def test_half_serializer_passes_items_then_complete_then_drops() -> None:
    sub = RecordingSubscriber()
    hs = HalfSerializer(sub)
    hs.on_next(1)
    hs.on_next(2)
    hs.on_complete()
    hs.on_next(3)
    hs.on_complete()
    assert sub.events == [("next", 1), ("next", 2), ("complete",)]


def test_half_serializer_error_after_complete_goes_to_hook() -> None:
    sub = RecordingSubscriber()
    hs = HalfSerializer(sub)
    hs.on_complete()
    e = ValueError("late")
    with plugins.collect_errors() as errors:
        hs.on_error(e)
    assert sub.events == [("complete",)]
    assert errors == [e]


def test_half_serializer_terminal_during_on_next_is_delivered_after_it() -> None:
    e = ValueError("boom")

    class Reentrant(RecordingSubscriber):
        def on_next(self, item: object) -> None:
            super().on_next(item)
            hs.on_error(e)  # as if another thread terminated while on_next ran

    sub = Reentrant()
    hs = HalfSerializer(sub)
    hs.on_next(1)
    hs.on_next(2)
    assert sub.events == [("next", 1), ("error", e)]


# ------------------------------------------------------------------ post-complete


def _never_cancelled() -> bool:
    return False


def test_post_complete_empty_queue_completes_immediately() -> None:
    sub = RecordingSubscriber()
    post_complete(sub, deque(), AtomicInt(), _never_cancelled)
    assert sub.events == [("complete",)]


@pytest.mark.parametrize("size", [1, 5])
def test_post_complete_waits_for_demand(size: int) -> None:
    sub = RecordingSubscriber()
    q = deque(range(size))
    requested = AtomicInt()
    post_complete(sub, q, requested, _never_cancelled)
    assert sub.events == []
    assert requested.get() == COMPLETED_MASK
    for i in range(size):
        assert post_complete_request(1, sub, q, requested, _never_cancelled) is False
        assert sub.values == list(range(i + 1))
        # completion right after the last value, without extra demand
        assert (sub.terminals == [("complete",)]) == (i == size - 1)
    post_complete_request(5, sub, q, requested, _never_cancelled)
    assert sub.events.count(("complete",)) == 1


def test_post_complete_with_prior_demand_emits_up_to_it() -> None:
    sub = RecordingSubscriber()
    q = deque(range(5))
    requested = AtomicInt()
    assert post_complete_request(2, sub, q, requested, _never_cancelled) is True  # before completion
    post_complete(sub, q, requested, _never_cancelled)
    assert sub.events == [("next", 0), ("next", 1)]
    post_complete_request(10, sub, q, requested, _never_cancelled)
    assert sub.events == [("next", i) for i in range(5)] + [("complete",)]


def test_post_complete_unbounded_demand_emits_everything() -> None:
    sub = RecordingSubscriber()
    q = deque(range(4))
    requested = AtomicInt()
    post_complete_request(MAX, sub, q, requested, _never_cancelled)
    post_complete_request(2**70, sub, q, requested, _never_cancelled)
    post_complete(sub, q, requested, _never_cancelled)
    assert sub.events == [("next", i) for i in range(4)] + [("complete",)]


def test_post_complete_twice_is_ignored() -> None:
    sub = RecordingSubscriber()
    q = deque([1, 2])
    requested = AtomicInt()
    post_complete(sub, q, requested, _never_cancelled)
    post_complete(sub, q, requested, _never_cancelled)
    post_complete_request(5, sub, q, requested, _never_cancelled)
    assert sub.events == [("next", 1), ("next", 2), ("complete",)]


def test_post_complete_stops_when_cancelled() -> None:
    q = deque(range(5))
    requested = AtomicInt()
    cancelled = [False]

    class Canceller(RecordingSubscriber):
        def on_next(self, item: object) -> None:
            super().on_next(item)
            if item == 1:
                cancelled[0] = True

    sub = Canceller()
    post_complete(sub, q, requested, lambda: cancelled[0])
    post_complete_request(10, sub, q, requested, lambda: cancelled[0])
    assert sub.events == [("next", 0), ("next", 1)]
