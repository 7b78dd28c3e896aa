"""sample(sampler Publisher), debounce(selector) and delay(selector): RxJava 3 semantics in
virtual time, backpressure, errors, cancellation, bad arguments."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from operators.harness import Boom, check_raising
from rstreams import Flowable
from rstreams.errors import MissingBackpressureError, NoneElementError
from rstreams.testing import TestPublisher, TestScheduler, TestSubscriber
from spec._helpers import _pair

# -- sample(sampler) -----------------------------------------------------------------------------


def test_sample_publisher_emits_latest_at_each_signal() -> None:
    src, s = _pair()
    ts = Flowable.from_publisher(src).sample(s).test()
    s.next("t")  # nothing yet
    src.next(1, 2)
    s.next("t")
    s.next("t")  # already sampled: nothing
    src.next(3)
    src.complete()  # without emit_last, 3 is dropped (RxJava)
    ts.assert_result(2).assert_no_violations()
    assert s.was_cancelled


def test_sample_publisher_emit_last_on_source_completion() -> None:
    src, s = _pair()
    ts = Flowable.from_publisher(src).sample(s, emit_last=True).test()
    src.next(1, 2)
    s.next("t")
    src.next(3)
    src.complete()
    ts.assert_result(2, 3).assert_no_violations()


@pytest.mark.parametrize("emit_last", [False, True])
def test_sample_publisher_sampler_completion_completes_and_cancels_source(emit_last: bool) -> None:
    src, s = _pair()
    ts = Flowable.from_publisher(src).sample(s, emit_last=emit_last).test()
    src.next(1)
    s.complete()
    ts.assert_result(*([1] if emit_last else [])).assert_no_violations()
    assert src.was_cancelled


def test_sample_publisher_virtual_time_equals_timed_sample() -> None:
    ts = TestScheduler()
    a = Flowable.interval(0.25, scheduler=ts).sample(Flowable.interval(1.1, scheduler=ts)).take(3).test()
    ts.advance_by(4)
    a.assert_result(3, 7, 12).assert_no_violations()


def test_sample_publisher_missing_backpressure() -> None:
    src, s = _pair()
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.from_publisher(src).sample(s).subscribe(ts)
    src.next(1)
    s.next("t")
    ts.assert_error(MissingBackpressureError, match="sample").assert_no_violations()
    assert src.was_cancelled and s.was_cancelled


@pytest.mark.parametrize("which", ["source", "sampler"])
def test_sample_publisher_error_of_either_side(which: str) -> None:
    src, s = _pair()
    ts = Flowable.from_publisher(src).sample(s).test()
    src.next(1)
    (src if which == "source" else s).error(Boom(which))
    ts.assert_error(Boom).assert_no_values().assert_no_violations()
    assert (s if which == "source" else src).was_cancelled


def test_sample_publisher_bad_arguments() -> None:
    with pytest.raises(TypeError, match="scheduler"):
        Flowable.just(1).sample(Flowable.never(), TestScheduler())
    with pytest.raises(TypeError, match="emit_last"):
        Flowable.just(1).sample(Flowable.never(), emit_last="yes")  # type: ignore[arg-type]


# -- debounce(selector) --------------------------------------------------------------------------


def test_debounce_selector_per_element_quiet_periods() -> None:
    ts = TestScheduler()
    src: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(src).debounce(lambda x: Flowable.timer(x, ts)).test()
    src.next(2)  # quiet period 2
    ts.advance_by(1)
    src.next(1)  # replaces 2; quiet period 1
    ts.advance_by(1)
    sub.assert_values(1)
    src.next(5)
    src.complete()  # the pending element at once, then completion
    sub.assert_result(1, 5).assert_no_violations()
    assert ts.pending == 0


def test_debounce_selector_empty_publisher_emits_at_once() -> None:
    Flowable.just(1, 2, 3).debounce(lambda x: Flowable.empty()).test().assert_result(1, 2, 3).assert_no_violations()


def test_debounce_selector_never_keeps_only_the_last() -> None:
    Flowable.just(1, 2, 3).debounce(lambda x: Flowable.never()).test().assert_result(3).assert_no_violations()


def test_debounce_selector_cancels_the_previous_debouncer() -> None:
    pubs: list[TestPublisher[int]] = []

    def sel(x: int) -> TestPublisher[int]:
        p: TestPublisher[int] = TestPublisher.create()
        pubs.append(p)
        return p

    src: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(src).debounce(sel).test()
    src.next(1)
    src.next(2)
    assert pubs[0].was_cancelled and not pubs[1].was_cancelled
    pubs[1].next(0)
    sub.assert_values(2)
    assert pubs[1].was_cancelled
    src.complete()
    sub.assert_result(2).assert_no_violations()


def _model_debounce_selector(events: list[tuple[int, int]]) -> list[int]:
    out = []
    for i, (t, d) in enumerate(events):
        if i + 1 == len(events) or events[i + 1][0] - t >= d:
            out.append(d)
    return out


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(1, 4)), max_size=20))
def test_property_debounce_selector_matches_model(gaps_and_delays: list[tuple[int, int]]) -> None:
    events = []
    t = 0
    for gap, d in gaps_and_delays:
        t += gap
        events.append((t, d))
    ts = TestScheduler()
    src: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(src).debounce(lambda d: Flowable.timer(d, ts)).test()
    for at, d in events:
        ts.advance_to(at)
        src.next(d)
    src.complete()
    sub.assert_result(*_model_debounce_selector(events)).assert_no_violations()


def test_debounce_selector_missing_backpressure() -> None:
    src: TestPublisher[int] = TestPublisher.create()
    sub: TestSubscriber[int] = TestSubscriber(0)
    Flowable.from_publisher(src).debounce(lambda x: Flowable.empty()).subscribe(sub)
    src.next(1)
    sub.assert_error(MissingBackpressureError, match="debounce").assert_no_violations()
    assert src.was_cancelled


def test_debounce_selector_raising_none_and_non_publisher() -> None:
    def boom(x: int) -> Flowable[int]:
        if x == 2:
            raise Boom("selector")
        return Flowable.never()

    check_raising(lambda f: f.debounce(boom), [1, 2, 3])
    Flowable.just(1).hide().debounce(lambda x: None).test().assert_error(NoneElementError).assert_no_violations()  # type: ignore[arg-type,return-value]
    Flowable.just(1).hide().debounce(lambda x: 5).test().assert_error(TypeError).assert_no_violations()  # type: ignore[arg-type,return-value]


def test_debounce_selector_debouncer_error_fails_the_stream() -> None:
    src: TestPublisher[int] = TestPublisher.create()
    sub = Flowable.from_publisher(src).debounce(lambda x: Flowable.error(Boom("d"))).test()
    src.next(1)
    sub.assert_error(Boom).assert_no_values().assert_no_violations()
    assert src.was_cancelled


def test_debounce_selector_bad_arguments() -> None:
    with pytest.raises(TypeError, match="scheduler"):
        Flowable.just(1).debounce(lambda x: Flowable.never(), TestScheduler())  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        Flowable.just(1).debounce("x")  # type: ignore[call-overload]


# -- delay(selector) -----------------------------------------------------------------------------


def test_delay_selector_orders_by_delay_end() -> None:
    ts = TestScheduler()
    sub = Flowable.just(3, 1, 2).delay(lambda x: Flowable.timer(x, ts)).test()
    ts.advance_by(1)
    sub.assert_values(1)
    ts.advance_by(2)
    sub.assert_result(1, 2, 3).assert_no_violations()


def test_delay_selector_empty_indicator_and_first_element_only() -> None:
    Flowable.just(1, 2).delay(lambda x: Flowable.empty()).test().assert_result(1, 2).assert_no_violations()
    ind: TestPublisher[str] = TestPublisher.create()
    sub = Flowable.just(7).delay(lambda x: ind).test()
    assert ind.request_calls == [1]  # its first signal is enough
    ind.next("a")
    sub.assert_result(7).assert_no_violations()
    assert ind.was_cancelled


def test_delay_selector_backpressure_one_at_a_time() -> None:
    sub: TestSubscriber[int] = TestSubscriber(0)
    Flowable.range(0, 5).delay(lambda x: Flowable.empty()).subscribe(sub)
    sub.assert_no_values()
    for i in range(5):
        sub.request(1)
        assert sub.values == list(range(i + 1))
    sub.assert_complete().assert_no_violations()


def test_delay_selector_errors() -> None:
    def boom(x: int) -> Flowable[int]:
        if x == 2:
            raise Boom("selector")
        return Flowable.empty()

    check_raising(lambda f: f.delay(boom), [1, 2, 3])
    Flowable.just(1).delay(lambda x: Flowable.error(Boom("ind"))).test().assert_error(Boom).assert_no_violations()
    Flowable.just(1).delay(lambda x: None).test().assert_error(NoneElementError).assert_no_violations()  # type: ignore[arg-type,return-value]


def test_delay_selector_delay_error_waits_for_pending() -> None:
    ts = TestScheduler()
    src = Flowable.concat(Flowable.just(1), Flowable.error(Boom("up")))
    sub = src.delay(lambda x: Flowable.timer(1.0, ts), delay_error=True).test()
    sub.assert_no_values().assert_no_errors()
    ts.advance_by(1)
    sub.assert_values(1).assert_error(Boom).assert_no_violations()
    sub2 = src.delay(lambda x: Flowable.timer(1.0, ts)).test()
    sub2.assert_no_values().assert_error(Boom).assert_no_violations()


def test_delay_selector_bad_arguments() -> None:
    with pytest.raises(TypeError, match="scheduler"):
        Flowable.just(1).delay(lambda x: Flowable.never(), TestScheduler())  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="delay_error"):
        Flowable.just(1).delay(lambda x: Flowable.never(), delay_error=1)  # type: ignore[arg-type]


def test_duration_forms_still_work() -> None:
    ts = TestScheduler()
    a: Any = Flowable.just(1, 2).delay(1.0, ts).test()
    ts.advance_by(1)
    a.assert_result(1, 2)
    b = Flowable.just(1, 2).debounce(1.0, ts).test()
    b.assert_result(2)
    c = Flowable.interval(0.25, scheduler=ts).sample(1.1, ts).take(2).test()
    ts.advance_by(3)
    c.assert_result(3, 7).assert_no_violations()


def test_sample_publisher_subscribes_the_sampler_before_requesting_the_source() -> None:
    # RxJava's order: a sampler that completes at once ends the stream before the source emits
    Flowable.range(0, 5).sample(Flowable.empty(), emit_last=True).test().assert_result().assert_no_violations()
    Flowable.range(0, 5).sample(Flowable.never(), emit_last=True).test().assert_result(4).assert_no_violations()
    Flowable.range(0, 5).hide().sample(Flowable.never()).test().assert_result().assert_no_violations()


# -- two real threads ----------------------------------------------------------------------------


def test_sample_publisher_race_sampler_thread_vs_source_thread() -> None:
    from rstreams import schedulers

    src = Flowable.range(0, 20_000).subscribe_on(schedulers.new_thread())
    sampler = Flowable.interval(0.0002, scheduler=schedulers.new_thread()).on_backpressure_drop()
    ts = src.sample(sampler, emit_last=True).on_backpressure_buffer().test()
    ts.await_done(10).assert_complete().assert_no_violations()
    assert ts.values == sorted(set(ts.values))  # samples move forward, none twice
    assert ts.values[-1] == 19_999  # emit_last


def test_debounce_selector_race_debouncer_threads_vs_source_thread() -> None:
    from rstreams import schedulers

    src = Flowable.range(0, 3_000).subscribe_on(schedulers.new_thread())
    ts = src.debounce(lambda x: Flowable.timer(0.00005, schedulers.computation())).on_backpressure_buffer().test()
    ts.await_done(10).assert_complete().assert_no_violations()
    assert ts.values == sorted(set(ts.values))
    assert ts.values[-1] == 2_999  # the pending element is emitted at completion


def test_delay_selector_race_indicator_threads() -> None:
    from rstreams import schedulers

    ts = Flowable.range(0, 2_000).delay(lambda x: Flowable.timer(0.0001 * (x % 3), schedulers.computation())).test()
    ts.await_done(10).assert_complete().assert_no_violations()
    assert sorted(ts.values) == list(range(2_000))
