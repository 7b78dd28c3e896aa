"""Reactive Streams rule tests (``test_rule_*``) of to_sorted_list, sorted, to_set, to_multimap, sum, min, max and average.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_sorted_set_multimap_math.py``."""

from __future__ import annotations

from typing import Any

import pytest

from operators.test_sorted_set_multimap_math import MAX, OPS
from rstreams import Flowable
from rstreams.errors import NoneElementError
from rstreams.testing import TestScheduler, TestSubscriber


@pytest.mark.parametrize(("name", "op", "model"), OPS, ids=[o[0] for o in OPS])
def test_rule_1_1_requests_upstream_unbounded_and_the_result_waits_for_demand(name: str, op: Any, model: Any) -> None:
    calls: list[int] = []
    data = [4, 2, 9, 1]
    ts = op(Flowable.from_iterable(data).hide().do_on_request(calls.append)).test(0)
    assert calls == [MAX]
    ts.assert_no_values().assert_not_complete()
    want = model(data)
    for i in range(len(want)):
        ts.request(1)
        assert ts.values == want[: i + 1]
    ts.request(1)
    ts.assert_result(*want).assert_no_violations()


@pytest.mark.parametrize(("name", "op", "model"), OPS, ids=[o[0] for o in OPS])
@pytest.mark.parametrize("bad", [0, -1])
def test_rule_3_9_bad_request(name: str, op: Any, model: Any, bad: int) -> None:
    for src in (Flowable.just(3, 1, 2), Flowable.just(3, 1, 2).hide()):
        op(src).test(0).request(bad).assert_no_values().assert_error(ValueError, match="3.9").assert_no_violations()


@pytest.mark.parametrize(("name", "op", "model"), OPS, ids=[o[0] for o in OPS])
def test_rule_3_12_cancel_before_completion_cancels_upstream(name: str, op: Any, model: Any) -> None:
    cancelled: list[bool] = []
    ts = op(Flowable.never().do_on_cancel(lambda: cancelled.append(True))).test()
    ts.cancel()
    assert cancelled == [True]
    ts.assert_no_values().assert_not_complete().assert_no_violations()


@pytest.mark.parametrize(("name", "op", "model"), OPS, ids=[o[0] for o in OPS])
def test_rule_2_13_a_none_element_fused_and_hidden(name: str, op: Any, model: Any) -> None:
    for src in (Flowable.from_iterable([1, None, 2]), Flowable.from_iterable([1, None, 2]).hide()):
        op(src).test().assert_no_values().assert_error(NoneElementError).assert_no_violations()


@pytest.mark.parametrize(
    "op",
    [lambda f, k: f.to_multimap(k), lambda f, k: f.min(key=k), lambda f, k: f.max(key=k)],
    ids=["to_multimap", "min", "max"],
)
def test_rule_3_12_a_cancel_inside_a_batch_stops_the_user_calls(op: Any) -> None:
    # observe_on over a TestScheduler hands the 1000 elements on as one batch, on this thread
    sched = TestScheduler()
    ts: TestSubscriber[Any] = TestSubscriber(MAX)
    calls: list[int] = []

    def key(x: int) -> int:
        calls.append(x)
        if x == 10:
            ts.cancel()
        return x

    op(Flowable.range(0, 1000).observe_on(sched, prefetch=1000), key).subscribe(ts)
    sched.trigger_actions()
    assert calls == list(range(11)), f"the user function ran after the cancel: {calls[-3:]}"
    ts.assert_no_values().assert_not_complete().assert_no_violations()

