"""Session 5: the leftovers of the session 4 audit (flat_map after its outer completed, zip with an
empty source). Every test subscribes through TestSubscriber and ends with assert_no_violations()."""

from __future__ import annotations

from typing import Any

import pytest

from rstreams import Flowable
from rstreams.testing import TestPublisher, TestSubscriber

from .test_semantics_audit_sync import trace as _trace


def test_rule_2_4_flat_map_does_not_cancel_an_outer_that_completed() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    inner: TestPublisher[str] = TestPublisher.create()
    ts: TestSubscriber[str] = Flowable.from_publisher(outer).flat_map(lambda _: inner).test()
    outer.next(1).complete()
    inner.next("a").complete()
    ts.assert_result("a").assert_no_violations()
    outer.assert_not_cancelled()
    inner.assert_not_cancelled()


def test_rule_2_4_flat_map_does_not_cancel_an_outer_that_failed_with_delay_error() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    inner: TestPublisher[str] = TestPublisher.create()
    ts: TestSubscriber[str] = Flowable.from_publisher(outer).flat_map(lambda _: inner, delay_error=True).test()
    outer.next(1).error(ValueError("outer"))
    inner.next("a").complete()
    ts.assert_values("a").assert_error(ValueError).assert_no_violations()
    outer.assert_not_cancelled()


def test_flat_map_inner_error_still_cancels_a_live_outer() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    inner: TestPublisher[str] = TestPublisher.create()
    ts: TestSubscriber[str] = Flowable.from_publisher(outer).flat_map(lambda _: inner).test()
    outer.next(1)
    inner.error(KeyError("inner"))
    ts.assert_failure(KeyError).assert_no_violations()
    outer.assert_was_cancelled()


def test_zip_with_a_leading_empty_source_still_subscribes_and_cancels_the_rest() -> None:
    # RxJava subscribes every source; the ones after the zip ended are cancelled at once.
    subscribed: list[str] = []
    other: TestPublisher[int] = TestPublisher.create()
    src = Flowable.from_publisher(other).do_on_subscribe(lambda _s: subscribed.append("other"))
    ts: TestSubscriber[tuple[int, int]] = Flowable.zip(Flowable.empty(), src).test()
    ts.assert_result().assert_no_violations()
    assert subscribed == ["other"]
    other.assert_was_cancelled()


def test_zip_does_not_subscribe_the_rest_after_a_downstream_cancel_or_an_error() -> None:
    subscribed: list[str] = []
    late = Flowable.just(1).do_on_subscribe(lambda _s: subscribed.append("late"))
    ts: TestSubscriber[tuple[int, int]] = Flowable.zip(Flowable.error(KeyError("first")), late).test()
    ts.assert_failure(KeyError).assert_no_violations()
    assert subscribed == []


# -- flat_map over a batching upstream (the library-internal batch protocol) ------------------------
# A fused range hands flat_map whole batches; the signals must be those of a one-by-one upstream.


def _one_by_one(data: list[int]) -> Flowable[int]:
    """The same elements from a source that emits one per call (no batches)."""

    def gen(state: int, emitter: Any) -> int:
        if state < len(data):
            emitter.on_next(data[state])
        else:
            emitter.on_complete()
        return state + 1

    return Flowable.generate(lambda: 0, gen)


def _mapper(x: int) -> Any:
    if x % 5 == 0:
        return Flowable.empty()
    if x % 5 == 1:
        return Flowable.range(x * 10, 3)  # an inner that is not a scalar
    if x % 5 == 2:
        return Flowable.from_iterable([x, -x]).hide()
    return Flowable.just(x)


@pytest.mark.parametrize("max_concurrency", [1, 3, 128, None])
@pytest.mark.parametrize("pattern", [[1] * 80, [3, 7, 2, 50], [2**63 - 1]])
def test_flat_map_batched_upstream_signals_equal_the_one_by_one_path(max_concurrency: int | None, pattern: list[int]) -> None:
    data = list(range(40))
    batched = _trace(Flowable.range(0, 40).flat_map(_mapper, max_concurrency=max_concurrency), pattern)
    single = _trace(_one_by_one(data).flat_map(_mapper, max_concurrency=max_concurrency), pattern)
    assert batched == single
    assert batched[-1][1] == 1  # completes


