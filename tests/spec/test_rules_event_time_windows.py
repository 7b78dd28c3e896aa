"""Reactive Streams rule tests (``test_rule_*``) of tumbling_window, sliding_window and session_window
(event-time windows with a watermark).

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_event_time_windows.py``."""

from __future__ import annotations

from typing import Any

import pytest

from rstreams import Flowable
from rstreams.errors import NoneElementError
from rstreams.testing import TestPublisher, TestSubscriber


def test_rule_2_13_none_element_refused_by_on_next() -> None:
    ts: TestSubscriber[Any] = TestSubscriber()
    captured: list[Any] = []

    class Spy(Flowable[Any]):
        def _subscribe_actual(self, s: Any) -> None:
            captured.append(s)
            s.on_subscribe(type("S", (), {"request": lambda self, n: None, "cancel": lambda self: None})())

    Spy().tumbling_window(1, timestamp=float).subscribe(ts)
    with pytest.raises(NoneElementError):
        captured[0].on_next(None)


def test_rule_3_9_bad_request_signals_an_error() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[Any] = TestSubscriber(0)
    Flowable.from_publisher(tp).tumbling_window(1, timestamp=float).subscribe(ts)
    ts.request(0)
    ts.assert_error(ValueError)
    assert tp.was_cancelled


def test_rule_1_7_a_late_processor_completes_once_when_the_stream_is_cancelled() -> None:
    from rstreams.processors import UnicastProcessor
    from rstreams.testing import TestPublisher

    for hide in (False, True):
        tp: TestPublisher[int] = TestPublisher.create()
        p: UnicastProcessor[int] = UnicastProcessor.create()
        lt: TestSubscriber[int] = TestSubscriber()
        p.subscribe(lt)
        src = Flowable.from_publisher(tp)
        ts: TestSubscriber[Any] = TestSubscriber()
        (src.hide() if hide else src).tumbling_window(10, timestamp=lambda x: x, late=p).subscribe(ts)
        tp.next(1, 30, 2)  # 2 is late: its window [0, 10) closed when 30 arrived
        ts.cancel()
        lt.assert_result(2).assert_no_violations()  # completed: nothing more can be late
        ts.cancel()
        tp.next(3)  # after the cancel: dropped by the cancelled operator, not sent to the Processor
        lt.assert_result(2).assert_no_violations()
        assert tp.was_cancelled


def test_rule_3_9_bad_request_fails_the_late_processor_with_the_stream() -> None:
    """The late= Processor ends with the stream: a bad request fails the stream (rule 3.9), and the
    Processor with it, after the late element it already received."""
    from rstreams.processors import PublishProcessor

    pp: PublishProcessor[Any] = PublishProcessor.create()
    late = pp.test()
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[Any] = TestSubscriber(0)
    Flowable.from_publisher(tp).tumbling_window(10, timestamp=float, aggregate="count", late=pp).subscribe(ts)
    tp.next(1, 30, 2)  # 2 is late (the watermark is 30)
    ts.request(-1)
    ts.assert_error(ValueError).assert_no_violations()
    assert tp.was_cancelled
    late.assert_values(2).assert_error(ValueError).assert_no_violations()
