"""concat, concat_with, start_with, switch_if_empty: scenarios, demand carry-over, rules,
trampolining, fusion and property tests against ``itertools.chain``."""

from __future__ import annotations

import itertools
import sys
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from operators.harness import Boom, check_scenarios
from operators.test_merge_zip import CountingSource, ThreadedRange, run_pattern
from rstreams import Flowable, NoneElementError
from rstreams.testing import TestSubscriber

MAX = 2**63 - 1


# ---------------------------------------------------------------------------------------------
# scenarios


def test_concat_with_scenarios() -> None:
    check_scenarios(lambda f: f.concat_with(Flowable.just(99)), range(10), lambda d: d + [99])


def test_concat_with_hidden_other_scenarios() -> None:
    check_scenarios(lambda f: f.concat_with(Flowable.range(100, 3).hide()), range(6), lambda d: d + [100, 101, 102])


def test_concat_self_twice_scenarios() -> None:
    check_scenarios(lambda f: Flowable.concat(f, f), range(5), lambda d: d + d)


def test_concat_error_in_first_source_skips_the_rest() -> None:
    # on error, the values of the first source then the error; the second source never runs
    check_scenarios(
        lambda f: f.concat_with(Flowable.just(99)),
        range(4),
        lambda d: d + [99],
        on_error_expected=lambda d: (list(d), Boom),
    )


def test_start_with_values_scenarios() -> None:
    check_scenarios(lambda f: f.start_with(-2, -1), range(8), lambda d: [-2, -1] + d)


def test_start_with_publisher_scenarios() -> None:
    check_scenarios(lambda f: f.start_with(Flowable.range(-3, 3).hide()), range(8), lambda d: [-3, -2, -1] + d)


def test_switch_if_empty_non_empty_scenarios() -> None:
    check_scenarios(lambda f: f.switch_if_empty(Flowable.just(-1)), range(5), lambda d: d)


def test_switch_if_empty_empty_scenarios() -> None:
    check_scenarios(lambda f: f.switch_if_empty(Flowable.range(7, 4).hide()), [], [7, 8, 9, 10])


# ---------------------------------------------------------------------------------------------
# semantics


def test_concat_basic_and_degenerate_arities() -> None:
    Flowable.concat().test().assert_result().assert_no_violations()
    one = Flowable.just(1).hide()
    assert Flowable.concat(one) is one
    Flowable.concat(Flowable.just(1), Flowable.just(2)).test().assert_result(1, 2).assert_no_violations()
    Flowable.concat([Flowable.just(1), Flowable.just(2).hide()]).test().assert_result(1, 2)


def test_concat_accepts_foreign_publishers() -> None:
    src = ThreadedRange(0, 5, jitter=0)
    ts = Flowable.concat(src, Flowable.just(5)).test()
    ts.await_done(5).assert_result(0, 1, 2, 3, 4, 5).assert_no_violations()


