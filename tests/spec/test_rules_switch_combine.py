"""Reactive Streams rule tests (``test_rule_*``) of switch_map, concat_map_eager, combine_latest, with_latest_from, amb, skip_until and parallel.

Their other tests (scenarios, properties, arguments) are in ``tests/operators/test_switch_combine.py``."""

from __future__ import annotations

from rstreams import Flowable


def test_rule_3_9_switch_map_bad_request() -> None:
    ts = Flowable.never().switch_map(lambda x: Flowable.just(x)).test(0)
    ts.request(0)
    ts.assert_error(ValueError, match="3.9").assert_no_violations()

