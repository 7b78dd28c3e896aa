"""on_backpressure_buffer / on_backpressure_drop / on_backpressure_latest / rebatch_requests."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams import BackpressureOverflow, BackpressureStrategy, Flowable, MissingBackpressureError
from rstreams.testing import TestPublisher, TestSubscriber

from .harness import check_scenarios

OV = BackpressureOverflow
MAX = 2**63 - 1


def sources(data: list[Any]) -> list[Flowable[Any]]:
    return [Flowable.from_iterable(data), Flowable.from_iterable(data).hide()]


def requests_of(src: Flowable[Any], log: list[int]) -> Flowable[Any]:
    return src.do_on_request(log.append)


def pusher_thread(
    items: list[Any], strategy: BackpressureStrategy = BackpressureStrategy.MISSING
) -> Flowable[Any]:
    """A hot-ish producer on its own thread (MISSING: ignores demand)."""

    def push(e: Any) -> None:
        def run() -> None:
            for x in items:
                if e.is_cancelled:
                    return
                e.on_next(x)
            e.on_complete()

        threading.Thread(target=run, daemon=True).start()

    return Flowable.create(push, strategy)


# ---------------------------------------------------------------------------------------------
# harness scenarios (lossless configurations)


@pytest.mark.parametrize(
    "op",
    [
        lambda f: f.on_backpressure_buffer(),
        lambda f: f.on_backpressure_buffer(100),
        lambda f: f.on_backpressure_buffer(100, OV.DROP_OLDEST),
        lambda f: f.on_backpressure_buffer(100, OV.DROP_LATEST),
        lambda f: f.rebatch_requests(1),
        lambda f: f.rebatch_requests(3),
        lambda f: f.rebatch_requests(64),
    ],
    ids=[
        "buffer",
        "buffer-100",
        "drop-oldest-100",
        "drop-latest-100",
        "rebatch-1",
        "rebatch-3",
        "rebatch-64",
    ],
)
@pytest.mark.parametrize("data", [[], [1], list(range(10)), list(range(57))], ids=["0", "1", "10", "57"])
def test_scenarios_lossless(op: Any, data: list[int]) -> None:
    check_scenarios(op, data, data)


def test_scenarios_drop_and_latest_with_unbounded_demand() -> None:
    data = list(range(20))
    for op in (lambda f: f.on_backpressure_drop(), lambda f: f.on_backpressure_latest()):
        for src in sources(data):
            op(src).test().assert_result(*data).assert_no_violations()


def test_raising_on_dropped_cancels_and_errors() -> None:
    from .harness import Boom

    def boom(x: Any) -> None:
        raise Boom("dropped")

    for make in (
        lambda f: f.on_backpressure_drop(boom),
        lambda f: f.on_backpressure_buffer(2, OV.DROP_OLDEST, boom),
        lambda f: f.on_backpressure_buffer(2, OV.DROP_LATEST, boom),
    ):
        cancelled: list[int] = []
        ts = make(Flowable.range(0, 10).hide().do_on_cancel(lambda c=cancelled: c.append(1))).test(0)
        ts.assert_error(Boom).assert_no_values().assert_no_violations()
        assert cancelled == [1]


# ---------------------------------------------------------------------------------------------
# on_backpressure_buffer


def test_buffer_requests_unbounded_upstream() -> None:
    log: list[int] = []
    requests_of(Flowable.range(0, 5), log).on_backpressure_buffer().test(1).assert_values(0)
    assert log == [MAX]


def test_buffer_overflow_error_is_immediate_and_cancels_upstream() -> None:
    dropped: list[int] = []
    cancelled: list[int] = []
    src = Flowable.range(0, 10).hide().do_on_cancel(lambda: cancelled.append(1))
    ts = src.on_backpressure_buffer(3, OV.ERROR, dropped.append).test(1)
    # 0 emitted, 1..3 buffered, 4 overflows: error at once, buffered elements discarded
    ts.assert_values(0).assert_error(MissingBackpressureError).assert_no_violations()
    assert "on_backpressure_buffer" in str(ts.errors[0]) and "DROP_OLDEST" in str(ts.errors[0])
    assert dropped == [4]
    assert cancelled == [1]


def test_buffer_drop_oldest() -> None:
    dropped: list[int] = []
    ts = Flowable.range(0, 10).on_backpressure_buffer(3, OV.DROP_OLDEST, dropped.append).test(1)
    ts.assert_values(0).assert_not_complete()
    ts.request(10).assert_result(0, 7, 8, 9).assert_no_violations()
    assert dropped == [1, 2, 3, 4, 5, 6]


def test_buffer_drop_latest_drops_newest_buffered() -> None:
    dropped: list[int] = []
    ts = Flowable.range(0, 10).on_backpressure_buffer(3, OV.DROP_LATEST, dropped.append).test(1)
    ts.request(10).assert_result(0, 1, 2, 9).assert_no_violations()
    assert dropped == [3, 4, 5, 6, 7, 8]


def test_buffer_upstream_error_is_not_delayed() -> None:
    src = Flowable.concat(Flowable.range(0, 5), Flowable.error(KeyError("k")))
    ts = src.on_backpressure_buffer().test(2)
    ts.assert_values(0, 1).assert_error(KeyError).assert_no_violations()


def test_buffer_completion_waits_for_buffered() -> None:
    ts = Flowable.range(0, 5).on_backpressure_buffer().test(2)
    ts.assert_values(0, 1).assert_not_complete()
    ts.request(3).assert_result(0, 1, 2, 3, 4).assert_no_violations()


def test_buffer_bad_arguments() -> None:
    f = Flowable.range(0, 3)
    with pytest.raises(ValueError):
        f.on_backpressure_buffer(0)
    with pytest.raises(TypeError):
        f.on_backpressure_buffer(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        f.on_backpressure_buffer(3, "drop")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        f.on_backpressure_buffer(3, OV.ERROR, 5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        f.on_backpressure_drop(5)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        f.rebatch_requests(0)
    with pytest.raises(TypeError):
        f.rebatch_requests(True)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_buffer_producer_thread_consumer_requests_randomly(seed: int) -> None:
    rnd = random.Random(seed)
    n = 3000
    ts: TestSubscriber[int] = TestSubscriber(0)
    pusher_thread(list(range(n))).on_backpressure_buffer().subscribe(ts)
    asked = 0
    while asked < n:
        k = rnd.randint(1, 200)
        ts.request(k)
        asked += k
        if rnd.random() < 0.3:
            ts.await_count(min(asked, n) // 2, 5)
    ts.await_done(10).assert_result(*range(n)).assert_no_violations()


def test_buffer_unbounded_fast_path_with_producer_thread_and_cancel() -> None:
    for seed in range(5):
        rnd = random.Random(seed)
        ts: TestSubscriber[int] = TestSubscriber()
        pusher_thread(list(range(20_000))).on_backpressure_buffer().subscribe(ts)
        ts.await_count(rnd.randint(1, 5000), 5)
        ts.cancel()
        vals = ts.values
        assert vals == list(range(len(vals)))
        ts.assert_no_violations()


def test_buffer_request_after_unbounded_switch_keeps_order() -> None:
    """The consumer turns unbounded while the producer is mid-stream (switch to direct mode)."""
    for seed in range(5):
        rnd = random.Random(seed)
        ts: TestSubscriber[int] = TestSubscriber(0)
        pusher_thread(list(range(5000))).on_backpressure_buffer().subscribe(ts)
        for _ in range(rnd.randint(1, 20)):
            ts.request(rnd.randint(1, 50))
        ts.request(MAX)
        ts.await_done(5).assert_result(*range(5000)).assert_no_violations()


@pytest.mark.parametrize("mode", [OV.DROP_OLDEST, OV.DROP_LATEST])
def test_buffer_dropping_with_producer_thread_loses_nothing_silently(mode: BackpressureOverflow) -> None:
    rnd = random.Random(7)
    n = 3000
    dropped: list[int] = []
    ts: TestSubscriber[int] = TestSubscriber(0)
    pusher_thread(list(range(n))).on_backpressure_buffer(8, mode, dropped.append).subscribe(ts)
    while not ts.completions:
        ts.request(rnd.randint(1, 20))
        if rnd.random() < 0.1:
            time.sleep(0.0005)
        if len(ts.values) + len(dropped) >= n and ts.completions:
            break
    ts.await_done(5).assert_complete().assert_no_violations()
    assert sorted(ts.values + dropped) == list(range(n)), "each element emitted or dropped, exactly once"
    assert ts.values == sorted(ts.values)


# ---------------------------------------------------------------------------------------------
# on_backpressure_drop / latest


def test_drop_requests_unbounded_and_drops_without_demand() -> None:
    log: list[int] = []
    dropped: list[int] = []
    ts = requests_of(Flowable.range(0, 10), log).on_backpressure_drop(dropped.append).test(3)
    ts.assert_result(0, 1, 2).assert_no_violations()
    assert dropped == list(range(3, 10))
    assert log == [MAX]


def test_drop_with_producer_thread() -> None:
    dropped: list[int] = []
    ts: TestSubscriber[int] = TestSubscriber(0)
    pusher_thread(list(range(5000))).on_backpressure_drop(dropped.append).subscribe(ts)
    rnd = random.Random(3)
    while not ts.completions:
        ts.request(rnd.randint(1, 10))
        time.sleep(0.0002)
    ts.assert_complete().assert_no_violations()
    assert sorted(ts.values + dropped) == list(range(5000))


def test_latest_keeps_only_latest() -> None:
    log: list[int] = []
    ts = requests_of(Flowable.range(0, 10), log).on_backpressure_latest().test(2)
    ts.assert_values(0, 1).assert_not_complete()
    ts.request(5).assert_result(0, 1, 9).assert_no_violations()
    assert log == [MAX]


def test_latest_error_is_not_delayed() -> None:
    src = Flowable.concat(Flowable.range(0, 5), Flowable.error(KeyError("k")))
    src.on_backpressure_latest().test(1).assert_values(0).assert_error(KeyError).assert_no_violations()


def test_latest_with_producer_thread_ends_with_last_element() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    pusher_thread(list(range(5000))).on_backpressure_latest().subscribe(ts)
    rnd = random.Random(5)
    while not ts.completions:
        ts.request(rnd.randint(1, 3))
        time.sleep(0.0002)
    ts.assert_complete().assert_no_violations()
    assert ts.values[-1] == 4999 and ts.values == sorted(set(ts.values))


# ---------------------------------------------------------------------------------------------
# rebatch_requests


@pytest.mark.parametrize("n,limit", [(1, 1), (4, 3), (10, 8), (128, 96)])
def test_rebatch_upstream_sees_fixed_batches(n: int, limit: int) -> None:
    log: list[int] = []
    data = list(range(500))
    ts = requests_of(Flowable.from_iterable(data).hide(), log).rebatch_requests(n).test()
    ts.assert_result(*data).assert_no_violations()
    assert log[0] == n and set(log[1:]) == {limit}


def test_rebatch_honours_downstream_demand() -> None:
    log: list[int] = []
    ts = requests_of(Flowable.range(0, 100), log).rebatch_requests(8).test(3)
    ts.assert_values(0, 1, 2)
    assert log == [8]
    ts.request(3)  # 6 consumed: one replenish of 6
    ts.assert_values(*range(6))
    assert log == [8, 6]
    ts.request(1000).assert_result(*range(100)).assert_no_violations()


def test_rebatch_delays_errors_behind_buffered_elements() -> None:
    src = Flowable.concat(Flowable.range(0, 5), Flowable.error(KeyError("k")))
    ts = src.rebatch_requests(8).test(2)
    ts.assert_values(0, 1).assert_no_errors()
    ts.request(3).assert_values(0, 1, 2, 3, 4).assert_error(KeyError).assert_no_violations()


def test_rebatch_bounded_queue_overflow_is_missing_backpressure() -> None:
    """An upstream that ignores the batch size overflows the bounded queue of n."""
    ts = Flowable.create(lambda e: [e.on_next(i) for i in range(10)], BackpressureStrategy.MISSING)
    out = ts.rebatch_requests(4).test(0)
    out.assert_no_errors()  # delay_error: the error waits behind the 4 buffered elements
    out.request(10).assert_values(0, 1, 2, 3).assert_error(MissingBackpressureError).assert_no_violations()
    assert "rebatch_requests" in str(out.errors[0])


@pytest.mark.parametrize("seed", [1, 2])
def test_rebatch_with_producer_thread(seed: int) -> None:
    rnd = random.Random(seed)
    ts: TestSubscriber[int] = TestSubscriber(0)
    log: list[int] = []
    src = pusher_thread(list(range(3000)), BackpressureStrategy.BUFFER).do_on_request(log.append)
    src.rebatch_requests(16).subscribe(ts)
    while not ts.completions:
        ts.request(rnd.randint(1, 40))
        time.sleep(0.0002)
    ts.assert_result(*range(3000)).assert_no_violations()
    assert log[0] == 16 and set(log[1:]) == {12}


# ---------------------------------------------------------------------------------------------
# properties: random data, random request patterns, fused (from_iterable) and unfused (hide)

requests_st = st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=12)


def run(f: Flowable[Any], requests: list[int]) -> TestSubscriber[Any]:
    ts: TestSubscriber[Any] = TestSubscriber(requests[0])
    f.subscribe(ts)
    for n in requests[1:]:
        ts.request(n)
    ts.assert_no_violations()
    return ts


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(), max_size=40), requests_st, st.booleans())
def test_property_buffer_and_rebatch_are_lossless(data: list[int], requests: list[int], hide: bool) -> None:
    total = sum(requests)
    for make in (lambda f: f.on_backpressure_buffer(), lambda f: f.rebatch_requests(3)):
        src = Flowable.from_iterable(data)
        ts = run(make(src.hide() if hide else src), requests)
        assert ts.values == data[:total]
        assert ts.completions == (1 if total >= len(data) else 0)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(), max_size=40),
    requests_st,
    st.booleans(),
    st.integers(min_value=1, max_value=6),
    st.sampled_from([OV.DROP_OLDEST, OV.DROP_LATEST, OV.ERROR]),
)
def test_property_bounded_buffer_matches_model(
    data: list[int], requests: list[int], hide: bool, cap: int, mode: BackpressureOverflow
) -> None:
    first, total = requests[0], sum(requests)
    head, rest = data[:first], data[first:]
    if len(rest) <= cap:
        buffered, dropped, error = rest, [], False
    elif mode is OV.DROP_OLDEST:
        buffered, dropped, error = rest[-cap:], rest[:-cap], False
    elif mode is OV.DROP_LATEST:
        buffered, dropped, error = rest[: cap - 1] + rest[-1:], rest[cap - 1 : -1], False
    else:
        buffered, dropped, error = [], [rest[cap]], True
    got_dropped: list[int] = []
    src = Flowable.from_iterable(data)
    ts = run((src.hide() if hide else src).on_backpressure_buffer(cap, mode, got_dropped.append), requests)
    assert got_dropped == dropped
    if error:
        assert ts.values == head
        ts.assert_error(MissingBackpressureError)
    else:
        assert ts.values == head + buffered[: max(0, total - first)]
        assert ts.completions == (1 if total - first >= len(buffered) else 0)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(), max_size=40), requests_st, st.booleans())
def test_property_drop_and_latest_match_model(data: list[int], requests: list[int], hide: bool) -> None:
    first, total = requests[0], sum(requests)
    head, rest = data[:first], data[first:]
    src = Flowable.from_iterable(data)
    src = src.hide() if hide else src
    dropped: list[int] = []
    ts = run(src.on_backpressure_drop(dropped.append), requests)
    assert ts.values == head and dropped == rest and ts.completions == 1
    ts = run(src.on_backpressure_latest(), requests)
    assert ts.values == head + (rest[-1:] if total > first else [])
    assert ts.completions == (1 if not rest or total > first else 0)


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
