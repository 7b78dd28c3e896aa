"""Reactive Streams rule tests (``test_rule_*``) of debounce, sample / throttle_last, throttle_first and throttle_latest (virtual time).

Their other tests (scenarios, properties, arguments) are in ``tests/time/test_time_throttle.py``."""

from __future__ import annotations

from typing import Any

import pytest

from rstreams import Flowable
from rstreams.testing import TestPublisher, TestScheduler
from spec._helpers import _setup


def test_rule_3_13_debounce_cancel_disposes_timer() -> None:
    ts, tp, sub = _setup(lambda f, s: f.debounce(1.0, s))
    tp.next(1)
    sub.cancel()
    assert ts.pending == 0
    ts.advance_by(2)
    sub.assert_empty().assert_no_violations()
    assert tp.was_cancelled


@pytest.mark.parametrize(
    "make",
    [
        lambda f, s: f.debounce(1.0, s),
        lambda f, s: f.sample(1.0, s),
        lambda f, s: f.throttle_first(1.0, s),
        lambda f, s: f.throttle_latest(1.0, s),
    ],
)
def test_rule_3_9_request_zero_signals_error(make: Any) -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = make(Flowable.from_publisher(tp), ts).test(0)
    sub.request(0)
    sub.assert_error(ValueError, match="3.9").assert_no_violations()
    assert tp.was_cancelled
    assert ts.pending == 0

