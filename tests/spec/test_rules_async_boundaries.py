"""Reactive Streams rule tests (``test_rule_*``) of observe_on, subscribe_on and flat_map: bad requests
(rule 3.9) and a mapper returning ``None`` (rule 2.13).

Their other tests (threads, scenarios, cancellation, properties) are in ``tests/operators/test_async_boundaries.py``."""

from __future__ import annotations

from rstreams import Flowable, schedulers


def test_rule_3_9_observe_on_bad_request() -> None:
    ts = Flowable.never().observe_on(schedulers.single()).test(0)
    ts.request(0)
    ts.await_done(5).assert_error(ValueError, match="3.9").assert_no_violations()


def test_rule_3_9_subscribe_on_bad_request() -> None:
    ts = Flowable.never().subscribe_on(schedulers.single()).test(0)
    ts.request(-1)
    ts.await_done(5).assert_error(ValueError, match="3.9").assert_no_violations()


def test_rule_3_9_subscribe_on_callable_bad_request() -> None:
    ts = Flowable.from_callable(lambda: 1).subscribe_on(schedulers.single()).test(0)
    ts.request(0)
    ts.await_done(5).assert_error(ValueError, match="3.9").assert_no_violations()


def test_rule_2_13_flat_map_mapper_returning_none() -> None:
    Flowable.range(0, 3).flat_map(lambda x: None).test().assert_error(
        TypeError, match="flat_map"
    ).assert_no_violations()  # type: ignore[arg-type,return-value]


def test_rule_3_9_flat_map_bad_request() -> None:
    ts = Flowable.range(0, 3).flat_map(lambda x: Flowable.just(x)).test(0)
    ts.request(0)
    ts.assert_error(ValueError, match="3.9").assert_no_values().assert_no_violations()
