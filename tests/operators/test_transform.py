"""flat_map_iterable, scan and buffer: scenarios, raising callbacks, demand translation (rule 1.1),
rule 3.9, and property tests (fused and hidden give the plain-Python model's output)."""

from __future__ import annotations

import itertools
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams import Flowable
from rstreams.errors import NoneElementError
from rstreams.testing import TestPublisher, TestSubscriber

from .harness import Boom, check_raising, check_scenarios

MAX = 2**63 - 1

lists = st.lists(st.integers(-5, 20), max_size=30)
patterns = st.lists(st.one_of(st.integers(1, 5), st.just(MAX)), max_size=8)


def run_pattern(f: Flowable[Any], pattern: list[int]) -> TestSubscriber[Any]:
    """Request ``pattern`` one call at a time, then the rest unbounded."""
    ts: TestSubscriber[Any] = TestSubscriber(0)
    f.subscribe(ts)
    total = 0
    for n in pattern:
        ts.request(n)
        total = min(MAX, total + n)
        assert len(ts.values) <= total
    ts.request(MAX)
    ts.await_done(5)
    return ts.assert_no_violations()


def both(data: list[Any]) -> list[tuple[str, Flowable[Any]]]:
    return [("fused", Flowable.from_iterable(data)), ("hidden", Flowable.from_iterable(data).hide())]


def raiser(*_: Any) -> Any:
    raise Boom("callback")


# ----------------------------------------------------------------------------------------------
# flat_map_iterable


def fmi_model(d: list[int]) -> list[int]:
    return [y for x in d for y in range(x % 4)]


@pytest.mark.parametrize("data", [[], [0], [1, 2, 3], list(range(40)), [0, 0, 0, 5]])
def test_flat_map_iterable_scenarios(data: list[int]) -> None:
    check_scenarios(lambda f: f.flat_map_iterable(lambda x: range(x % 4)), data, fmi_model)


def test_flat_map_iterable_many_upstream_elements_replenish() -> None:
    data = list(range(1000))
    check_scenarios(lambda f: f.flat_map_iterable(lambda x: [x] if x % 3 else []), data, [x for x in data if x % 3])


def test_flat_map_iterable_raising_mapper() -> None:
    check_raising(lambda f: f.flat_map_iterable(raiser), [1, 2])


def test_flat_map_iterable_raising_inner_iterator() -> None:
    def gen(x: int) -> Any:
        yield x
        raise Boom("inner")

    for _, src in both([1, 2]):
        src.flat_map_iterable(gen).test().assert_values(1).assert_error(Boom).assert_no_violations()


@pytest.mark.parametrize("result", [None, 5])
def test_flat_map_iterable_mapper_returns_none_or_non_iterable(result: Any) -> None:
    for _, src in both([1, 2]):
        ts = src.flat_map_iterable(lambda x: result).test()
        ts.assert_error(TypeError, match="flat_map_iterable").assert_no_values().assert_no_violations()


def test_flat_map_iterable_none_inside_inner() -> None:
    for _, src in both([1, 2]):
        ts = src.flat_map_iterable(lambda x: [x, None]).test()
        ts.assert_values(1).assert_error(NoneElementError, match="flat_map_iterable").assert_no_violations()


def test_flat_map_iterable_backpressure_within_one_inner() -> None:
    for _, src in both([1]):
        ts = src.flat_map_iterable(lambda x: range(100)).test(3)
        ts.assert_values(0, 1, 2).assert_not_complete()
        ts.request(97)
        ts.assert_value_count(100).assert_complete().assert_no_violations()


def test_flat_map_iterable_cross_thread_upstream() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.from_publisher(tp).flat_map_iterable(lambda x: [x, x]).subscribe(ts)

    def produce() -> None:
        for i in range(50):
            tp.next(i)
        tp.complete()

    t = threading.Thread(target=produce)
    t.start()
    for _ in range(200):
        ts.request(1)
    t.join(5)
    ts.request(MAX)
    ts.await_done(5).assert_values(*[y for i in range(50) for y in (i, i)]).assert_complete()
    ts.assert_no_violations()


@settings(max_examples=50, deadline=None)
@given(data=lists, pattern=patterns)
def test_property_flat_map_iterable(data: list[int], pattern: list[int]) -> None:
    for _, src in both(data):
        run_pattern(src.flat_map_iterable(lambda x: range(x % 4)), pattern).assert_result(*fmi_model(data))


# ----------------------------------------------------------------------------------------------
# scan


@pytest.mark.parametrize("data", [[], [1], list(range(10))])
def test_scan_scenarios(data: list[int]) -> None:
    check_scenarios(lambda f: f.scan(lambda a, b: a + b), data, lambda d: list(itertools.accumulate(d)))
    check_scenarios(
        lambda f: f.scan(lambda a, b: a + b, 100), data, lambda d: list(itertools.accumulate(d, initial=100))
    )


def test_scan_raising_accumulator() -> None:
    check_raising(lambda f: f.scan(raiser), [1, 2, 3])
    check_raising(lambda f: f.scan(raiser, 0), [1, 2, 3])


def test_scan_none_result() -> None:
    for _, src in both([1, 2, 3]):
        src.scan(lambda a, b: None).test().assert_values(1).assert_error(TypeError, match="scan").assert_no_violations()
        src.scan(lambda a, b: None, 0).test().assert_values(0).assert_error(
            TypeError, match="scan"
        ).assert_no_violations()