def test_flat_map_batched_mapper_error_mid_batch_emits_the_prefix_then_the_error() -> None:
    calls: list[int] = []

    def mapper(x: int) -> Flowable[int]:
        calls.append(x)
        if x == 7:
            raise KeyError("seven")
        return Flowable.just(x)

    ts: TestSubscriber[int] = Flowable.range(0, 100).flat_map(mapper).test()
    ts.assert_failure(KeyError, *range(7)).assert_no_violations()
    assert calls == list(range(8))  # nothing mapped after the failing element


def test_flat_map_batched_mapper_none_mid_batch_is_a_type_error_after_the_prefix() -> None:
    ts: TestSubscriber[int] = Flowable.range(0, 50).flat_map(lambda x: None if x == 3 else Flowable.just(x)).test()  # type: ignore[arg-type,return-value]
    ts.assert_failure(TypeError, 0, 1, 2).assert_no_violations()
    assert "flat_map" in str(ts.errors[0])


def test_flat_map_batched_cancel_from_on_next_stops_at_once() -> None:
    ts: TestSubscriber[int] = TestSubscriber()
    seen: list[int] = []

    def on_next(x: int) -> None:
        seen.append(x)
        if x == 10:
            ts.cancel()

    f = Flowable.range(0, 1000).flat_map(lambda x: Flowable.just(x)).do_on_next(on_next)
    f.subscribe(ts)
    assert seen == list(range(11))
    ts.assert_values(*range(11)).assert_not_complete().assert_no_violations()


def test_concat_map_batched_upstream_with_a_large_prefetch_keeps_order_and_demand() -> None:
    pattern = [1, 2, 5, 100]
    batched = _trace(Flowable.range(0, 30).concat_map(_mapper, prefetch=16), pattern)
    single = _trace(_one_by_one(list(range(30))).concat_map(_mapper, prefetch=16), pattern)
    assert batched == single


# -- merge / zip over batching sources ---------------------------------------------------------------


@pytest.mark.parametrize("pattern", [[1] * 70, [5, 9, 100], [2**63 - 1]])
def test_merge_of_batching_sources_signals_equal_one_by_one_sources(pattern: list[int]) -> None:
    parts = [list(range(i * 20, i * 20 + 20)) for i in range(3)]
    batched = _trace(Flowable.merge(*(Flowable.from_iterable(p) for p in parts), prefetch=8), pattern)
    single = _trace(Flowable.merge(*(_one_by_one(p) for p in parts), prefetch=8), pattern)
    assert sorted(batched[-1][0]) == sorted(single[-1][0]) == list(range(60))
    assert [len(v) for v, _, _ in batched] == [len(v) for v, _, _ in single]  # never more than requested
    assert batched[-1][1] == single[-1][1] == 1


def test_merge_into_a_batch_consumer_sums_every_element_once() -> None:
    srcs = [Flowable.range(i * 1000, 1000) for i in range(8)]
    ts: TestSubscriber[int] = Flowable.merge(*srcs).reduce(lambda a, b: a + b).test()
    ts.assert_result(sum(range(8000))).assert_no_violations()


def test_merge_batched_cancel_from_on_next_stops_at_once() -> None:
    seen: list[int] = []
    ts: TestSubscriber[int] = TestSubscriber()

    def on_next(x: int) -> None:
        seen.append(x)
        if len(seen) == 5:
            ts.cancel()

    Flowable.merge(Flowable.range(0, 500), Flowable.range(500, 500)).do_on_next(on_next).subscribe(ts)
    assert len(seen) == 5
    ts.assert_value_count(5).assert_not_complete().assert_no_violations()


def test_zip_of_batching_sources_pairs_in_order() -> None:
    ts: TestSubscriber[tuple[int, int]] = Flowable.zip(Flowable.range(0, 300), Flowable.range(1000, 250).hide()).test(0)
    ts.request(1)
    ts.assert_values((0, 1000))
    ts.request(2**63 - 1)
    ts.assert_value_count(250).assert_complete().assert_no_violations()
    assert ts.values[-1] == (249, 1249)


