"""Reactive Streams rule tests (``test_rule_*``) of concat_map_delay_error, switch_map_delay_error and merge_delay_error.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_delay_error_variants.py``."""

from __future__ import annotations

from rstreams import BadRequestError, Flowable
from rstreams.testing import TestSubscriber


def test_rule_3_9_concat_map_delay_error_non_positive_request_signals_an_error() -> None:
    ts: TestSubscriber[int] = TestSubscriber(0)
    Flowable.range(0, 3).concat_map_delay_error(lambda x: Flowable.just(x)).subscribe(ts)
    ts.request(0)
    ts.assert_error(BadRequestError).assert_no_violations()


def test_rule_3_12_concat_map_delay_error_nothing_after_cancel() -> None:
    ts: TestSubscriber[int] = TestSubscriber(2)
    Flowable.range(0, 10).concat_map_delay_error(lambda x: Flowable.just(x).hide()).subscribe(ts)
    ts.cancel()
    ts.request(5)
    ts.assert_values(0, 1).assert_not_terminated().assert_no_violations()

