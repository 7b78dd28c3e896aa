"""group_by: groups, abandonment, slow groups, demand, cancellation, model properties."""

from __future__ import annotations

import operator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from operators.harness import check_raising, check_scenarios
from rstreams import Flowable
from rstreams.errors import MissingBackpressureError
from rstreams.testing import TestPublisher, TestSubscriber


def _grouped_lists(f: Flowable[Any], key: Any = lambda x: x % 3) -> Flowable[Any]:
    return f.group_by(key).flat_map(lambda g: g.to_list().map(lambda xs: (g.key, xs)))


def _model(data: list[int], key: Any = lambda x: x % 3) -> dict[Any, list[int]]:
    d: dict[Any, list[int]] = {}
    for x in data:
        d.setdefault(key(x), []).append(x)
    return d


def test_group_by_basic() -> None:
    sub = _grouped_lists(Flowable.range(0, 10)).test()
    sub.assert_complete().assert_no_errors().assert_no_violations()
    assert dict(sub.values) == _model(list(range(10)))


def test_group_by_value_fn_and_keys() -> None:
    keys: list[Any] = []
    sub = (
        Flowable.just("apple", "avocado", "banana")
        .group_by(lambda s: s[0], lambda s: s.upper())
        .do_on_next(lambda g: keys.append(g.key))
        .flat_map(lambda g: g.to_list())
        .test()
    )
    sub.assert_result(["APPLE", "AVOCADO"], ["BANANA"]).assert_no_violations()
    assert keys == ["a", "b"]


