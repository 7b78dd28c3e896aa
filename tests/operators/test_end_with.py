"""end_with: items or one Publisher after the source; fused and hidden; demand carried over."""

from __future__ import annotations

import pytest

from operators.harness import Boom, check_scenarios
from rstreams import Flowable, NoneElementError
from rstreams.testing import TestPublisher, TestSubscriber


def test_end_with_items_scenarios() -> None:
    check_scenarios(lambda f: f.end_with(-1, -2), range(6), lambda d: list(d) + [-1, -2])


def test_end_with_publisher_scenarios() -> None:
    check_scenarios(lambda f: f.end_with(Flowable.range(100, 2).hide()), range(4), lambda d: list(d) + [100, 101])


def test_end_with_is_the_mirror_of_start_with() -> None:
    Flowable.just(2).start_with(1).end_with(3).test().assert_result(1, 2, 3).assert_no_violations()
    f = Flowable.just(1)
    assert f.end_with() is f


def test_end_with_unused_demand_carries_over_to_the_items() -> None:
    tp: TestPublisher[int] = TestPublisher.create()
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.from_publisher(tp).end_with(8, 9).subscribe(ts)
    ts.request(2)
    tp.next(1)
    tp.complete()
    ts.assert_values(1, 8).assert_not_terminated()
    ts.request(1)
    ts.assert_result(1, 8, 9).assert_no_violations()


def test_end_with_upstream_error_skips_the_items() -> None:
    Flowable.error(Boom()).end_with(1).test().assert_failure(Boom).assert_no_violations()


def test_end_with_bad_arguments() -> None:
    with pytest.raises(NoneElementError, match="rule 2.13"):
        Flowable.just(1).end_with(2, None)
