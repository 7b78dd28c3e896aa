"""to_sorted_list, sorted, to_set, to_multimap, sum, min, max, average: aggregates built on the
``_aggregate`` machinery. Fused, hidden and boundary-batch paths give the same signals; the result
waits for demand (rule 1.1); bad requests (rule 3.9), cancels (rules 3.12, 3.13), upstream errors,
raising and None-returning user functions, bad arguments."""

from __future__ import annotations

import functools
import random
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams import Flowable, plugins, schedulers
from rstreams.errors import NoneElementError
from rstreams.testing import TestSubscriber

from .harness import Boom, check_raising, check_scenarios, run_one_by_one

MAX = 2**63 - 1

DATA = {
    "empty": [],
    "one": [5],
    "shuffled": random.Random(3).sample(range(20), 20),
    "dupes": [3, 1, 3, 2, 1, 3],
}


def _multimap(d: list[int], value: Any = None) -> dict[int, list[Any]]:
    out: dict[int, list[Any]] = {}
    for x in d:
        out.setdefault(x % 3, []).append(x if value is None else value(x))
    return out


OPS: list[tuple[str, Any, Any]] = [
    ("sorted", lambda f: f.sorted(), lambda d: sorted(d)),
    ("sorted(reverse)", lambda f: f.sorted(reverse=True), lambda d: sorted(d, reverse=True)),
    ("sorted(key)", lambda f: f.sorted(key=lambda x: (x % 3, -x)), lambda d: sorted(d, key=lambda x: (x % 3, -x))),
    ("to_sorted_list", lambda f: f.to_sorted_list(), lambda d: [sorted(d)]),
    ("to_sorted_list(key, reverse)", lambda f: f.to_sorted_list(key=lambda x: x % 4, reverse=True),
     lambda d: [sorted(d, key=lambda x: x % 4, reverse=True)]),
    ("to_set", lambda f: f.to_set(), lambda d: [set(d)]),
    ("to_multimap", lambda f: f.to_multimap(lambda x: x % 3), lambda d: [_multimap(d)]),
    ("to_multimap(value)", lambda f: f.to_multimap(lambda x: x % 3, lambda x: -x), lambda d: [_multimap(d, lambda x: -x)]),
    ("sum", lambda f: f.sum(), lambda d: [sum(d)]),
    ("min", lambda f: f.min(), lambda d: [min(d)] if d else []),
    ("max", lambda f: f.max(), lambda d: [max(d)] if d else []),
    ("min(key)", lambda f: f.min(key=lambda x: x % 5), lambda d: [min(d, key=lambda x: x % 5)] if d else []),
    ("max(key)", lambda f: f.max(key=lambda x: x % 5), lambda d: [max(d, key=lambda x: x % 5)] if d else []),
    ("average", lambda f: f.average(), lambda d: [sum(d) / len(d)] if d else []),
]


@pytest.mark.parametrize(("name", "op", "model"), OPS, ids=[o[0] for o in OPS])
@pytest.mark.parametrize("data", list(DATA.values()), ids=list(DATA))
def test_scenarios_fused_hidden_one_by_one_cancel_and_upstream_error(name: str, op: Any, model: Any, data: list[int]) -> None:
    check_scenarios(op, data, model)


@pytest.mark.parametrize(("name", "op", "model"), OPS, ids=[o[0] for o in OPS])
def test_boundary_batches_give_the_same_result(name: str, op: Any, model: Any) -> None:
    # observe_on hands its batches on with on_next_batch: the folders' chunk() path
    data = random.Random(11).sample(range(5000), 5000)
    src = Flowable.from_iterable(data).observe_on(schedulers.single(), prefetch=512)
    ts = op(src).test()
    ts.await_done(10)
    ts.assert_result(*model(data)).assert_no_violations()


@pytest.mark.parametrize(("name", "op", "model"), OPS, ids=[o[0] for o in OPS])
def test_upstream_error_is_passed_on(name: str, op: Any, model: Any) -> None:
    for src in (Flowable.concat(Flowable.just(1, 2), Flowable.error(Boom("x"))), Flowable.error(Boom("x"))):
        op(src).test().assert_no_values().assert_error(Boom).assert_no_violations()


# ----------------------------------------------------------------------------------------------
# sorted / to_sorted_list


def test_sorted_is_stable() -> None:
    data = [(1, "a"), (0, "b"), (1, "c"), (0, "d")]
    check_scenarios(lambda f: f.sorted(key=lambda p: p[0]), data, [(0, "b"), (0, "d"), (1, "a"), (1, "c")])


