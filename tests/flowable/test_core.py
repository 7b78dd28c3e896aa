"""Core Flowable: basic sources, map/filter/take/skip/hide, aggregates, fusion equivalence,
subscribe forms. The rule tests (``test_rule_*``): tests/spec/test_rules_core.py. Foreign publishers and
subscribers: tests/spec/test_foreign_publishers_and_subscribers.py."""

from __future__ import annotations

import operator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from operators.harness import Boom, check_raising, check_scenarios, run_one_by_one
from rstreams import MAX_DEMAND, Flowable, plugins
from rstreams.errors import OnErrorNotImplementedError
from rstreams.testing import TestSubscriber


# ------------------------------------------------------------------------------------ sources
def test_just_emits_items_then_completes() -> None:
    Flowable.just(1, 2, 3).test().assert_result(1, 2, 3).assert_no_violations()


def test_just_completes_eagerly_when_demand_equals_count() -> None:
    Flowable.just(1, 2).test(2).assert_result(1, 2).assert_no_violations()


def test_empty_error_never() -> None:
    Flowable.empty().test().assert_result().assert_no_violations()
    Flowable.error(Boom("x")).test().assert_error(Boom, match="x").assert_no_violations()
    Flowable.error(lambda: Boom("lazy")).test().assert_error(Boom, match="lazy").assert_no_violations()
    Flowable.never().test().assert_empty().assert_no_violations()


def test_range_and_from_iterable() -> None:
    Flowable.range(5, 3).test().assert_result(5, 6, 7).assert_no_violations()
    Flowable.range(0, 0).test().assert_result().assert_no_violations()
    Flowable.from_iterable([1, 2]).test().assert_result(1, 2).assert_no_violations()
    Flowable.from_iterable(iter([1, 2])).test().assert_result(1, 2).assert_no_violations()
    with pytest.raises(ValueError):
        Flowable.range(0, -1)
    with pytest.raises(TypeError):
        Flowable.from_iterable(5)  # type: ignore[arg-type]


def test_from_iterable_generator_completes_eagerly_when_exhausted() -> None:
    def gen() -> Any:
        yield 1
        yield 2

    Flowable.from_iterable(gen()).test(2).assert_result(1, 2).assert_no_violations()


def test_from_iterable_error_in_iteration_is_signalled() -> None:
    def gen() -> Any:
        yield 1
        raise Boom("iter")

    Flowable.from_iterable(gen()).test().assert_failure(Boom, 1).assert_no_violations()


def test_range_request_one_at_a_time() -> None:
    ts = run_one_by_one(Flowable.range(0, 5))
    ts.assert_result(0, 1, 2, 3, 4).assert_no_violations()


def test_defer_calls_supplier_per_subscriber() -> None:
    calls = []

    def supplier() -> Flowable[int]:
        calls.append(1)
        return Flowable.just(len(calls))

    f = Flowable.defer(supplier)
    f.test().assert_result(1).assert_no_violations()
    f.test().assert_result(2).assert_no_violations()
    Flowable.defer(lambda: (_ for _ in ()).throw(Boom())).test().assert_error(Boom).assert_no_violations()


def test_from_callable_runs_at_subscription_and_holds_the_value_until_requested() -> None:
    calls = []
    f = Flowable.from_callable(lambda: calls.append(1) or 42)
    assert calls == []
    ts = f.test(0)
    assert calls == [1]
    ts.assert_no_values()
    ts.request(1)
    ts.assert_result(42).assert_no_violations()
    Flowable.from_callable(lambda: None).test().assert_error(TypeError).assert_no_violations()
    Flowable.from_callable(lambda: 1 / 0).test().assert_error(ZeroDivisionError).assert_no_violations()


def test_from_publisher_wraps_foreign_publishers() -> None:
    class Foreign:
        def subscribe(self, s: Any) -> None:
            Flowable.just(7).subscribe(s)

    Flowable.from_publisher(Foreign()).map(lambda x: x + 1).test().assert_result(8).assert_no_violations()
    f = Flowable.just(1)
    assert Flowable.from_publisher(f) is f


# ------------------------------------------------------------------------------------ operators
def test_map_scenarios() -> None:
    check_scenarios(lambda f: f.map(lambda x: x * 2), range(10), lambda d: [x * 2 for x in d])


def test_filter_scenarios() -> None:
    check_scenarios(lambda f: f.filter(lambda x: x % 3 == 0), range(20), lambda d: [x for x in d if x % 3 == 0])


def test_take_scenarios() -> None:
    check_scenarios(lambda f: f.take(4), range(10), lambda d: d[:4])
    check_scenarios(lambda f: f.take(0), range(10), [])
    check_scenarios(lambda f: f.take(40), range(10), lambda d: d[:40])


