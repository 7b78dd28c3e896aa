"""debounce, sample/throttle_last, throttle_first, throttle_latest: virtual time, models, rules."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from timetools import drive, model_debounce, model_throttle_first

from rstreams import Flowable
from rstreams.errors import MissingBackpressureError
from rstreams.testing import TestPublisher, TestScheduler
from spec._helpers import _setup

# events: strictly increasing integer times with values
events_st = st.lists(st.integers(1, 6), max_size=25).map(
    lambda gaps: [(sum(gaps[: i + 1]), i) for i in range(len(gaps))]
)


# -- debounce -----------------------------------------------------------------------------------


def test_debounce_emits_after_quiet_period() -> None:
    ts, tp, sub = _setup(lambda f, s: f.debounce(1.0, s))
    tp.next(1)
    ts.advance_by(0.5)
    tp.next(2)
    ts.advance_by(0.9)
    sub.assert_no_values()
    ts.advance_by(0.1)
    sub.assert_values(2)
    tp.next(3)
    tp.complete()  # the pending element is emitted at once on completion
    sub.assert_result(2, 3).assert_no_violations()
    assert ts.pending == 0


def test_debounce_error_drops_pending() -> None:
    ts, tp, sub = _setup(lambda f, s: f.debounce(1.0, s))
    tp.next(1)
    tp.error(KeyError("k"))
    ts.advance_by(2)
    sub.assert_no_values().assert_error(KeyError).assert_no_violations()


def test_debounce_missing_backpressure() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).debounce(1.0, ts).test(0)
    tp.next(1)
    ts.advance_by(1)
    sub.assert_error(MissingBackpressureError, match="debounce").assert_no_violations()
    assert tp.was_cancelled


@settings(max_examples=50, deadline=None)
@given(events_st, st.integers(1, 5))
def test_property_debounce_matches_model(events: list[tuple[int, int]], d: int) -> None:
    ts, tp, sub = _setup(lambda f, s: f.debounce(d, s))
    drive(ts, tp, events)
    sub.assert_result(*model_debounce(events, d)).assert_no_violations()


# -- sample / throttle_last ---------------------------------------------------------------------


def test_sample_emits_latest_per_period() -> None:
    ts, tp, sub = _setup(lambda f, s: f.sample(1.0, s))
    tp.next(1, 2)
    ts.advance_by(1)
    ts.advance_by(1)  # nothing new: no emission
    tp.next(3)
    ts.advance_by(1)
    tp.next(4)
    tp.complete()
    sub.assert_result(2, 3).assert_no_violations()
    assert ts.pending == 0


def test_sample_emit_last() -> None:
    ts, tp, sub = _setup(lambda f, s: f.sample(1.0, s, emit_last=True))
    tp.next(1)
    ts.advance_by(1)
    tp.next(2)
    tp.complete()
    sub.assert_result(1, 2).assert_no_violations()


def test_throttle_last_is_sample() -> None:
    ts, tp, sub = _setup(lambda f, s: f.throttle_last(1.0, s))
    tp.next(1, 2)
    ts.advance_by(1)
    tp.complete()
    sub.assert_result(2).assert_no_violations()


def test_sample_missing_backpressure() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).sample(1.0, ts).test(0)
    tp.next(1)
    ts.advance_by(1)
    sub.assert_error(MissingBackpressureError, match="sample").assert_no_violations()
    assert ts.pending == 0


@settings(max_examples=50, deadline=None)
@given(events_st, st.integers(1, 5), st.booleans())
def test_property_sample_matches_model(events: list[tuple[int, int]], p: int, emit_last: bool) -> None:
    ts, tp, sub = _setup(lambda f, s: f.sample(p, s, emit_last=emit_last))
    end = events[-1][0] if events else 0
    drive(ts, tp, events, end=end)
    sub.assert_result(*_sample_model_exact(events, p, end, emit_last)).assert_no_violations()


def _sample_model_exact(events: list[tuple[int, int]], p: int, end: int, emit_last: bool) -> list[int]:
    # element at time t belongs to the period whose tick is the first k*p strictly greater than t
    out: list[int] = []
    latest: int | None = None
    i = 0
    k = 1
    while k * p <= end:
        while i < len(events) and events[i][0] < k * p:
            latest = events[i][1]
            i += 1
        if latest is not None:
            out.append(latest)
            latest = None
        k += 1
    while i < len(events):
        latest = events[i][1]
        i += 1
    if emit_last and latest is not None:
        out.append(latest)
    return out


# -- throttle_first -----------------------------------------------------------------------------


def test_throttle_first() -> None:
    ts, tp, sub = _setup(lambda f, s: f.throttle_first(1.0, s))
    tp.next(1, 2)
    ts.advance_by(0.5)
    tp.next(3)
    ts.advance_by(0.5)
    tp.next(4)
    tp.complete()
    sub.assert_result(1, 4).assert_no_violations()
    assert ts.pending == 0


def test_throttle_first_missing_backpressure() -> None:
    ts = TestScheduler()
    tp: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(tp).throttle_first(1.0, ts).test(1)
    tp.next(1)
    ts.advance_by(1)
    tp.next(2)
    sub.assert_values(1).assert_error(MissingBackpressureError, match="throttle_first").assert_no_violations()


@settings(max_examples=50, deadline=None)
@given(events_st, st.integers(1, 5))
def test_property_throttle_first_matches_model(events: list[tuple[int, int]], d: int) -> None:
    ts, tp, sub = _setup(lambda f, s: f.throttle_first(d, s))
    drive(ts, tp, events)
    sub.assert_result(*model_throttle_first(events, d)).assert_no_violations()


# -- throttle_latest ----------------------------------------------------------------------------


def test_throttle_latest() -> None:
    ts, tp, sub = _setup(lambda f, s: f.throttle_latest(1.0, s))
    tp.next(1, 2, 3)
    sub.assert_values(1)
    ts.advance_by(1)
    sub.assert_values(1, 3)
    ts.advance_by(1)  # window ends with nothing new: the timer stops
    tp.next(4)
    sub.assert_values(1, 3, 4)
    tp.next(5)
    tp.complete()
    sub.assert_result(1, 3, 4).assert_no_violations()
    assert ts.pending == 0


def test_throttle_latest_emit_last() -> None:
    ts, tp, sub = _setup(lambda f, s: f.throttle_latest(1.0, s, emit_last=True))
    tp.next(1, 2)
    tp.complete()
    sub.assert_result(1, 2).assert_no_violations()


def _model_throttle_latest(events: list[tuple[int, int]], d: int, emit_last: bool) -> list[int]:
    out: list[int] = []
    window_end: int | None = None
    latest: int | None = None
    i = 0
    while i < len(events) or (window_end is not None and latest is not None):
        t = events[i][0] if i < len(events) else None
        if window_end is not None and (t is None or window_end <= t):
            if latest is not None:
                out.append(latest)
                latest = None
                window_end += d
            else:
                window_end = None
            continue
        assert t is not None
        v = events[i][1]
        i += 1
        if window_end is None:
            out.append(v)
            window_end = t + d
        else:
            latest = v
    return out


@settings(max_examples=50, deadline=None)
@given(events_st, st.integers(1, 5))
def test_property_throttle_latest_matches_model(events: list[tuple[int, int]], d: int) -> None:
    ts, tp, sub = _setup(lambda f, s: f.throttle_latest(d, s))
    drive(ts, tp, events, end=(events[-1][0] + 10 * d) if events else 0)
    sub.assert_result(*_model_throttle_latest(events, d, False)).assert_no_violations()


@pytest.mark.parametrize("name", ["debounce", "throttle_first", "throttle_latest", "sample"])
def test_bad_durations(name: str) -> None:
    with pytest.raises((TypeError, ValueError)):
        getattr(Flowable.never(), name)(-1)
    with pytest.raises(TypeError):
        getattr(Flowable.never(), name)("1")