def test_sorted_with_a_comparator_through_cmp_to_key() -> None:
    key = functools.cmp_to_key(lambda a, b: b - a)
    Flowable.just(1, 3, 2).sorted(key=key).test().assert_result(3, 2, 1).assert_no_violations()


def test_sorted_emits_nothing_before_the_upstream_completes() -> None:
    ts: TestSubscriber[int] = TestSubscriber(MAX)
    from rstreams.processors import PublishProcessor

    p: PublishProcessor[int] = PublishProcessor.create()
    p.sorted().subscribe(ts)
    p.on_next(3)
    p.on_next(1)
    ts.assert_no_values()
    p.on_complete()
    ts.assert_result(1, 3).assert_no_violations()


@pytest.mark.parametrize("op", [lambda f: f.sorted(key=_boom_key), lambda f: f.to_sorted_list(key=_boom_key)], ids=["sorted", "to_sorted_list"])
def test_a_raising_key_fails_the_stream_after_completion(op: Any) -> None:
    for src in (Flowable.just(2, 1), Flowable.just(2, 1).hide()):
        op(src).test().assert_no_values().assert_error(Boom).assert_no_violations()


def test_incomparable_elements_fail_with_type_error() -> None:
    for src in (Flowable.just(1, "a"), Flowable.just(1, "a").hide()):
        src.sorted().test().assert_error(TypeError).assert_no_violations()
        src.min().test().assert_error(TypeError).assert_no_violations()
        src.max().test().assert_error(TypeError).assert_no_violations()


def test_sorted_one_by_one_over_a_large_input() -> None:
    data = random.Random(5).sample(range(2000), 2000)
    ts = run_one_by_one(Flowable.from_iterable(data).hide().sorted())
    ts.assert_result(*sorted(data)).assert_no_violations()


def _boom_key(x: Any) -> Any:
    raise Boom("key")


# ----------------------------------------------------------------------------------------------
# to_set / to_multimap


def test_to_set_unhashable_element_fails_and_cancels() -> None:
    for src in (Flowable.just(1, [2], 3), Flowable.just(1, [2], 3).hide()):
        src.to_set().test().assert_no_values().assert_error(TypeError).assert_no_violations()


def test_to_multimap_calls_key_selector_before_value_selector() -> None:
    calls: list[str] = []

    def k(x: int) -> int:
        calls.append(f"k{x}")
        return x % 2

    def v(x: int) -> int:
        calls.append(f"v{x}")
        return x

    Flowable.just(1, 2).to_multimap(k, v).test().assert_result({1: [1], 0: [2]}).assert_no_violations()
    assert calls == ["k1", "v1", "k2", "v2"]


def test_to_multimap_none_key_is_an_ordinary_key() -> None:
    Flowable.just(1, 2).to_multimap(lambda x: None).test().assert_result({None: [1, 2]}).assert_no_violations()


def test_to_multimap_value_selector_returning_none_fails_and_cancels() -> None:
    for src in (Flowable.just(1, 2, 3), Flowable.just(1, 2, 3).hide()):
        src.to_multimap(lambda x: x, lambda x: None if x == 2 else x).test().assert_error(
            NoneElementError, match="value selector"
        ).assert_no_violations()


@pytest.mark.parametrize(
    "op",
    [
        lambda f: f.to_multimap(_boom_key),
        lambda f: f.to_multimap(lambda x: x, _boom_key),
        lambda f: f.min(key=_boom_key),
        lambda f: f.max(key=_boom_key),
    ],
    ids=["to_multimap(key)", "to_multimap(value)", "min(key)", "max(key)"],
)
def test_a_raising_selector_fails_the_stream_and_cancels_the_upstream(op: Any) -> None:
    check_raising(op, [1, 2, 3])


# ----------------------------------------------------------------------------------------------
# sum / min / max / average


def test_sum_of_empty_is_zero_and_average_min_max_of_empty_complete_empty() -> None:
    for src in (Flowable.empty(), Flowable.empty().hide()):
        src.sum().test().assert_result(0).assert_no_violations()
        src.average().test().assert_result().assert_no_violations()
        src.min().test().assert_result().assert_no_violations()
        src.max(key=len).test().assert_result().assert_no_violations()