def test_skip_scenarios() -> None:
    check_scenarios(lambda f: f.skip(4), range(10), lambda d: d[4:])
    check_scenarios(lambda f: f.skip(40), range(10), [])


def test_chain_scenarios() -> None:
    check_scenarios(
        lambda f: f.map(lambda x: x + 1).filter(lambda x: x % 2 == 0).skip(1).take(3),
        range(30),
        lambda d: [x + 1 for x in d if (x + 1) % 2 == 0][1:4],
    )


def test_map_raising_cancels_upstream_and_signals() -> None:
    def bad(x: int) -> int:
        if x == 3:
            raise Boom()
        return x

    check_raising(lambda f: f.map(bad), range(10))
    check_raising(lambda f: f.filter(lambda x: bad(x) >= 0), range(10))


def test_take_never_requests_more_than_count_upstream() -> None:
    seen: list[int] = []
    ts = Flowable.range(0, 100).hide().do_on_request(seen.append).take(3).test()
    ts.assert_result(0, 1, 2).assert_no_violations()
    assert sum(seen) == 3


def test_take_cancels_upstream_when_done() -> None:
    cancelled = []
    Flowable.range(0, 100).hide().do_on_cancel(lambda: cancelled.append(1)).take(2).test().assert_result(0, 1)
    assert cancelled == [1]


def test_hide_breaks_fusion_but_not_results() -> None:
    f = Flowable.range(0, 5).map(lambda x: x)
    assert f._fused() is not None
    assert f.hide()._fused() is None
    assert f.hide().map(lambda x: x)._fused() is None
    f.hide().test().assert_result(0, 1, 2, 3, 4).assert_no_violations()


ops_strategy = st.lists(
    st.sampled_from(["map", "filter", "take", "skip"]), min_size=0, max_size=4
)


def _apply(f: Flowable[int], ops: list[str]) -> Flowable[int]:
    for o in ops:
        if o == "map":
            f = f.map(lambda x: x * 3 + 1)
        elif o == "filter":
            f = f.filter(lambda x: x % 2 == 0)
        elif o == "take":
            f = f.take(5)
        else:
            f = f.skip(2)
    return f


def _model(data: list[int], ops: list[str]) -> list[int]:
    for o in ops:
        if o == "map":
            data = [x * 3 + 1 for x in data]
        elif o == "filter":
            data = [x for x in data if x % 2 == 0]
        elif o == "take":
            data = data[:5]
        else:
            data = data[2:]
    return data


@settings(max_examples=60, deadline=None)
@given(data=st.lists(st.integers(-100, 100), max_size=30), ops=ops_strategy,
       requests=st.lists(st.integers(1, 7), min_size=1, max_size=10), hidden=st.booleans())
def test_property_fused_and_unfused_chains_match_the_model(
    data: list[int], ops: list[str], requests: list[int], hidden: bool
) -> None:
    src = Flowable.from_iterable(data)
    if hidden:
        src = src.hide()
    ts: TestSubscriber[int] = TestSubscriber(0)
    _apply(src, ops).subscribe(ts)
    for n in requests:
        ts.request(n)
    ts.request(MAX_DEMAND)
    want = _model(list(data), ops)
    ts.assert_result(*want).assert_no_violations()


# ------------------------------------------------------------------------------------ aggregates
@pytest.mark.parametrize("hidden", [False, True])
def test_aggregates(hidden: bool) -> None:
    def src() -> Flowable[int]:
        f = Flowable.range(1, 5)
        return f.hide() if hidden else f

    src().reduce(operator.add).test().assert_result(15).assert_no_violations()
    src().reduce(lambda a, b: a * b, seed=1).test().assert_result(120).assert_no_violations()
    src().to_list().test().assert_result([1, 2, 3, 4, 5]).assert_no_violations()
    src().count().test().assert_result(5).assert_no_violations()
    src().collect(list, list.append).test().assert_result([1, 2, 3, 4, 5]).assert_no_violations()
    src().to_dict(lambda x: x % 2).test().assert_result({1: 5, 0: 4}).assert_no_violations()
    src().all(lambda x: x > 0).test().assert_result(True).assert_no_violations()
    src().all(lambda x: x < 3).test().assert_result(False).assert_no_violations()
    src().any(lambda x: x == 3).test().assert_result(True).assert_no_violations()
    src().any(lambda x: x > 9).test().assert_result(False).assert_no_violations()
    src().contains(4).test().assert_result(True).assert_no_violations()


def test_reduce_of_empty_without_seed_completes_empty() -> None:
    Flowable.empty().reduce(operator.add).test().assert_result().assert_no_violations()
    Flowable.empty().reduce(operator.add, seed=0).test().assert_result(0).assert_no_violations()