def test_concat_bad_arguments_raise_at_assembly() -> None:
    with pytest.raises(TypeError):
        Flowable.concat(Flowable.just(1), None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Flowable.concat(Flowable.just(1), 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Flowable.just(1).concat_with(None)  # type: ignore[arg-type]
    with pytest.raises(NoneElementError):
        Flowable.just(1).start_with(1, None)
    with pytest.raises(TypeError):
        Flowable.just(1).switch_if_empty(None)  # type: ignore[arg-type]


def test_start_with_nothing_is_the_source() -> None:
    f = Flowable.just(1).hide()
    assert f.start_with() is f


def test_start_with_one_publisher_vs_values() -> None:
    Flowable.just(3).start_with(Flowable.just(1, 2)).test().assert_result(1, 2, 3)
    Flowable.just(3).start_with(1, 2).test().assert_result(1, 2, 3)
    Flowable.just(3).start_with("ab").test().assert_result("ab", 3)  # a string is a value


def test_concat_demand_carries_over_to_next_source() -> None:
    a = Flowable.range(0, 3).hide()
    b = Flowable.range(3, 3).hide()
    ts = Flowable.concat(a, b).test(5)
    ts.assert_values(0, 1, 2, 3, 4).assert_not_complete()
    ts.request(1)
    ts.assert_result(0, 1, 2, 3, 4, 5).assert_no_violations()


def test_switch_if_empty_demand_carries_over() -> None:
    ts = Flowable.empty().hide().switch_if_empty(Flowable.range(0, 3).hide()).test(2)
    ts.assert_values(0, 1).assert_not_complete()
    ts.request(1)
    ts.assert_result(0, 1, 2).assert_no_violations()


def test_switch_if_empty_does_not_subscribe_other_when_not_empty() -> None:
    other = CountingSource(Flowable.just(1))
    Flowable.just(5).hide().switch_if_empty(other).test().assert_result(5)
    assert other.subscriptions == 0


def test_concat_cancel_stops_and_does_not_subscribe_next() -> None:
    first = CountingSource(Flowable.range(0, 10).hide())
    second = CountingSource(Flowable.just(1))
    ts = Flowable.concat(first, second).test(3)
    ts.cancel()
    ts.request(10)
    ts.assert_values(0, 1, 2).assert_not_complete().assert_no_violations()
    assert first.cancels == 1 and second.subscriptions == 0


def test_concat_error_from_a_source_is_signalled_and_later_sources_skipped() -> None:
    third = CountingSource(Flowable.just(3))
    Flowable.concat(Flowable.just(1).hide(), Flowable.error(Boom()), third).test().assert_failure(
        Boom, 1
    ).assert_no_violations()
    assert third.subscriptions == 0


def test_concat_error_after_cancel_goes_to_the_hook(undeliverable: list[BaseException]) -> None:
    holder: list[Any] = []

    class Manual:
        def subscribe(self, s: Any) -> None:
            holder.append(s)
            s.on_subscribe(type("S", (), {"request": lambda self, n: None, "cancel": lambda self: None})())

    ts = Flowable.concat(Flowable.just(1), Manual()).test()
    ts.cancel()
    holder[0].on_error(Boom("late"))
    ts.assert_values(1).assert_no_errors().assert_no_violations()
    assert any(isinstance(e, Boom) for e in undeliverable)


# ---------------------------------------------------------------------------------------------
# fusion


def test_concat_of_fused_sources_folds_into_chain() -> None:
    f = Flowable.concat(Flowable.range(0, 3), Flowable.just(3, 4), Flowable.from_iterable([5]))
    fz = f._fused()
    assert fz is not None and fz.sizer is not None and fz.sizer() == 6
    f.test().assert_result(0, 1, 2, 3, 4, 5).assert_no_violations()
    run_pattern(f, [1, 2, 1]).assert_result(0, 1, 2, 3, 4, 5).assert_no_violations()


def test_concat_with_and_start_with_fuse() -> None:
    assert Flowable.range(0, 2).concat_with(Flowable.just(9))._fused() is not None
    assert Flowable.range(0, 2).start_with(7, 8)._fused() is not None
    Flowable.range(0, 2).start_with(7, 8).test().assert_result(7, 8, 0, 1)


def test_concat_fusion_is_lazy_per_source() -> None:
    created: list[int] = []

    def gen(i: int) -> Any:
        created.append(i)
        return iter([i])

    srcs = [Flowable.from_iterable(type("It", (), {"__iter__": lambda self, i=i: gen(i)})()) for i in range(3)]
    ts = Flowable.concat(*srcs).test(1)
    ts.assert_values(0)
    assert created == [0, 1]  # the second is opened only once the first is exhausted (look-ahead)
    ts.request(5)
    ts.assert_result(0, 1, 2)


def test_concat_fused_none_element_is_type_error() -> None:
    Flowable.concat(Flowable.just(1), Flowable.just(2).map(lambda x: None)).test().assert_failure(
        TypeError, 1
    ).assert_no_violations()


def test_mixed_fused_and_unfused_sources() -> None:
    srcs = [Flowable.just(0), Flowable.just(1), Flowable.just(2).hide(), Flowable.range(3, 2), Flowable.just(5)]
    Flowable.concat(*srcs).test().assert_result(0, 1, 2, 3, 4, 5).assert_no_violations()


# ---------------------------------------------------------------------------------------------
# trampolining


def test_concat_100k_unfused_sources_does_not_recurse() -> None:
    n = 100_000
    srcs = [Flowable.just(i).hide() for i in range(n)]
    t0 = time.monotonic()
    # to_list keeps the per-element cost low; the order of all 100k values is checked
    Flowable.concat(*srcs).to_list().test().assert_result(list(range(n))).assert_no_violations()
    assert time.monotonic() - t0 < 60


def test_concat_100k_fused_sources() -> None:
    n = 100_000
    f = Flowable.concat(*[Flowable.just(i) for i in range(n)])
    assert f._fused() is not None
    f.to_list().test().assert_result(list(range(n))).assert_no_violations()


def test_concat_with_chain_is_flattened() -> None:
    n = 2 * sys.getrecursionlimit()
    f: Flowable[int] = Flowable.just(0).hide()
    one = Flowable.just(1).hide()
    for _ in range(1, n):
        f = f.concat_with(one)
    f.count().test().assert_result(n).assert_no_violations()


def test_concat_trampoline_with_one_by_one_requests() -> None:
    srcs = [Flowable.empty().hide() if i % 2 else Flowable.just(i).hide() for i in range(4_000)]
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.concat(*srcs).subscribe(ts)
    for _ in range(2_000):
        ts.request(1)
    ts.assert_values(*range(0, 4_000, 2)).assert_complete().assert_no_violations()


# ---------------------------------------------------------------------------------------------
# threads


@pytest.mark.parametrize("seed", [1, 2])
def test_concat_of_threaded_sources_keeps_order(seed: int) -> None:
    srcs = [ThreadedRange(i * 100, 50, seed=seed * 10 + i) for i in range(5)]
    ts = Flowable.concat(*srcs).test()
    ts.await_done(10).assert_values(*[x for i in range(5) for x in range(i * 100, i * 100 + 50)])
    ts.assert_complete().assert_no_violations()


def test_concat_of_threaded_sources_with_bounded_requests() -> None:
    srcs = [ThreadedRange(i * 100, 30, seed=i) for i in range(4)]
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.concat(*srcs).subscribe(ts)
    deadline = time.monotonic() + 10
    while not ts.is_terminated and time.monotonic() < deadline:
        ts.request(7)
        time.sleep(0.001)
    ts.assert_values(*[x for i in range(4) for x in range(i * 100, i * 100 + 30)]).assert_complete()
    ts.assert_no_violations()


# ---------------------------------------------------------------------------------------------
# properties


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.lists(st.integers(), max_size=8), max_size=6),
    st.lists(st.integers(1, 5), max_size=10),
    st.lists(st.booleans(), min_size=6, max_size=6),
)
def test_property_concat_equals_chain(lists: list[list[int]], pattern: list[int], hide: list[bool]) -> None:
    srcs = [Flowable.from_iterable(x).hide() if h else Flowable.from_iterable(x) for x, h in zip(lists, hide, strict=False)]
    ts = run_pattern(Flowable.concat(*srcs), pattern)
    assert ts.values == list(itertools.chain.from_iterable(lists))
    ts.assert_complete().assert_no_violations()


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(), max_size=10),
    st.lists(st.integers(), max_size=5),
    st.lists(st.integers(1, 5), max_size=6),
    st.booleans(),
)
def test_property_start_with_and_switch_if_empty(
    data: list[int], items: list[int], pattern: list[int], hidden: bool
) -> None:
    src = Flowable.from_iterable(data)
    if hidden:
        src = src.hide()
    ts = run_pattern(src.start_with(*items), pattern)
    assert ts.values == items + data
    ts.assert_complete().assert_no_violations()
    ts2 = run_pattern(src.switch_if_empty(Flowable.from_iterable(items)), pattern)
    assert ts2.values == (data if data else items)
    ts2.assert_complete().assert_no_violations()