@pytest.mark.parametrize("op", ["switch_map", "concat_map_eager"])
@pytest.mark.parametrize("ending", ["complete", "error"])
def test_rule_2_4_switch_map_and_concat_map_eager_do_not_cancel_a_terminated_outer(op: str, ending: str) -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    inner: TestPublisher[int] = TestPublisher.create()
    f = Flowable.from_publisher(outer)
    mapped = f.switch_map(lambda _: inner, delay_error=True) if op == "switch_map" else f.concat_map_eager(lambda _: inner)
    ts: TestSubscriber[int] = mapped.test()
    outer.next(1)
    if ending == "complete":
        outer.complete()
    else:
        outer.error(ValueError("outer"))
    inner.next(5).complete()
    if op == "concat_map_eager" and ending == "error":  # no delay_error: the error ends it at once
        ts.assert_failure(ValueError).assert_no_violations()
        inner.assert_was_cancelled()
    else:
        ts.assert_values(5).assert_no_violations()
        assert ts.completions + len(ts.errors) == 1
    outer.assert_not_cancelled()


def test_window_delivers_its_queued_elements_before_the_upstream_error() -> None:
    # RxJava's windows are UnicastProcessor.create(n, onTerminate): delayError = true
    tp: TestPublisher[int] = TestPublisher.create()
    main: TestSubscriber[Flowable[int]] = Flowable.from_publisher(tp).window(3).test()
    tp.next(1, 2)
    inner: TestSubscriber[int] = TestSubscriber(0)
    main.values[0].subscribe(inner)
    tp.error(KeyError("up"))
    main.assert_error(KeyError).assert_no_violations()
    inner.assert_no_values().assert_no_errors()
    inner.request(1)
    inner.assert_values(1).assert_no_errors()
    inner.request(1)
    inner.assert_failure(KeyError, 1, 2).assert_no_violations()


def test_group_by_group_error_is_not_delayed_behind_queued_elements() -> None:
    # groupBy(delayError = false), RxJava's default: the error drops what the group still holds
    tp: TestPublisher[int] = TestPublisher.create()
    inner: TestSubscriber[int] = TestSubscriber(0)
    # subscribed during on_next (a group not subscribed then is abandoned: RxJava 3)
    main: TestSubscriber[Any] = Flowable.from_publisher(tp).group_by(lambda x: x % 2).do_on_next(lambda g: g.subscribe(inner)).test()
    tp.next(1)
    inner.assert_no_values()
    tp.error(KeyError("up"))
    main.assert_error(KeyError).assert_no_violations()
    inner.assert_failure(KeyError).assert_no_violations()


# -- do_on_terminate, do_after_terminate, do_on_each, blocking_single, blocking_for_each (RxJava) ---


def test_do_on_terminate_runs_before_the_terminal_signal_once_and_not_on_cancel() -> None:
    log: list[str] = []
    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.just(1).do_on_terminate(lambda: log.append("terminate")).do_on_complete(lambda: log.append("complete")).subscribe(ts)
    ts.assert_result(1).assert_no_violations()
    assert log == ["terminate", "complete"]
    log.clear()
    Flowable.error(KeyError("x")).do_on_terminate(lambda: log.append("terminate")).test().assert_failure(KeyError).assert_no_violations()
    assert log == ["terminate"]
    log.clear()
    tp: TestPublisher[int] = TestPublisher.create()
    ts2: TestSubscriber[int] = Flowable.from_publisher(tp).do_on_terminate(lambda: log.append("terminate")).test()
    ts2.cancel()
    assert log == []
    ts2.assert_no_violations()


def test_do_on_terminate_raising_fails_the_stream() -> None:
    def boom() -> None:
        raise KeyError("terminate")

    Flowable.just(1).do_on_terminate(boom).test().assert_failure(KeyError, 1).assert_no_violations()
    ts: TestSubscriber[int] = Flowable.error(ValueError("up")).do_on_terminate(boom).test()
    ts.assert_no_violations()
    assert len(ts.errors) == 1  # both errors, grouped (as do_on_error)
    assert isinstance(ts.errors[0], BaseExceptionGroup)


def test_do_after_terminate_runs_after_the_downstream_and_not_on_cancel() -> None:
    log: list[str] = []
    ts: TestSubscriber[int] = TestSubscriber()
    Flowable.just(1).do_after_terminate(lambda: log.append("after")).do_on_complete(lambda: log.append("complete")).subscribe(ts)
    ts.assert_result(1).assert_no_violations()
    assert log == ["complete", "after"]
    tp: TestPublisher[int] = TestPublisher.create()
    ts2: TestSubscriber[int] = Flowable.from_publisher(tp).do_after_terminate(lambda: log.append("cancelled?")).test()
    ts2.cancel()
    assert log == ["complete", "after"]
    ts2.assert_no_violations()