def test_aggregate_waits_for_demand() -> None:
    ts = Flowable.range(0, 3).hide().to_list().test(0)
    ts.assert_no_values().assert_not_complete()
    ts.request(1)
    ts.assert_result([0, 1, 2]).assert_no_violations()


@pytest.mark.parametrize("hidden", [False, True])
def test_fused_terminal_none_element_matches_unfused(hidden: bool) -> None:
    f = Flowable.range(0, 5000)
    if hidden:
        f = f.hide()
    ts = f.map(lambda x: None if x == 4500 else x).reduce(operator.add).test()
    ts.assert_error(TypeError, match="map").assert_no_violations()


def test_aggregate_error_propagates() -> None:
    Flowable.concat(Flowable.just(1), Flowable.error(Boom())).to_list().test().assert_error(Boom).assert_no_violations()


# ------------------------------------------------------------------------------------ subscribe
def test_lambda_subscribe_returns_disposable() -> None:
    got: list[int] = []
    done: list[bool] = []
    d = Flowable.range(0, 3).subscribe(on_next=got.append, on_complete=lambda: done.append(True))
    assert got == [0, 1, 2] and done == [True]
    assert d.is_disposed
    d2 = Flowable.never().subscribe(print)
    assert not d2.is_disposed
    d2.dispose()
    assert d2.is_disposed


def test_missing_on_error_goes_to_hook_never_silently() -> None:
    with plugins.collect_errors() as errors:
        Flowable.error(Boom("lost?")).subscribe(on_next=print)
    assert len(errors) == 1 and isinstance(errors[0], OnErrorNotImplementedError)
    assert isinstance(errors[0].__cause__, Boom)


def test_raising_on_next_callback_cancels_and_reaches_on_error() -> None:
    errs: list[BaseException] = []
    cancelled = []

    def on_next(x: int) -> None:
        raise Boom(x)

    Flowable.range(0, 5).hide().do_on_cancel(lambda: cancelled.append(1)).subscribe(on_next=on_next, on_error=errs.append)
    assert len(errs) == 1 and isinstance(errs[0], Boom) and cancelled == [1]


def test_pipe_compose_lift_to() -> None:
    Flowable.range(0, 10).pipe(lambda f: f.filter(lambda x: x % 2 == 0), lambda f: f.take(2)).test().assert_result(0, 2)
    Flowable.range(0, 3).compose(lambda f: f.map(str)).test().assert_result("0", "1", "2").assert_no_violations()
    assert Flowable.just(1, 2).to(lambda f: f.test().values) == [1, 2]

    class Doubler:
        _rs_no_wrap = True

        def __init__(self, down: Any) -> None:
            self.down = down

        def on_subscribe(self, s: Any) -> None:
            self.down.on_subscribe(s)

        def on_next(self, x: int) -> None:
            self.down.on_next(x * 2)

        def on_error(self, e: BaseException) -> None:
            self.down.on_error(e)

        def on_complete(self) -> None:
            self.down.on_complete()

    Flowable.range(0, 3).lift(Doubler).test().assert_result(0, 2, 4).assert_no_violations()


def test_foreign_lift_operator_is_wrapped_strictly() -> None:
    class Passthrough:
        def __init__(self, down: Any) -> None:
            self.down = down

        def on_subscribe(self, s: Any) -> None:
            self.down.on_subscribe(s)

        def on_next(self, x: int) -> None:
            self.down.on_next(x)

        def on_error(self, e: BaseException) -> None:
            self.down.on_error(e)

        def on_complete(self) -> None:
            self.down.on_complete()

    Flowable.range(0, 3).lift(Passthrough).test().assert_result(0, 1, 2).assert_no_violations()


def test_take_and_skip_with_seconds_are_the_timed_variants() -> None:
    from rstreams.testing import TestScheduler

    sch = TestScheduler()
    ts = Flowable.interval(1.0, scheduler=sch).take(seconds=3.5, scheduler=sch).test()
    sch.advance_by(5)
    ts.assert_result(0, 1, 2).assert_no_violations()
    ts2 = Flowable.interval(1.0, scheduler=sch).skip(seconds=2.5, scheduler=sch).take(2).test()
    sch.advance_by(10)
    ts2.assert_result(2, 3).assert_no_violations()
    with pytest.raises(TypeError):
        Flowable.range(0, 3).take(2, seconds=1.0)
    with pytest.raises(TypeError):
        Flowable.range(0, 3).skip()


def test_defer_supplier_returning_a_non_publisher_fails_the_stream() -> None:
    ts: TestSubscriber[Any] = Flowable.defer(lambda: [1, 2]).test()  # type: ignore[arg-type,return-value]
    ts.assert_error(TypeError).assert_no_values().assert_no_violations()
    assert "not a Publisher" in str(ts.errors[0])