def test_float_sum_is_the_same_fused_hidden_and_batched() -> None:
    data = [0.1] * 10_000 + [1e16, 1.0, -1e16]
    want = functools.reduce(lambda a, b: a + b, data, 0)
    for src in (
        Flowable.from_iterable(data),
        Flowable.from_iterable(data).hide(),
        Flowable.from_iterable(data).observe_on(schedulers.single()),
    ):
        ts = src.sum().test()
        ts.await_done(5)
        ts.assert_result(want).assert_no_violations()
        ts = src.average().test()
        ts.await_done(5)
        ts.assert_result(want / len(data)).assert_no_violations()


def test_sum_of_mixed_int_and_float_chunks() -> None:
    data = list(range(5000)) + [0.5] + list(range(5000))
    for src in (Flowable.from_iterable(data), Flowable.from_iterable(data).hide()):
        src.sum().test().assert_result(sum(data)).assert_no_violations()


def test_sum_and_average_keep_decimal_and_fraction() -> None:
    Flowable.just(Decimal("0.1"), Decimal("0.2")).sum().test().assert_result(Decimal("0.3"))
    Flowable.just(Fraction(1, 3), Fraction(1, 6)).average().test().assert_result(Fraction(1, 4))
    Flowable.just(1, 2).average().test().assert_result(1.5)


def test_sum_of_non_numbers_fails_with_type_error_and_cancels() -> None:
    cancelled: list[bool] = []
    Flowable.just(1, "a", 2).hide().do_on_cancel(lambda: cancelled.append(True)).sum().test().assert_error(
        TypeError
    ).assert_no_violations()
    assert cancelled == [True]
    Flowable.just(1, "a", 2).sum().test().assert_error(TypeError).assert_no_violations()


def test_min_and_max_keep_the_first_of_equal_elements() -> None:
    data = [(2, "a"), (1, "b"), (2, "c"), (1, "d")]
    check_scenarios(lambda f: f.min(key=lambda p: p[0]), data, [(1, "b")])
    check_scenarios(lambda f: f.max(key=lambda p: p[0]), data, [(2, "a")])
    same = [1.0, 1, True]  # equal, distinguishable by type
    for src in (Flowable.from_iterable(same), Flowable.from_iterable(same).hide()):
        assert type(src.min().test().values[0]) is float
        assert type(src.max().test().values[0]) is float


def test_min_max_key_runs_once_per_element() -> None:
    for hide in (False, True):
        calls: list[int] = []
        src = Flowable.range(0, 10)
        if hide:
            src = src.hide()
        src.min(key=lambda x: calls.append(x) or -x).test().assert_result(9)
        assert calls == list(range(10))


def test_large_fused_inputs_fold_in_chunks() -> None:
    n = 100_000
    Flowable.range(0, n).sum().test().assert_result(n * (n - 1) // 2).assert_no_violations()
    Flowable.range(0, n).map(lambda x: -x).max().test().assert_result(0).assert_no_violations()
    Flowable.range(0, n).to_set().map(len).test().assert_result(n).assert_no_violations()


# ----------------------------------------------------------------------------------------------
# Bad arguments (at assembly)


@pytest.mark.parametrize(
    "call",
    [
        lambda f: f.to_sorted_list(key=3),
        lambda f: f.sorted(key="x"),
        lambda f: f.sorted(reverse=1),
        lambda f: f.to_sorted_list(reverse=None),
        lambda f: f.to_multimap(None),
        lambda f: f.to_multimap(len, 5),
        lambda f: f.min(key=1),
        lambda f: f.max(key=1),
    ],
)
def test_bad_arguments_raise_type_error_at_assembly(call: Any) -> None:
    with pytest.raises(TypeError):
        call(Flowable.just(1))


def test_no_undeliverable_errors_in_ordinary_use() -> None:
    with plugins.collect_errors() as errors:
        for op in (o[1] for o in OPS):
            op(Flowable.just(3, 1, 2)).test().assert_no_violations()
            op(Flowable.just(3, 1, 2)).test().cancel()
    assert not errors


@settings(max_examples=60, deadline=None)
@given(
    data=st.lists(st.integers(-5, 5), max_size=30),
    which=st.sampled_from(OPS),
    pattern=st.lists(st.integers(1, 3), max_size=4),
)
def test_property_fused_and_hidden_equal_the_model(data: list[int], which: Any, pattern: list[int]) -> None:
    _, op, model = which
    want = model(data)
    for src in (Flowable.from_iterable(data), Flowable.from_iterable(data).hide()):
        ts: TestSubscriber[Any] = TestSubscriber(0)
        op(src).subscribe(ts)
        for n in pattern:
            ts.request(n)
        ts.request(MAX)
        ts.assert_result(*want).assert_no_violations()
