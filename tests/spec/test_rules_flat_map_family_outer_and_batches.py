"""Reactive Streams rule tests (``test_rule_*``) of flat_map, concat_map, switch_map and
concat_map_eager: an outer that already terminated is never cancelled (rule 2.4).

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_flat_map_family_outer_and_batches.py``."""

from __future__ import annotations

import pytest

from rstreams import Flowable
from rstreams.testing import TestPublisher, TestSubscriber


def test_rule_2_4_flat_map_does_not_cancel_an_outer_that_completed() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    inner: TestPublisher[str] = TestPublisher.create()
    ts: TestSubscriber[str] = Flowable.from_publisher(outer).flat_map(lambda _: inner).test()
    outer.next(1).complete()
    inner.next("a").complete()
    ts.assert_result("a").assert_no_violations()
    outer.assert_not_cancelled()
    inner.assert_not_cancelled()


def test_rule_2_4_flat_map_does_not_cancel_an_outer_that_failed_with_delay_error() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    inner: TestPublisher[str] = TestPublisher.create()
    ts: TestSubscriber[str] = (
        Flowable.from_publisher(outer).flat_map(lambda _: inner, delay_error=True).test()
    )
    outer.next(1).error(ValueError("outer"))
    inner.next("a").complete()
    ts.assert_values("a").assert_error(ValueError).assert_no_violations()
    outer.assert_not_cancelled()


@pytest.mark.parametrize("op", ["switch_map", "concat_map_eager"])
@pytest.mark.parametrize("ending", ["complete", "error"])
def test_rule_2_4_switch_map_and_concat_map_eager_do_not_cancel_a_terminated_outer(
    op: str, ending: str
) -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    inner: TestPublisher[int] = TestPublisher.create()
    f = Flowable.from_publisher(outer)
    mapped = (
        f.switch_map(lambda _: inner, delay_error=True)
        if op == "switch_map"
        else f.concat_map_eager(lambda _: inner)
    )
    ts: TestSubscriber[int] = mapped.test()
    outer.next(1)
    if ending == "complete":
        outer.complete()
    else:
        outer.error(ValueError("outer"))
    inner.next(5).complete()
    if op == "concat_map_eager" and ending == "error":  # no delay_error: the error ends it at once
        ts.assert_failure(ValueError).assert_no_violations()
        inner.assert_was_cancelled()
    else:
        ts.assert_values(5).assert_no_violations()
        assert ts.completions + len(ts.errors) == 1
    outer.assert_not_cancelled()
