"""element_at, element_at_or_error, first, last, default_if_empty: single-valued results held until
requested (rules 1.1, 3.9), defaults, NoSuchElementError, fused and hidden."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams import Flowable
from rstreams.errors import NoneElementError, NoSuchElementError
from rstreams.testing import TestPublisher, TestSubscriber

from .harness import Boom, check_scenarios

MAX = 2**63 - 1

lists = st.lists(st.integers(0, 9), max_size=30)
patterns = st.lists(st.one_of(st.integers(1, 3), st.just(MAX)), max_size=4)


def run_pattern(f: Flowable[Any], pattern: list[int]) -> TestSubscriber[Any]:
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


def element_at_model(d: list[Any], i: int, default: Any = None) -> list[Any]:
    if i < len(d):
        return [d[i]]
    return [] if default is None else [default]


OPS: list[tuple[str, Any, Any]] = [
    ("element_at(0)", lambda f: f.element_at(0), lambda d: element_at_model(d, 0)),
    ("element_at(3)", lambda f: f.element_at(3), lambda d: element_at_model(d, 3)),
    ("element_at(3, -1)", lambda f: f.element_at(3, -1), lambda d: element_at_model(d, 3, -1)),
    ("first(-1)", lambda f: f.first(-1), lambda d: d[:1] or [-1]),
    ("last(-1)", lambda f: f.last(-1), lambda d: d[-1:] or [-1]),
    ("first_element", lambda f: f.first_element(), lambda d: d[:1]),
    ("default_if_empty", lambda f: f.default_if_empty(-1), lambda d: d or [-1]),
]


@pytest.mark.parametrize(("name", "op", "model"), OPS, ids=[o[0] for o in OPS])
@pytest.mark.parametrize("data", [[], [5], list(range(10))], ids=["empty", "one", "range"])
def test_scenarios(name: str, op: Any, model: Any, data: list[int]) -> None:
    check_scenarios(op, data, model)


@settings(max_examples=50, deadline=None)
@given(data=lists, pattern=patterns, which=st.sampled_from(OPS))
def test_property_fused_and_hidden_equal_the_model(data: list[int], pattern: list[int], which: Any) -> None:
    _, op, model = which
    want = model(data)
    for _, src in both(data):
        run_pattern(op(src), pattern).assert_result(*want)


@pytest.mark.parametrize(
    ("op", "data"),
    [
        (lambda f: f.first(), []),
        (lambda f: f.last(), []),
        (lambda f: f.element_at_or_error(3), [1, 2, 3]),
    ],
    ids=["first", "last", "element_at_or_error"],
)
def test_no_such_element(op: Any, data: list[int]) -> None:
    for _, src in both(data):
        op(src).test().assert_no_values().assert_error(NoSuchElementError).assert_no_violations()


def test_element_at_or_error_found() -> None:
    for _, src in both([1, 2, 3, 4]):
        src.element_at_or_error(3).test().assert_result(4).assert_no_violations()


def test_first_and_element_at_cancel_upstream_when_found() -> None:
    for op in (lambda f: f.first(), lambda f: f.element_at(2)):
        cancelled: list[bool] = []
        emitted: list[int] = []
        src = Flowable.range(0, 1000).hide().do_on_next(emitted.append).do_on_cancel(lambda c=cancelled: c.append(True))
        op(src).test().assert_value_count(1).assert_complete().assert_no_violations()
        assert cancelled == [True]
        assert len(emitted) <= 3


def test_first_on_an_infinite_fused_source_terminates() -> None:
    import itertools

    Flowable.from_iterable(itertools.count(5)).first().test().assert_result(5).assert_no_violations()
    Flowable.from_iterable(itertools.count(5)).element_at(10_000).test().assert_result(10_005).assert_no_violations()


def test_values_are_held_until_requested() -> None:
    for op in (lambda f: f.first(), lambda f: f.last(), lambda f: f.element_at(1)):
        for _, src in both([1, 2, 3]):
            ts = op(src).test(0)
            ts.assert_no_values().assert_not_complete()
            ts.request(1)
            ts.assert_value_count(1).assert_complete().assert_no_violations()


def test_upstream_error_passes() -> None:
    for op in (lambda f: f.first(), lambda f: f.last(), lambda f: f.element_at(5), lambda f: f.default_if_empty(1)):
        op(Flowable.error(Boom("x"))).test().assert_no_values().assert_error(Boom).assert_no_violations()


def test_none_element_in_skipped_region_fused_and_hidden() -> None:
    for op in (lambda f: f.last(), lambda f: f.element_at(3)):
        for _, src in both([1, None, 2, 3, 4]):
            op(src).test().assert_error(NoneElementError).assert_no_violations()


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        Flowable.range(0, 3).element_at(-1)
    with pytest.raises(TypeError):
        Flowable.range(0, 3).element_at("1")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Flowable.range(0, 3).first(None)
    with pytest.raises(TypeError):
        Flowable.range(0, 3).default_if_empty(None)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------
# default_if_empty


def test_default_if_empty_waits_for_demand() -> None:
    for _, src in both([]):
        ts = src.default_if_empty(9).test(0)
        ts.assert_no_values().assert_not_complete()
        ts.request(1)
        ts.assert_result(9).assert_no_violations()


def test_default_if_empty_request_vs_complete_race() -> None:
    rnd = random.Random(7)
    for _ in range(50):
        tp: TestPublisher[int] = TestPublisher.create()
        ts: TestSubscriber[int] = TestSubscriber(0)
        Flowable.from_publisher(tp).default_if_empty(3).subscribe(ts)
        t = threading.Thread(target=tp.complete)
        t.start()
        for _ in range(rnd.randint(1, 3)):
            ts.request(1)
        t.join(5)
        ts.await_done(5).assert_result(3).assert_no_violations()


def test_last_request_vs_complete_race() -> None:
    for _ in range(50):
        tp: TestPublisher[int] = TestPublisher.create()
        ts: TestSubscriber[int] = TestSubscriber(0)
        Flowable.from_publisher(tp).last().subscribe(ts)
        tp.next(1, 2)
        t = threading.Thread(target=tp.complete)
        t.start()
        ts.request(1)
        t.join(5)
        ts.await_done(5).assert_result(2).assert_no_violations()