def test_group_by_scenarios_through_harness() -> None:
    # one key, flattened back with flat_map: the order is kept in every scenario (with several keys
    # the interleaving depends on the request pattern; the property tests below cover that)
    def op(f: Flowable[Any]) -> Flowable[Any]:
        return f.group_by(lambda x: x // 100).flat_map(lambda g: g.map(lambda x: (g.key, x)))

    data = list(range(20))
    check_scenarios(op, data, [(0, x) for x in data])


def test_group_by_raising_key_fn() -> None:
    check_raising(
        lambda f: f.group_by(lambda x: 1 // 0 if x == 3 else x).flat_map(lambda g: g),
        range(10),
        error=ZeroDivisionError,
    )


def test_group_by_value_fn_returning_none() -> None:
    sub = Flowable.range(0, 3).group_by(lambda x: x, lambda x: None).flat_map(lambda g: g).test()
    sub.assert_error(TypeError, match="group_by").assert_no_violations()


def test_group_by_bad_arguments() -> None:
    with pytest.raises(TypeError):
        Flowable.range(0, 3).group_by(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Flowable.range(0, 3).group_by(lambda x: x, buffer_size=0)
    with pytest.raises(TypeError):
        Flowable.range(0, 3).group_by(lambda x: x, value_fn=2)  # type: ignore[arg-type]


def test_group_is_unicast() -> None:
    groups: list[Any] = []
    first: TestSubscriber[int] = TestSubscriber()
    Flowable.just(1).group_by(lambda x: x).subscribe(on_next=lambda g: (groups.append(g), g.subscribe(first)))
    second: TestSubscriber[int] = TestSubscriber()
    groups[0].subscribe(second)
    first.assert_result(1).assert_no_violations()
    second.assert_error(RuntimeError, match="once").assert_no_violations()


def test_abandoned_group_is_evicted_and_keeps_its_first_element() -> None:
    main: TestSubscriber[Any] = TestSubscriber()
    tp: TestPublisher[int] = TestPublisher.create()
    Flowable.from_publisher(tp).group_by(lambda x: x % 2).subscribe(main)
    tp.next(0)  # group 0 emitted, not subscribed during on_next: abandoned
    tp.next(2)  # same key: a NEW group
    assert [g.key for g in main.values] == [0, 0]
    assert main.values[0] is not main.values[1]
    late = main.values[0].test()
    late.assert_result(0).assert_no_violations()  # the creating element, then completion
    main.assert_no_errors().assert_no_violations()
    assert tp.requested >= 127  # abandoned elements were replenished


def test_new_group_without_demand_is_missing_backpressure() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    main: TestSubscriber[Any] = TestSubscriber(1)  # room for one group only
    Flowable.from_publisher(tp).group_by(lambda x: x % 3).subscribe(main)
    tp.next(0)
    tp.next(1)
    main.assert_value_count(1).assert_error(MissingBackpressureError, match="group_by").assert_no_violations()
    assert "key 1" in str(main.errors[0]) and "max_concurrency" in str(main.errors[0])
    assert tp.was_cancelled


def test_flat_map_with_too_little_concurrency_fails_clearly() -> None:
    sub = (
        Flowable.range(0, 100)
        .group_by(lambda x: x % 10)
        .flat_map(lambda g: g.reduce(operator.add), max_concurrency=4)
        .test()
    )
    sub.assert_error(MissingBackpressureError, match="max_concurrency").assert_no_violations()


def test_slow_group_signals_missing_backpressure_instead_of_hanging() -> None:
    slow: TestSubscriber[int] = TestSubscriber(0)
    fast: list[TestSubscriber[int]] = []

    class Main(TestSubscriber[Any]):
        def on_next(self, g: Any) -> None:
            super().on_next(g)
            if g.key == 0:
                g.subscribe(slow)
            else:
                t: TestSubscriber[int] = TestSubscriber()
                fast.append(t)
                g.subscribe(t)

    main = Main()
    tp: TestPublisher[int] = TestPublisher.create()
    Flowable.from_publisher(tp).group_by(lambda x: 0 if x < 1000 else 1, buffer_size=8).subscribe(main)
    tp.next(1000)  # opens the fast group 1
    tp.next(*range(8))  # group 0 parks the whole window: group 1 would starve
    main.assert_error(MissingBackpressureError, match="key 0")
    msg = str(main.errors[0])
    assert "buffer_size=8" in msg and "on_backpressure_buffer" in msg and "max_concurrency" in msg
    slow.assert_error(MissingBackpressureError).assert_no_violations()
    fast[0].assert_values(1000).assert_error(MissingBackpressureError).assert_no_violations()
    assert tp.was_cancelled
    main.assert_no_violations()


def test_single_slow_group_is_plain_backpressure() -> None:
    got: list[TestSubscriber[int]] = []
    main = (
        Flowable.range(0, 100)
        .group_by(lambda x: 0, buffer_size=8)
        .do_on_next(lambda g: (got.append(TestSubscriber(0)), g.subscribe(got[-1])))
        .test()
    )
    main.assert_no_errors()
    got[0].assert_no_values()
    got[0].request(50)
    got[0].assert_value_count(50)
    got[0].request(100)
    got[0].assert_value_count(100).assert_complete().assert_no_violations()
    main.assert_complete().assert_no_violations()


def test_cancel_main_keeps_groups_then_cancels_upstream_with_the_last_group() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    groups: list[TestSubscriber[int]] = []

    class Main(TestSubscriber[Any]):
        def on_next(self, g: Any) -> None:
            super().on_next(g)
            t: TestSubscriber[int] = TestSubscriber()
            groups.append(t)
            g.subscribe(t)

    main = Main()
    Flowable.from_publisher(tp).group_by(lambda x: x % 2).subscribe(main)
    tp.next(0, 1)
    main.cancel()
    tp.next(2, 3, 4)  # existing groups still receive
    assert not tp.was_cancelled
    groups[0].cancel()
    assert not tp.was_cancelled
    groups[1].cancel()
    assert tp.was_cancelled
    assert groups[0].values == [0, 2, 4] and groups[1].values == [1, 3]
    main.assert_value_count(2).assert_no_violations()


def test_cancelled_group_key_starts_a_new_group() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    inner: list[TestSubscriber[int]] = []

    def on_group(g: Any) -> None:
        t: TestSubscriber[int] = TestSubscriber()
        inner.append(t)
        g.take(1).subscribe(t)

    main = Flowable.from_publisher(tp).group_by(lambda x: 0).do_on_next(on_group).test()
    tp.next(1, 2, 3)
    assert len(inner) == 3  # take(1) cancels its group after one element each time
    assert [t.values for t in inner] == [[1], [2], [3]]
    for t in inner:
        t.assert_complete().assert_no_violations()
    main.assert_value_count(3).assert_no_violations()


def test_group_by_errors_reach_main_and_groups() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    inner: list[TestSubscriber[int]] = []
    main = (
        Flowable.from_publisher(tp)
        .group_by(lambda x: x)
        .do_on_next(lambda g: (inner.append(TestSubscriber()), g.subscribe(inner[-1])))
        .test()
    )
    tp.next(1)
    tp.error(KeyError("k"))
    main.assert_error(KeyError).assert_no_violations()
    inner[0].assert_values(1).assert_error(KeyError).assert_no_violations()


def test_many_keys_large_stream() -> None:
    n = 50_000
    sub = (
        Flowable.range(0, n)
        .group_by(lambda x: x % 100)
        .flat_map(lambda g: g.reduce(operator.add), max_concurrency=100)
        .test()
    )
    sub.assert_complete().assert_no_violations()
    assert sorted(sub.values) == sorted(sum(range(k, n, 100)) for k in range(100))


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(0, 50), max_size=60),
    st.integers(1, 6),
    st.integers(1, 20),
    st.booleans(),
    st.lists(st.integers(1, 7), min_size=1, max_size=20),
)
def test_property_group_by_model(
    data: list[int], nkeys: int, buffer_size: int, hidden: bool, reqs: list[int]
) -> None:
    src = Flowable.from_iterable(data)
    if hidden:
        src = src.hide()
    inner: dict[Any, TestSubscriber[int]] = {}

    def on_group(g: Any) -> None:
        t: TestSubscriber[int] = TestSubscriber(0)
        inner[g.key] = t
        g.subscribe(t)

    main = src.group_by(lambda x: x % nkeys, buffer_size=buffer_size).do_on_next(on_group).test()
    # request on every group in rounds, following the random pattern
    for _ in range(200):
        if main.completions or main.errors:
            if all(t.completions or t.errors for t in inner.values()):
                break
        for i, t in enumerate(list(inner.values())):
            t.request(reqs[i % len(reqs)])
    model = _model(data, lambda x: x % nkeys)
    if main.errors:
        # only a slow group may fail the stream, with several groups open
        main.assert_error(MissingBackpressureError)
        for k, t in inner.items():
            assert t.values == model[k][: len(t.values)]
    else:
        main.assert_complete()
        assert {k: t.values for k, t in inner.items()} == model
    main.assert_no_violations()
    for t in inner.values():
        t.assert_no_violations()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 50), max_size=80), st.integers(1, 6), st.booleans())