def test_scan_seed_waits_for_demand_and_completion_waits_for_seed() -> None:
    for _, src in [("empty", Flowable.empty()), ("hidden empty", Flowable.empty().hide())]:
        ts = src.scan(lambda a, b: a + b, 7).test(0)
        ts.assert_no_values().assert_not_complete()
        ts.request(1)
        ts.assert_result(7).assert_no_violations()


def test_scan_seed_error_overtakes_seed() -> None:
    ts = Flowable.error(Boom("x")).scan(lambda a, b: a + b, 7).test(0)
    ts.assert_no_values().assert_error(Boom).assert_no_violations()


def test_scan_seed_cross_thread_requests() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.from_publisher(tp).scan(lambda a, b: a + b, 0).subscribe(ts)
    t = threading.Thread(target=lambda: [ts.request(1) for _ in range(30)])
    t.start()
    t.join(5)
    for i in range(1, 30):
        tp.next(i)
    tp.complete()
    ts.await_done(5).assert_result(*itertools.accumulate(range(1, 30), initial=0)).assert_no_violations()


def test_scan_seed_is_not_none() -> None:
    with pytest.raises(TypeError):
        Flowable.just(1).scan(lambda a, b: a, None)


@settings(max_examples=50, deadline=None)
@given(data=lists, pattern=patterns, seeded=st.booleans())
def test_property_scan(data: list[int], pattern: list[int], seeded: bool) -> None:
    for _, src in both(data):
        if seeded:
            f = src.scan(lambda a, b: a * 2 + b, 1)
            want = list(itertools.accumulate(data, lambda a, b: a * 2 + b, initial=1))
        else:
            f = src.scan(lambda a, b: a * 2 + b)
            want = list(itertools.accumulate(data, lambda a, b: a * 2 + b))
        run_pattern(f, pattern).assert_result(*want)


# ----------------------------------------------------------------------------------------------
# buffer


def buffer_model(d: list[Any], count: int, skip: int) -> list[list[Any]]:
    return [d[i : i + count] for i in range(0, len(d), skip) if d[i : i + count]]


@pytest.mark.parametrize(("count", "skip"), [(1, 1), (3, 3), (3, 1), (3, 2), (2, 4), (1, 3), (5, 5)])
@pytest.mark.parametrize("data", [[], [1], list(range(10)), list(range(12))])
def test_buffer_scenarios(count: int, skip: int, data: list[int]) -> None:
    check_scenarios(lambda f: f.buffer(count, skip), data, lambda d: buffer_model(d, count, skip))


def test_buffer_default_skip_and_fused_sizer() -> None:
    Flowable.range(0, 5).buffer(2).test().assert_result([0, 1], [2, 3], [4]).assert_no_violations()
    # the sizer lets the fused driver complete right after the last list
    Flowable.range(0, 4).buffer(2).test(2).assert_result([0, 1], [2, 3]).assert_no_violations()


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_buffer_bad_arguments(bad: Any) -> None:
    with pytest.raises((TypeError, ValueError)):
        Flowable.range(0, 3).buffer(bad)
    with pytest.raises((TypeError, ValueError)):
        Flowable.range(0, 3).buffer(2, bad)


def test_buffer_none_element_fused_and_hidden() -> None:
    for _, src in both([1, 2, 3, None]):
        src.buffer(2).test().assert_values([1, 2]).assert_error(TypeError).assert_no_violations()


def test_buffer_overlapping_tail_is_emitted_under_demand_after_completion() -> None:
    ts = Flowable.range(0, 4).hide().buffer(3, 1).test(1)
    ts.assert_values([0, 1, 2]).assert_not_complete()
    ts.request(1)
    ts.assert_values([0, 1, 2], [1, 2, 3]).assert_not_complete()
    ts.request(1)
    ts.assert_values([0, 1, 2], [1, 2, 3], [2, 3]).assert_not_complete()
    ts.request(5)
    ts.assert_result([0, 1, 2], [1, 2, 3], [2, 3], [3]).assert_no_violations()


def test_buffer_cross_thread_tail() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[list[int]] = TestSubscriber(0)
    Flowable.from_publisher(tp).buffer(3, 1).subscribe(ts)
    ts.request(2)
    t = threading.Thread(target=lambda: tp.next(0, 1, 2, 3).complete())
    t.start()
    for _ in range(10):
        ts.request(1)
    t.join(5)
    ts.await_done(5).assert_result([0, 1, 2], [1, 2, 3], [2, 3], [3]).assert_no_violations()


@settings(max_examples=50, deadline=None)
@given(data=lists, pattern=patterns, count=st.integers(1, 5), skip=st.integers(1, 6))
def test_property_buffer(data: list[int], pattern: list[int], count: int, skip: int) -> None:
    want = buffer_model(data, count, skip)
    for _, src in both(data):
        run_pattern(src.buffer(count, skip), pattern).assert_result(*want)


# ----------------------------------------------------------------------------------------------
# rule 3.3: request from inside on_next, one at a time, over a stream longer than the recursion limit


@pytest.mark.parametrize("make", [lambda f: f.flat_map_iterable(42), lambda f: f.scan(42), lambda f: f.scan(42, 0)])
def test_non_callable_arguments_fail_at_assembly(make: Any) -> None:
    for _, src in both([1]):
        with pytest.raises(TypeError):
            make(src)
