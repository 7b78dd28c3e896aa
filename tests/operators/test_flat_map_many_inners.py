"""flat_map with many live inners: the drain visits only inners with work, removal is O(1)
(group_by into 20,000 groups feeds it that many). The signals are those of the one-by-one drain."""

from __future__ import annotations

import operator
from typing import Any

from rstreams import Flowable
from rstreams.testing import TestPublisher, TestSubscriber


def test_group_by_into_many_groups_reduced() -> None:
    data = list(range(60_000))
    groups = 20_000

    def per_group(g: Any) -> Any:
        k = g.key
        return g.reduce(operator.add).map(lambda s: (k, s))

    ts = Flowable.from_iterable(data).group_by(lambda x: x % groups).flat_map(per_group, max_concurrency=None).test()
    ts.assert_complete().assert_no_violations()
    expected: dict[int, int] = {}
    for x in data:
        expected[x % groups] = expected.get(x % groups, 0) + x
    assert dict(ts.values) == expected


def test_inners_completing_without_demand_complete_the_stream() -> None:
    tps: list[TestPublisher[int]] = [TestPublisher.create() for _ in range(5)]
    ts: TestSubscriber[int] = Flowable.range(0, 5).flat_map(lambda i: tps[i], max_concurrency=None).test(0)
    for tp in reversed(tps):
        tp.complete()
    ts.assert_complete().assert_no_values().assert_no_violations()


def test_queued_inners_wait_for_demand_then_complete() -> None:
    tps: list[TestPublisher[int]] = [TestPublisher.create() for _ in range(4)]
    ts: TestSubscriber[int] = Flowable.range(0, 4).flat_map(lambda i: tps[i], max_concurrency=2).test(0)
    tps[1].next(10, 11)
    tps[0].next(1)
    tps[1].complete()
    tps[0].complete()
    ts.assert_no_values().assert_not_complete()
    ts.request(1)
    assert len(ts.values) == 1
    ts.request(2)
    assert sorted(ts.values) == [1, 10, 11]
    # both finished inners freed their slots once: the outer asked for the next two
    tps[2].next(20)
    tps[3].next(30)
    tps[2].complete()
    tps[3].complete()
    ts.request(5)
    assert sorted(ts.values) == [1, 10, 11, 20, 30]
    ts.assert_complete().assert_no_violations()


def test_each_inner_keeps_its_order_under_one_by_one_demand() -> None:
    ts: TestSubscriber[tuple[int, int]] = TestSubscriber(0)
    Flowable.range(0, 50).flat_map(
        lambda i: Flowable.range(0, 20).map(lambda j: (i, j)).hide(), max_concurrency=None, prefetch=3
    ).subscribe(ts)
    while not ts.is_terminated:
        ts.request(1)
    ts.assert_complete().assert_no_violations()
    assert len(ts.values) == 1000
    for i in range(50):
        assert [j for k, j in ts.values if k == i] == list(range(20))


def test_cancel_with_many_queued_inners() -> None:
    ts: TestSubscriber[int] = Flowable.range(0, 1000).flat_map(
        lambda i: Flowable.just(i, i).hide(), max_concurrency=None
    ).test(3)
    ts.assert_value_count(3)
    ts.cancel()
    ts.request(10)
    ts.assert_value_count(3).assert_not_complete().assert_no_violations()
