"""Reactive Streams rule tests (``test_rule_*``) of flat_map_iterable, scan and buffer.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_transform.py``."""

from __future__ import annotations

from typing import Any

import pytest

from operators.test_transform import MAX, both
from rstreams import Flowable
from rstreams.testing import TestSubscriber


def upstream_requests(op: Any, data: list[Any], initial: int) -> tuple[list[int], TestSubscriber[Any]]:
    """The requests ``op`` makes to a hidden upstream when the downstream requests ``initial``."""
    calls: list[int] = []
    ts: TestSubscriber[Any] = TestSubscriber(initial)
    op(Flowable.from_iterable(data).hide().do_on_request(calls.append)).subscribe(ts)
    return calls, ts


def test_rule_1_1_flat_map_iterable_prefetches_upstream_in_batches() -> None:
    calls, ts = upstream_requests(lambda f: f.flat_map_iterable(lambda x: [x]), list(range(300)), 1)
    assert calls[0] == 128
    ts.request(MAX)
    ts.assert_value_count(300).assert_complete().assert_no_violations()
    assert all(c == 96 for c in calls[1:])  # limit = prefetch - prefetch // 4


def test_rule_3_9_flat_map_iterable_bad_request() -> None:
    for _, src in both([1, 2]):
        ts = src.flat_map_iterable(lambda x: [x]).test(0)
        ts.request(0)
        ts.assert_error(ValueError, match="3.9").assert_no_violations()


def test_rule_1_1_scan_seed_uses_one_unit_of_demand() -> None:
    calls, ts = upstream_requests(lambda f: f.scan(lambda a, b: a + b, 0), [1, 2, 3], 2)
    ts.assert_values(0, 1).assert_not_complete()
    assert calls == [1]
    ts.request(5)
    ts.assert_result(0, 1, 3, 6).assert_no_violations()


def test_rule_3_9_scan_seed_bad_request_before_seed() -> None:
    for _, src in both([1, 2]):
        ts = src.scan(lambda a, b: a + b, 0).test(0)
        ts.request(-1)
        ts.assert_no_values().assert_error(ValueError, match="3.9").assert_no_violations()


def test_rule_1_1_buffer_exact_requests_n_times_count() -> None:
    calls, ts = upstream_requests(lambda f: f.buffer(3), list(range(20)), 2)
    assert calls == [6]
    ts.request(1)
    assert calls == [6, 3]
    ts.assert_values([0, 1, 2], [3, 4, 5], [6, 7, 8]).assert_no_violations()


def test_rule_1_1_buffer_skip_first_request_leaves_out_the_last_gap() -> None:
    calls, ts = upstream_requests(lambda f: f.buffer(2, 5), list(range(30)), 3)
    assert calls == [3 * 2 + 2 * 3]
    ts.request(2)
    assert calls[1] == 2 * 5
    ts.assert_values([0, 1], [5, 6], [10, 11], [15, 16], [20, 21]).assert_no_violations()


def test_rule_1_1_buffer_overlapping_first_request() -> None:
    calls, ts = upstream_requests(lambda f: f.buffer(4, 1), list(range(30)), 2)
    assert calls == [4 + 1]
    ts.request(3)
    assert calls[1] == 3
    ts.assert_values([0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6], [4, 5, 6, 7]).assert_no_violations()


def test_rule_1_1_buffer_unbounded_demand_is_capped() -> None:
    calls, ts = upstream_requests(lambda f: f.buffer(3), list(range(7)), MAX)
    assert calls == [MAX]
    ts.assert_result([0, 1, 2], [3, 4, 5], [6]).assert_no_violations()


def test_rule_3_9_buffer_bad_request() -> None:
    for count, skip in [(2, 2), (2, 3), (3, 1)]:
        for _, src in both(list(range(10))):
            ts = src.buffer(count, skip).test(0)
            ts.request(0)
            ts.assert_error(ValueError, match="3.9").assert_no_violations()


def test_rule_3_9_buffer_overlapping_bad_request_in_the_tail() -> None:
    ts = Flowable.range(0, 4).hide().buffer(3, 1).test(1)
    ts.assert_values([0, 1, 2])
    ts.request(-5)
    ts.assert_values([0, 1, 2]).assert_error(ValueError, match="3.9").assert_no_violations()
    ts.request(5)
    ts.assert_value_count(1).assert_no_violations()


class _OneByOne(TestSubscriber[Any]):
    def on_next(self, item: Any) -> None:
        super().on_next(item)
        self.request(1)


@pytest.mark.parametrize(
    "op",
    [
        lambda f: f.flat_map_iterable(lambda x: [x]),
        lambda f: f.scan(lambda a, b: b, 0),
        lambda f: f.buffer(1),
        lambda f: f.buffer(2, 1),
        lambda f: f.buffer(1, 2),
        lambda f: f.take_last(3000),
        lambda f: f.skip_while(lambda x: x < 2000),
        lambda f: f.distinct(lambda x: x // 2),
        lambda f: f.distinct_until_changed(lambda x: x // 2),
        lambda f: f.skip_last(10),
        lambda f: f.default_if_empty(1),
        lambda f: f.take_until(Flowable.never()),
    ],
    ids=[
        "flat_map_iterable",
        "scan_seed",
        "buffer",
        "buffer_overlap",
        "buffer_skip",
        "take_last",
        "skip_while",
        "distinct",
        "duc",
        "skip_last",
        "default_if_empty",
        "take_until_publisher",
    ],
)
def test_rule_3_3_one_by_one_requests_do_not_recurse(op: Any) -> None:
    n = 5000
    for _, src in both(list(range(n))):
        ts = _OneByOne(1)
        op(src).subscribe(ts)
        ts.await_done(5).assert_complete().assert_no_errors().assert_no_violations()
        assert len(ts.values) > 0

