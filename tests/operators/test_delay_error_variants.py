"""concat_map_delay_error (till the end / at the boundary), switch_map_delay_error and
merge_delay_error: scenarios, error accumulation (ExceptionGroup), demand across failed inners,
cancellation, threaded inners, rules and bad arguments."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from operators.harness import Boom, check_raising, check_scenarios, run_one_by_one
from operators.test_merge_zip import ThreadedRange, run_pattern
from rstreams import Flowable, NoneElementError, plugins
from rstreams.testing import TestPublisher, TestSubscriber


def _fails_on_odd(x: int) -> Flowable[int]:
    return Flowable.error(Boom(x)) if x % 2 else Flowable.just(x)


def _boom_args(e: BaseException) -> list[Any]:
    """The Boom arguments of one error or of an ExceptionGroup, in order."""
    if isinstance(e, BaseExceptionGroup):
        return [a for sub in e.exceptions for a in _boom_args(sub)]
    assert isinstance(e, Boom), e
    return list(e.args)


# ---------------------------------------------------------------------------------------------
# concat_map_delay_error: scenarios (fused and hidden sources, one by one, cancel, upstream error)


@pytest.mark.parametrize("till_the_end", [True, False])
def test_concat_map_delay_error_scenarios(till_the_end: bool) -> None:
    def expected(d: list[int]) -> list[int]:
        return [y for x in d for y in (x, x * 10)]

    check_scenarios(
        lambda f: f.concat_map_delay_error(lambda x: Flowable.just(x, x * 10).hide(), till_the_end, prefetch=3),
        range(9),
        expected,
        # the upstream error comes after every element (it follows the data)
        on_error_expected=lambda d: (expected(d), Boom),
    )


def test_concat_map_delay_error_scalar_inners_scenarios() -> None:
    check_scenarios(
        lambda f: f.concat_map_delay_error(lambda x: Flowable.empty() if x % 3 == 0 else Flowable.just(x)),
        range(10),
        lambda d: [x for x in d if x % 3],
        on_error_expected=lambda d: ([x for x in d if x % 3], Boom),
    )


def test_concat_map_delay_error_same_signals_fused_and_hidden() -> None:
    def run(src: Flowable[int]) -> tuple[list[int], list[Any]]:
        ts = src.concat_map_delay_error(_fails_on_odd).test()
        ts.assert_no_violations()
        return ts.values, [_boom_args(e) for e in ts.errors]

    assert run(Flowable.range(0, 6)) == run(Flowable.range(0, 6).hide()) == ([0, 2, 4], [[1, 3, 5]])


# ---------------------------------------------------------------------------------------------
# concat_map_delay_error: till the end


def test_concat_map_delay_error_collects_inner_errors_into_an_exception_group() -> None:
    ts = Flowable.range(0, 6).concat_map_delay_error(_fails_on_odd).test()
    ts.assert_values(0, 2, 4).assert_no_violations()
    assert len(ts.errors) == 1
    err = ts.errors[0]
    assert isinstance(err, ExceptionGroup)
    assert _boom_args(err) == [1, 3, 5]


def test_concat_map_delay_error_single_error_is_not_wrapped() -> None:
    ts = Flowable.range(0, 3).concat_map_delay_error(lambda x: Flowable.error(Boom(x)) if x == 1 else Flowable.just(x)).test()
    ts.assert_values(0, 2).assert_error(Boom).assert_no_violations()


def test_concat_map_delay_error_upstream_error_lets_the_queue_and_inner_run() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    inners: dict[int, TestPublisher[int]] = {}

    def mapper(x: int) -> TestPublisher[int]:
        inners[x] = TestPublisher.create()
        return inners[x]

    ts = Flowable.from_publisher(outer).concat_map_delay_error(mapper, prefetch=4).test()
    outer.next(1, 2)
    outer.error(Boom("up"))
    ts.assert_no_values().assert_not_terminated()
    inners[1].emit(10)
    inners[2].emit(20, 21)
    ts.assert_values(10, 20, 21).assert_error(Boom, match="up").assert_no_violations()


def test_concat_map_delay_error_failed_inner_carries_its_unused_demand_over() -> None:
    def mapper(x: int) -> Flowable[int]:
        return Flowable.just(x).concat_with(Flowable.error(Boom(x))).hide()

    ts = run_one_by_one(Flowable.range(0, 4).concat_map_delay_error(mapper))
    ts.assert_values(0, 1, 2, 3).assert_no_violations()
    assert _boom_args(ts.errors[0]) == [0, 1, 2, 3]


def test_concat_map_delay_error_requested_exactly() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.range(0, 4).concat_map_delay_error(lambda x: Flowable.range(x * 10, 3).hide()).subscribe(ts)
    ts.request(2)
    ts.assert_values(0, 1)
    ts.request(3)
    ts.assert_values(0, 1, 2, 10, 11).assert_not_terminated()
    ts.request(100)
    ts.assert_value_count(12).assert_complete().assert_no_violations()


def test_concat_map_delay_error_mapper_error_is_immediate_with_the_collected_ones() -> None:
    cancelled: list[bool] = []

    def mapper(x: int) -> Flowable[int]:
        if x == 2:
            raise Boom(2)
        return _fails_on_odd(x)

    ts = Flowable.range(0, 10).hide().do_on_cancel(lambda: cancelled.append(True)).concat_map_delay_error(mapper).test()
    ts.assert_values(0).assert_no_violations()
    assert _boom_args(ts.errors[0]) == [1, 2]
    assert cancelled


def test_concat_map_delay_error_raising_mapper_cancels_upstream() -> None:
    def mapper(x: int) -> Flowable[int]:
        raise Boom(x)

    check_raising(lambda f: f.concat_map_delay_error(mapper), range(5))
    check_raising(lambda f: f.concat_map_delay_error(mapper, till_the_end=False), range(5))


def test_concat_map_delay_error_mapper_returning_none_is_rule_2_13() -> None:
    ts = Flowable.range(0, 3).concat_map_delay_error(lambda x: None).test()  # type: ignore[arg-type, return-value]
    ts.assert_error(NoneElementError).assert_no_violations()


def test_concat_map_delay_error_mapper_returning_a_non_publisher_is_a_type_error() -> None:
    ts = Flowable.range(0, 3).concat_map_delay_error(lambda x: [x]).test()  # type: ignore[arg-type, return-value]
    ts.assert_error(TypeError, match="not a Publisher").assert_no_violations()


def test_concat_map_delay_error_threaded_inners_keep_order_and_collect_every_error() -> None:
    def mapper(x: int) -> Any:
        return ThreadedRange(x * 10, 3, seed=x, jitter=0.001, fail=Boom(x) if x % 3 == 0 else None)

    ts = Flowable.range(0, 12).concat_map_delay_error(mapper).test()
    ts.await_done(10)
    assert ts.values == [x * 10 + i for x in range(12) for i in range(3)]
    assert _boom_args(ts.errors[0]) == [0, 3, 6, 9]
    ts.assert_no_violations()


def test_concat_map_delay_error_cancel_reports_collected_errors_as_undeliverable() -> None:
    inner: TestPublisher[int] = TestPublisher.create()
    sources = [Flowable.error(Boom("first")), inner]
    with plugins.collect_errors() as undeliverable:
        ts = Flowable.range(0, 2).concat_map_delay_error(lambda x: sources[x]).test()
        inner.next(1)
        ts.cancel()
        inner.assert_was_cancelled()
    ts.assert_values(1).assert_not_terminated().assert_no_violations()
    assert any(isinstance(e, Boom) or "first" in repr(e) for e in undeliverable), undeliverable


# ---------------------------------------------------------------------------------------------
# concat_map_delay_error: at the boundary (till_the_end=False)


def test_concat_map_delay_error_boundary_inner_error_stops_and_cancels_upstream() -> None:
    cancelled: list[bool] = []
    mapped: list[int] = []

    def mapper(x: int) -> Flowable[int]:
        mapped.append(x)
        return _fails_on_odd(x)

    ts = (
        Flowable.range(0, 10).hide().do_on_cancel(lambda: cancelled.append(True))
        .concat_map_delay_error(mapper, till_the_end=False).test()
    )
    ts.assert_values(0).assert_error(Boom).assert_no_violations()
    assert mapped == [0, 1]
    assert cancelled


def test_concat_map_delay_error_boundary_upstream_error_waits_for_the_active_inner_only() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    inners: dict[int, TestPublisher[int]] = {}

    def mapper(x: int) -> TestPublisher[int]:
        inners[x] = TestPublisher.create()
        return inners[x]

    ts = Flowable.from_publisher(outer).concat_map_delay_error(mapper, till_the_end=False, prefetch=4).test()
    outer.next(1, 2)
    outer.error(Boom("up"))
    ts.assert_not_terminated()
    inners[1].next(10)
    inners[1].complete()
    ts.assert_values(10).assert_error(Boom, match="up").assert_no_violations()
    assert list(inners) == [1]  # the queued 2 is never mapped


# ---------------------------------------------------------------------------------------------
# concat_map_delay_error: rules and arguments


def test_concat_map_delay_error_bad_arguments() -> None:
    f = Flowable.range(0, 3)
    with pytest.raises(TypeError, match="mapper must be callable"):
        f.concat_map_delay_error(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="prefetch must be > 0"):
        f.concat_map_delay_error(Flowable.just, prefetch=0)
    with pytest.raises(TypeError, match="prefetch must be an int"):
        f.concat_map_delay_error(Flowable.just, prefetch=1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="till_the_end must be a bool"):
        f.concat_map_delay_error(Flowable.just, till_the_end="yes")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# switch_map_delay_error


def test_switch_map_delay_error_fused_hidden_and_upstream_error() -> None:
    # switch_map consumes its outer unbounded (what survives depends on demand, so no one-by-one
    # model): with unbounded demand, synchronous inners each run to their end before the switch
    for src in (Flowable.range(1, 4), Flowable.range(1, 4).hide()):
        ts = src.switch_map_delay_error(lambda x: Flowable.just(x, -x)).test()
        ts.assert_result(1, -1, 2, -2, 3, -3, 4, -4).assert_no_violations()
        tse = src.concat_with(Flowable.error(Boom("up"))).switch_map_delay_error(_fails_on_odd).test()
        tse.assert_values(2, 4).assert_no_violations()
        assert _boom_args(tse.errors[0]) == [1, 3, "up"]


def test_switch_map_delay_error_collects_errors_until_the_last_inner_ends() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    inners: dict[int, TestPublisher[int]] = {}

    def mapper(x: int) -> TestPublisher[int]:
        inners[x] = TestPublisher.create()
        return inners[x]

    ts = Flowable.from_publisher(outer).switch_map_delay_error(mapper).test()
    outer.next(1)
    inners[1].error(Boom(1))
    outer.next(2)
    inners[2].next(20)
    outer.error(Boom("outer"))
    ts.assert_values(20).assert_not_terminated()
    inners[2].emit(21)
    ts.assert_values(20, 21).assert_no_violations()
    assert _boom_args(ts.errors[0]) == [1, "outer"]


def test_switch_map_delay_error_same_as_switch_map_with_the_flag() -> None:
    a = Flowable.range(0, 6).switch_map_delay_error(_fails_on_odd).test()
    b = Flowable.range(0, 6).switch_map(_fails_on_odd, delay_error=True).test()
    assert a.values == b.values == [0, 2, 4]
    assert _boom_args(a.errors[0]) == _boom_args(b.errors[0]) == [1, 3, 5]
    a.assert_no_violations()
    b.assert_no_violations()


def test_switch_map_delay_error_raising_mapper_cancels_upstream() -> None:
    def mapper(x: int) -> Flowable[int]:
        raise Boom(x)

    check_raising(lambda f: f.switch_map_delay_error(mapper), range(5))


def test_switch_map_delay_error_bad_arguments() -> None:
    with pytest.raises(TypeError):
        Flowable.range(0, 3).switch_map_delay_error(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Flowable.range(0, 3).switch_map_delay_error(Flowable.just, prefetch=0)


# ---------------------------------------------------------------------------------------------
# merge_delay_error


def test_merge_delay_error_scenarios() -> None:
    check_scenarios(
        lambda f: Flowable.merge_delay_error(f, Flowable.empty().hide()),
        range(10),
        list(range(10)),
        on_error_expected=lambda d: (list(d), Boom),
    )


def test_merge_delay_error_delivers_every_element_then_the_errors() -> None:
    ts = Flowable.merge_delay_error(
        Flowable.error(Boom(1)), Flowable.range(0, 3).hide(), Flowable.error(Boom(2)), Flowable.just(9)
    ).test()
    assert sorted(ts.values) == [0, 1, 2, 9]
    assert _boom_args(ts.errors[0]) == [1, 2]
    ts.assert_no_violations()


def test_merge_delay_error_one_at_a_time() -> None:
    ts = run_one_by_one(Flowable.merge_delay_error(Flowable.range(0, 3).hide(), Flowable.error(Boom()), Flowable.range(3, 3)))
    assert sorted(ts.values) == list(range(6))
    ts.assert_error(Boom).assert_no_violations()


def test_merge_delay_error_bad_arguments() -> None:
    with pytest.raises(TypeError, match="expected a Publisher"):
        Flowable.merge_delay_error(Flowable.just(1), 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="prefetch"):
        Flowable.merge_delay_error(Flowable.just(1), Flowable.just(2), prefetch=0)
    with pytest.raises(ValueError, match="max_concurrency"):
        Flowable.merge_delay_error(Flowable.just(1), Flowable.just(2), max_concurrency=0)


# ---------------------------------------------------------------------------------------------
# concat_map_delay_error: threads (race: the outer's error on its thread vs inners on theirs)


@pytest.mark.parametrize("seed", range(4))
def test_concat_map_delay_error_threaded_outer_error_comes_after_every_inner(seed: int) -> None:
    outer: Any = ThreadedRange(0, 8, seed=seed, jitter=0.001, fail=Boom("up"))
    ts = Flowable.from_publisher(outer).concat_map_delay_error(
        lambda x: ThreadedRange(x * 10, 3, seed=seed + x, jitter=0.001), prefetch=3
    ).test()
    ts.await_done(10)
    assert ts.values == [x * 10 + i for x in range(8) for i in range(3)]
    ts.assert_error(Boom, match="up").assert_no_violations()


@pytest.mark.parametrize("seed", range(4))
def test_concat_map_delay_error_boundary_threaded_inner_error_stops_after_that_inner(seed: int) -> None:
    def mapper(x: int) -> Any:
        return ThreadedRange(x * 10, 3, seed=seed + x, jitter=0.001, fail=Boom(x) if x == 3 else None)

    ts = Flowable.range(0, 8).concat_map_delay_error(mapper, till_the_end=False).test()
    ts.await_done(10)
    assert ts.values == [x * 10 + i for x in range(4) for i in range(3)]
    ts.assert_error(Boom, match="3").assert_no_violations()


# ---------------------------------------------------------------------------------------------
# concat_map_delay_error against a plain-Python model (random inners, demand patterns, modes)


@settings(max_examples=60, deadline=None)
@given(
    data=st.lists(st.integers(0, 5), max_size=12),
    pattern=st.lists(st.integers(1, 4), max_size=8),
    hidden=st.booleans(),
    till_the_end=st.booleans(),
    prefetch=st.integers(1, 4),
)
def test_property_concat_map_delay_error_matches_the_model(
    data: list[int], pattern: list[int], hidden: bool, till_the_end: bool, prefetch: int
) -> None:
    # x == 0: empty; x == 1: just(100); x == 5: one element then an error; else range(x * 10, x)
    def mapper(i_x: tuple[int, int]) -> Flowable[int]:
        i, x = i_x
        if x == 0:
            return Flowable.empty()
        if x == 1:
            return Flowable.just(100)
        if x == 5:
            return Flowable.just(50).concat_with(Flowable.error(Boom(i))).hide()
        f = Flowable.range(x * 10, x)
        return f.hide() if x % 2 else f

    def model_values(x: int) -> list[int]:
        return [] if x == 0 else [100] if x == 1 else [50] if x == 5 else list(range(x * 10, x * 11))

    failing = [i for i, x in enumerate(data) if x == 5]
    upto = len(data) if till_the_end or not failing else failing[0] + 1
    want_values = [y for x in data[:upto] for y in model_values(x)]
    want_errors = failing if till_the_end else failing[:1]

    src = Flowable.from_iterable(list(enumerate(data)))
    if hidden:
        src = src.hide()
    ts = run_pattern(src.concat_map_delay_error(mapper, till_the_end, prefetch), pattern)
    assert ts.values == want_values
    if want_errors:
        assert len(ts.errors) == 1 and _boom_args(ts.errors[0]) == want_errors
    else:
        ts.assert_complete()
    ts.assert_no_violations()