def test_do_after_terminate_raising_goes_to_the_plugins() -> None:
    from rstreams import plugins

    def boom() -> None:
        raise KeyError("after")

    with plugins.collect_errors() as hooked:
        Flowable.just(1).do_after_terminate(boom).test().assert_result(1).assert_no_violations()
    assert any(isinstance(e, KeyError) for e in hooked)


def test_do_on_each_sees_every_signal_and_a_raising_on_next_reaches_on_error() -> None:
    log: list[Any] = []
    Flowable.just(1, 2).do_on_each(on_next=log.append, on_error=log.append, on_complete=lambda: log.append("done")).test().assert_result(1, 2).assert_no_violations()
    assert log == [1, 2, "done"]
    log.clear()

    def bad(x: int) -> None:
        if x == 2:
            raise KeyError("two")

    ts: TestSubscriber[int] = Flowable.range(0, 5).do_on_each(on_next=bad, on_error=log.append).test()
    ts.assert_failure(KeyError, 0, 1).assert_no_violations()
    assert len(log) == 1 and isinstance(log[0], KeyError)
    with pytest.raises(TypeError):
        Flowable.just(1).do_on_each()


def test_blocking_single() -> None:
    from rstreams.errors import NoSuchElementError

    assert Flowable.just(7).blocking_single() == 7
    assert Flowable.just(7).hide().blocking_single() == 7
    assert Flowable.empty().blocking_single(default=3) == 3
    with pytest.raises(NoSuchElementError):
        Flowable.empty().blocking_single()
    cancelled: list[bool] = []
    with pytest.raises(ValueError, match="more than one"):
        Flowable.range(0, 1000).do_on_cancel(lambda: cancelled.append(True)).blocking_single()
    assert cancelled == [True]
    with pytest.raises(KeyError):
        Flowable.error(KeyError("x")).blocking_single()


def test_blocking_for_each_runs_on_the_calling_thread_and_cancels_when_fn_raises() -> None:
    import threading

    seen: list[tuple[int, str]] = []
    Flowable.range(0, 3).subscribe_on(__import__("rstreams").schedulers.io()).blocking_for_each(
        lambda x: seen.append((x, threading.current_thread().name))
    )
    assert [x for x, _ in seen] == [0, 1, 2]
    assert {name for _, name in seen} == {threading.current_thread().name}
    cancelled: list[bool] = []

    def fn(x: int) -> None:
        if x == 5:
            raise KeyError("five")

    with pytest.raises(KeyError):
        Flowable.range(0, 1000).do_on_cancel(lambda: cancelled.append(True)).blocking_for_each(fn)
    assert cancelled == [True]
    with pytest.raises(ValueError):
        Flowable.concat(Flowable.just(1), Flowable.error(ValueError("up"))).blocking_for_each(lambda x: None)


@pytest.mark.parametrize("delay_error", [False, True])
def test_on_backpressure_buffer_delay_error(delay_error: bool) -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = Flowable.from_publisher(tp).on_backpressure_buffer(delay_error=delay_error).test(0)
    tp.next(1, 2, 3)
    tp.error(KeyError("up"))
    if not delay_error:  # RxJava's default: the error cuts ahead, the buffer is discarded
        ts.assert_failure(KeyError).assert_no_violations()
        return
    ts.assert_no_values().assert_no_errors()
    ts.request(2)
    ts.assert_values(1, 2).assert_no_errors()
    ts.request(1)
    ts.assert_failure(KeyError, 1, 2, 3).assert_no_violations()


def test_on_backpressure_buffer_delay_error_overflow_waits_behind_the_buffer() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = Flowable.from_publisher(tp).on_backpressure_buffer(2, delay_error=True).test(0)
    tp.next(1, 2, 3)  # the third overflows a capacity of 2
    tp.assert_was_cancelled()
    ts.assert_no_values().assert_no_errors()
    ts.request(5)
    ts.assert_values(1, 2)
    assert len(ts.errors) == 1 and type(ts.errors[0]).__name__ == "MissingBackpressureError"
    ts.assert_no_violations()
    with pytest.raises(TypeError):
        Flowable.just(1).on_backpressure_buffer(delay_error=1)  # type: ignore[arg-type]
