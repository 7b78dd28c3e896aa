"""Reactive Streams rule tests (``test_rule_*``) of buffer(boundary), window(boundary) and
buffer(openings, closing).

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_boundary_buffer_window.py``."""

from __future__ import annotations

from operators.test_boundary_buffer_window import Grab, _opening, _pair
from rstreams import Flowable
from rstreams.testing import TestSubscriber


def test_rule_3_13_buffer_boundary_cancel_cancels_both() -> None:
    src, b = _pair()
    ts = Flowable.from_publisher(src).buffer(b).test()
    src.next(1)
    ts.cancel()
    assert src.was_cancelled and b.was_cancelled
    ts.assert_empty().assert_no_violations()


def test_rule_3_9_buffer_boundary_bad_request() -> None:
    src, b = _pair()
    ts: TestSubscriber[list[int]] = TestSubscriber(0)
    Flowable.from_publisher(src).buffer(b).subscribe(ts)
    ts.request(0)
    ts.assert_error(ValueError, match="3.9").assert_no_violations()
    assert src.was_cancelled and b.was_cancelled


def test_rule_3_9_window_boundary_bad_request() -> None:
    src, b = _pair()
    main = Grab(1)
    Flowable.from_publisher(src).window(b).subscribe(main)
    src.next(1)
    main.request(-3)
    main.assert_error(ValueError, match="3.9").assert_no_violations()
    main.inners[0].assert_result(1)
    assert src.was_cancelled and b.was_cancelled


def test_rule_3_13_buffer_openings_cancel_disposes_everything() -> None:
    src, opens, closers, closing = _opening()
    ts = Flowable.from_publisher(src).buffer(opens, closing).test()
    opens.next(1)
    ts.cancel()
    assert src.was_cancelled and opens.was_cancelled and closers[1].was_cancelled
    ts.assert_empty().assert_no_violations()


def test_rule_3_9_buffer_openings_bad_request() -> None:
    src, opens, closers, closing = _opening()
    ts: TestSubscriber[list[int]] = TestSubscriber(0)
    Flowable.from_publisher(src).buffer(opens, closing).subscribe(ts)
    ts.request(0)
    ts.assert_error(ValueError, match="3.9").assert_no_violations()
    assert src.was_cancelled and opens.was_cancelled
