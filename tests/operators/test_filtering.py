"""take_last, skip_last, take_while, take_until (predicate and publisher), skip_while, distinct,
distinct_until_changed, ignore_elements: scenarios, raising callbacks, rules, properties."""

from __future__ import annotations

import itertools
import random
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

lists = st.lists(st.integers(0, 6), max_size=30)
patterns = st.lists(st.one_of(st.integers(1, 5), st.just(MAX)), max_size=8)
DATA = [[], [1], list(range(10)), [3, 3, 1, 1, 2, 3, 3, 0]]


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


def raiser(*_: Any) -> Any:
    raise Boom("callback")


def take_until_model(d: list[int], stop: Any) -> list[int]:
    out = []
    for x in d:
        out.append(x)
        if stop(x):
            break
    return out


def duc_model(d: list[Any], key: Any = None) -> list[Any]:
    return [next(g) for _, g in itertools.groupby(d, key)]


def distinct_model(d: list[Any], key: Any = None) -> list[Any]:
    seen: set[Any] = set()
    out = []
    for x in d:
        k = x if key is None else key(x)
        if k not in seen:
            seen.add(k)
            out.append(x)
    return out


OPS: list[tuple[str, Any, Any]] = [
    ("take_last(3)", lambda f: f.take_last(3), lambda d: d[-3:]),
    ("take_last(1)", lambda f: f.take_last(1), lambda d: d[-1:]),
    ("take_last(0)", lambda f: f.take_last(0), lambda d: []),
    ("skip_last(2)", lambda f: f.skip_last(2), lambda d: d[:-2]),
    ("skip_last(0)", lambda f: f.skip_last(0), lambda d: d),
    ("take_while", lambda f: f.take_while(lambda x: x < 4), lambda d: list(itertools.takewhile(lambda x: x < 4, d))),
    ("take_until", lambda f: f.take_until(lambda x: x == 2), lambda d: take_until_model(d, lambda x: x == 2)),
    ("skip_while", lambda f: f.skip_while(lambda x: x < 3), lambda d: list(itertools.dropwhile(lambda x: x < 3, d))),
    ("distinct", lambda f: f.distinct(), distinct_model),
    ("distinct(key)", lambda f: f.distinct(lambda x: x % 3), lambda d: distinct_model(d, lambda x: x % 3)),
    ("duc", lambda f: f.distinct_until_changed(), duc_model),
    ("duc(key)", lambda f: f.distinct_until_changed(lambda x: x // 2), lambda d: duc_model(d, lambda x: x // 2)),
    (
        "duc(comparer)",
        lambda f: f.distinct_until_changed(comparer=lambda a, b: abs(a - b) <= 1),
        lambda d: [x for i, x in enumerate(d) if i == 0 or abs(d[i - 1] - x) > 1],
    ),
    ("ignore_elements", lambda f: f.ignore_elements(), lambda d: []),
]


@pytest.mark.parametrize(("name", "op", "model"), OPS, ids=[o[0] for o in OPS])
@pytest.mark.parametrize("data", DATA, ids=["empty", "one", "range", "dups"])
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
    "op",
    [
        lambda f: f.take_while(raiser),
        lambda f: f.take_until(raiser),
        lambda f: f.skip_while(raiser),
        lambda f: f.distinct(raiser),
        lambda f: f.distinct_until_changed(raiser),
        lambda f: f.distinct_until_changed(comparer=raiser),
    ],
    ids=["take_while", "take_until", "skip_while", "distinct", "duc_key", "duc_comparer"],
)
def test_raising_callbacks(op: Any) -> None:
    check_raising(op, [1, 2, 3])


def test_take_until_raising_predicate_after_first_element() -> None:
    for _, src in both([1, 2]):
        src.take_until(raiser).test().assert_values(1).assert_error(Boom).assert_no_violations()


def test_distinct_unhashable_key_fails_the_stream() -> None:
    for _, src in both([[1], [2]]):
        src.distinct().test().assert_error(TypeError).assert_no_violations()


def test_distinct_each_subscription_has_its_own_seen_set() -> None:
    f = Flowable.from_iterable([1, 1, 2]).distinct()
    f.test().assert_result(1, 2)
    f.test().assert_result(1, 2).assert_no_violations()


def test_none_element_is_an_error_fused_and_hidden() -> None:
    for op in (lambda f: f.take_last(2), lambda f: f.take_while(lambda x: True), lambda f: f.distinct()):
        for _, src in both([1, None, 2]):
            ts = op(src).test()
            ts.assert_error(NoneElementError).assert_no_violations()


@pytest.mark.parametrize("bad", [-1, 1.5, "x", True])
def test_bad_counts(bad: Any) -> None:
    with pytest.raises((TypeError, ValueError)):
        Flowable.range(0, 3).take_last(bad)
    with pytest.raises((TypeError, ValueError)):
        Flowable.range(0, 3).skip_last(bad)


@pytest.mark.parametrize("name", ["take_while", "skip_while", "distinct", "distinct_until_changed"])
def test_non_callable_arguments(name: str) -> None:
    with pytest.raises(TypeError):
        getattr(Flowable.range(0, 3), name)(42)


# ----------------------------------------------------------------------------------------------
# take_last: post-complete


def test_take_last_emits_the_tail_under_demand() -> None:
    for _, src in both(list(range(10))):
        ts = src.take_last(4).test(0)
        ts.assert_no_values().assert_not_complete()
        ts.request(1)
        ts.assert_values(6).assert_not_complete()
        ts.request(2)
        ts.assert_values(6, 7, 8).assert_not_complete()
        ts.request(1)
        ts.assert_result(6, 7, 8, 9).assert_no_violations()


def test_take_last_cross_thread_request_vs_complete() -> None:
    rnd = random.Random(1234)
    for _ in range(30):
        tp: TestPublisher[int] = TestPublisher.create()
        ts: TestSubscriber[int] = TestSubscriber(0)
        Flowable.from_publisher(tp).take_last(5).subscribe(ts)
        tp.next(*range(20))
        t = threading.Thread(target=tp.complete)
        t.start()
        for _ in range(rnd.randint(1, 10)):
            ts.request(1)
        t.join(5)
        ts.request(MAX)
        ts.await_done(5).assert_result(15, 16, 17, 18, 19).assert_no_violations()


def test_take_last_cancel_stops_the_tail() -> None:
    ts = Flowable.range(0, 10).hide().take_last(5).test(2)
    ts.assert_values(5, 6)
    ts.cancel()
    ts.request(3)
    ts.assert_values(5, 6).assert_not_complete().assert_no_violations()


# ----------------------------------------------------------------------------------------------
# skip_last, take_while, skip_while: demand


def test_take_while_cancels_upstream_at_the_first_failure() -> None:
    cancelled: list[bool] = []
    src = Flowable.range(0, 100).hide().do_on_cancel(lambda: cancelled.append(True))
    src.take_while(lambda x: x < 3).test().assert_result(0, 1, 2).assert_no_violations()
    assert cancelled == [True]


# ----------------------------------------------------------------------------------------------
# take_until(publisher)


def test_take_until_publisher_other_emits() -> None:
    main: TestPublisher[int] = TestPublisher.create()
    other: TestPublisher[str] = TestPublisher.create()
    ts = Flowable.from_publisher(main).take_until(Flowable.from_publisher(other)).test()
    main.next(1, 2)
    other.next("stop")
    ts.assert_result(1, 2).assert_no_violations()
    assert main.was_cancelled and other.was_cancelled


def test_take_until_publisher_other_completes() -> None:
    main: TestPublisher[int] = TestPublisher.create()
    other: TestPublisher[str] = TestPublisher.create()
    ts = Flowable.from_publisher(main).take_until(other).test()
    main.next(1)
    other.complete()
    ts.assert_result(1).assert_no_violations()
    assert main.was_cancelled


def test_take_until_publisher_other_errors() -> None:
    main: TestPublisher[int] = TestPublisher.create()
    other: TestPublisher[str] = TestPublisher.create()
    ts = Flowable.from_publisher(main).take_until(Flowable.from_publisher(other)).test()
    main.next(1)
    other.error(Boom("other"))
    ts.assert_values(1).assert_error(Boom).assert_no_violations()
    assert main.was_cancelled


def test_take_until_publisher_main_completes_first() -> None:
    main: TestPublisher[int] = TestPublisher.create()
    other: TestPublisher[str] = TestPublisher.create()
    ts = Flowable.from_publisher(main).take_until(Flowable.from_publisher(other)).test()
    main.next(1).complete()
    ts.assert_result(1).assert_no_violations()
    assert other.was_cancelled


def test_take_until_publisher_other_already_empty() -> None:
    cancelled: list[bool] = []
    src = Flowable.range(0, 5).do_on_cancel(lambda: cancelled.append(True))
    src.take_until(Flowable.empty()).test().assert_result().assert_no_violations()


def test_take_until_publisher_never_passes_everything() -> None:
    check_scenarios(lambda f: f.take_until(Flowable.never()), list(range(10)), list(range(10)))


def test_take_until_publisher_other_signals_from_another_thread() -> None:
    rnd = random.Random(42)
    for _ in range(20):
        main: TestPublisher[int] = TestPublisher.create()
        other: TestPublisher[str] = TestPublisher.create()
        ts = Flowable.from_publisher(main).take_until(Flowable.from_publisher(other)).test()
        n = rnd.randint(0, 200)

        def produce(n: int = n, main: TestPublisher[int] = main) -> None:
            for i in range(n):
                if main.was_cancelled:
                    return
                main.next(i)

        t = threading.Thread(target=produce)
        t.start()
        other.next("stop")
        t.join(5)
        ts.await_done(5).assert_complete().assert_no_errors().assert_no_violations()
        assert ts.values == list(range(len(ts.values)))


def test_take_until_bad_argument() -> None:
    with pytest.raises(TypeError):
        Flowable.range(0, 3).take_until(42)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------
# ignore_elements


def test_ignore_elements_passes_error() -> None:
    Flowable.error(Boom("x")).ignore_elements().test().assert_error(Boom).assert_no_violations()


# ----------------------------------------------------------------------------------------------
# fused and hidden give identical signals, also when a user function raises or returns None


def _cb_factory(k: int, mode: str) -> Any:
    def cb(x: int) -> Any:
        if x == k:
            if mode == "raise":
                raise Boom(f"at {x}")
            return None
        return x

    return cb


CALLBACK_OPS: list[tuple[str, Any]] = [
    ("flat_map_iterable", lambda f, cb: f.flat_map_iterable(lambda x: [x, cb(x)])),
    ("flat_map_iterable(mapper)", lambda f, cb: f.flat_map_iterable(lambda x: None if cb(x) is None else [x])),
    ("scan", lambda f, cb: f.scan(lambda a, b: cb(b))),
    ("scan(seed)", lambda f, cb: f.scan(lambda a, b: cb(b), 0)),
    ("take_while", lambda f, cb: f.take_while(lambda x: cb(x) is not None and x < 25)),
    ("take_until", lambda f, cb: f.take_until(lambda x: cb(x) is None)),
    ("skip_while", lambda f, cb: f.skip_while(lambda x: cb(x) is not None and x < 3)),
    ("distinct", lambda f, cb: f.distinct(lambda x: (cb(x), x % 4)[1])),
    ("duc", lambda f, cb: f.distinct_until_changed(lambda x: (cb(x), x // 2)[1])),
    ("duc(comparer)", lambda f, cb: f.distinct_until_changed(comparer=lambda a, b: cb(b) is None)),
    ("map+buffer", lambda f, cb: f.map(cb).buffer(3)),
    ("map+take_last", lambda f, cb: f.map(cb).take_last(4)),
    ("map+last", lambda f, cb: f.map(cb).last()),
    ("map+element_at", lambda f, cb: f.map(cb).element_at(5)),
]


def _signals(ts: TestSubscriber[Any]) -> tuple[list[Any], list[type], int]:
    return ts.values, [type(e) for e in ts.errors], ts.completions


@settings(max_examples=50, deadline=None)
@given(
    data=st.lists(st.integers(0, 30), max_size=25),
    k=st.integers(0, 30),
    mode=st.sampled_from(["raise", "none"]),
    which=st.sampled_from(CALLBACK_OPS),
    pattern=patterns,
)
def test_property_fused_and_hidden_identical_signals(
    data: list[int], k: int, mode: str, which: Any, pattern: list[int]
) -> None:
    _, op = which
    fused = run_pattern(op(Flowable.from_iterable(data), _cb_factory(k, mode)), pattern)
    hidden = run_pattern(op(Flowable.from_iterable(data).hide(), _cb_factory(k, mode)), pattern)
    assert _signals(fused) == _signals(hidden)
    assert fused.is_terminated
