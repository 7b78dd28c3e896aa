"""Reactive Streams rule tests (``test_rule_*``) of the core Flowable: the basic sources, map, the
aggregates and subscribe (``None`` elements, rule 2.13; bad requests, rule 3.9; demand up to and past
the maximum, rule 3.17; no recursion from a request in on_next, rule 3.3; subscribe(None), rule 1.9).

Their other tests (scenarios, fusion equivalence, properties, subscribe forms) are in ``tests/flowable/test_core.py``."""

from __future__ import annotations

from typing import Any

import pytest

from rstreams import MAX_DEMAND, Flowable


def test_rule_2_13_just_none_is_refused_at_assembly() -> None:
    with pytest.raises(TypeError, match="2.13"):
        Flowable.just(1, None)


def test_rule_3_9_never_signals_error_on_bad_request() -> None:
    ts = Flowable.never().test(0)
    ts.request(0)
    ts.assert_error(ValueError, match="3.9").assert_no_violations()


def test_rule_2_13_from_iterable_none_element_is_type_error() -> None:
    Flowable.from_iterable([1, None, 3]).test().assert_failure(TypeError, 1).assert_no_violations()


def test_rule_3_17_cumulative_demand_up_to_max() -> None:
    ts = Flowable.range(0, 3).test(0)
    ts.request(MAX_DEMAND // 2)
    ts.request(MAX_DEMAND // 2)
    ts.request(1)
    ts.assert_result(0, 1, 2).assert_no_violations()


def test_rule_3_17_demand_above_max_is_unbounded() -> None:
    ts = Flowable.range(0, 3).test(0)
    ts.request(2**64)
    ts.assert_result(0, 1, 2).assert_no_violations()


@pytest.mark.parametrize("bad", [0, -5, True, 1.5, None, "3"])
def test_rule_3_9_range_bad_request_signals_error(bad: Any) -> None:
    ts = Flowable.range(0, 10).test(0)
    ts.request(bad)
    assert len(ts.errors) == 1
    assert isinstance(ts.errors[0], (ValueError, TypeError)) and "3.9" in str(ts.errors[0])
    ts.assert_no_values().assert_no_violations()


def test_rule_3_3_request_from_on_next_does_not_recurse() -> None:
    depth = [0, 0]

    class Sub:
        _rs_no_wrap = True

        def on_subscribe(self, s: Any) -> None:
            self.s = s
            s.request(1)

        def on_next(self, x: int) -> None:
            depth[0] += 1
            depth[1] = max(depth[1], depth[0])
            self.s.request(1)
            depth[0] -= 1

        def on_error(self, e: BaseException) -> None:
            raise AssertionError(e)

        def on_complete(self) -> None:
            pass

    Flowable.range(0, 5000).subscribe(Sub())
    assert depth[1] == 1


@pytest.mark.parametrize("hidden", [False, True])
def test_rule_2_13_map_returning_none_is_type_error_naming_map(hidden: bool) -> None:
    src = Flowable.range(0, 5)
    if hidden:
        src = src.hide()
    ts = src.map(lambda x: None if x == 2 else x).test()
    ts.assert_failure(TypeError, 0, 1).assert_no_violations()
    assert "map()" in str(ts.errors[0])


def test_rule_3_9_aggregate_bad_request() -> None:
    ts = Flowable.range(0, 3).hide().count().test(0)
    ts.request(-1)
    ts.assert_error(ValueError, match="3.9").assert_no_violations()


@pytest.mark.parametrize("hidden", [False, True])
def test_rule_2_13_reduce_returning_none(hidden: bool) -> None:
    f = Flowable.range(0, 5)
    if hidden:
        f = f.hide()
    f.reduce(lambda a, b: None).test().assert_error(TypeError, match="reduce").assert_no_violations()


def test_rule_1_9_subscribe_none_raises_type_error() -> None:
    with pytest.raises(TypeError, match="1.9"):
        Flowable.just(1).subscribe(None)