def test_property_group_by_flat_map_reduce_equals_dict_grouping(
    data: list[int], nkeys: int, hidden: bool
) -> None:
    src = Flowable.from_iterable(data)
    if hidden:
        src = src.hide()
    sub = src.group_by(lambda x: x % nkeys).flat_map(lambda g: g.to_list().map(lambda xs: (g.key, xs))).test()
    sub.assert_complete().assert_no_violations()
    assert dict(sub.values) == _model(data, lambda x: x % nkeys)


def test_slow_group_wait_mode_is_plain_backpressure() -> None:
    slow: TestSubscriber[int] = TestSubscriber(0)
    fast: list[TestSubscriber[int]] = []

    class Main(TestSubscriber[Any]):
        def on_next(self, g: Any) -> None:
            super().on_next(g)
            if g.key == 0:
                g.subscribe(slow)
            else:
                t: TestSubscriber[int] = TestSubscriber()
                fast.append(t)
                g.subscribe(t)

    main = Main()
    tp: TestPublisher[int] = TestPublisher.create()
    Flowable.from_publisher(tp).group_by(
        lambda x: 0 if x < 1000 else 1, buffer_size=8, slow_group="wait"
    ).subscribe(main)
    tp.next(1000)
    for i in range(8):
        tp.next(i)
    assert tp.requested == 0  # the window is parked in the slow group: the upstream waits
    main.assert_no_errors()
    slow.request(8)
    tp.next(1001)
    tp.complete()
    slow.assert_result(*range(8)).assert_no_violations()
    fast[0].assert_result(1000, 1001).assert_no_violations()
    main.assert_complete().assert_no_violations()
    with pytest.raises(ValueError):
        Flowable.never().group_by(lambda x: x, slow_group="maybe")  # type: ignore[arg-type]
