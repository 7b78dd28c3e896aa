"""Reactive Streams rule tests (``test_rule_*``) of the bounded request path of a fused source into a
batch consumer and of the strict wrapper's batch delivery: re-entrant requests (rule 3.3), demand
summing past ``2**63 - 1`` (rule 3.17), ``None`` mid-batch (rule 2.13), bad requests (rule 3.9) and a
terminal from another thread never overlapping a batch (rule 1.3).

Their other tests (scenarios, cancellation, observe_on's drain) are in ``tests/flowable/test_boundary_request_path.py``."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from flowable.test_boundary_request_path import SOURCES, STRICT, BatchProbe, _drive, _Foreign, _gen
from operators.harness import Boom
from rstreams import MAX_DEMAND, Flowable
from rstreams._internal.subscriptions import EMPTY
from rstreams.testing import TestSubscriber


def test_rule_3_3_a_request_from_inside_a_batch_adds_demand_to_the_running_loop() -> None:
    depth = [0, 0]

    def more(ts: BatchProbe, items: list[Any]) -> None:
        depth[0] += 1
        depth[1] = max(depth[1], depth[0])
        ts.request(10)  # re-entrant: the loop running below this call serves it next
        depth[0] -= 1

    ts = BatchProbe(0, more)
    Flowable.range(0, 100).subscribe(ts)
    ts.request(10)
    ts.assert_result(*range(100)).assert_no_violations()
    assert depth[1] == 1 and ts.batches == [10] * 10


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_rule_3_17_demand_summing_past_the_maximum_is_unbounded(name: str) -> None:
    ts = BatchProbe(0)
    SOURCES[name](5000).subscribe(ts)
    ts.request(MAX_DEMAND - 1)
    ts.request(MAX_DEMAND - 1)  # capped, sticky
    ts.assert_result(*range(5000)).assert_no_violations()


def test_rule_3_17_demand_becoming_unbounded_inside_a_bounded_batch_loop() -> None:
    asked = [False]

    def unbounded(ts: BatchProbe, items: list[Any]) -> None:
        if not asked[0]:
            asked[0] = True
            ts.request(MAX_DEMAND - 5)  # 10 + this sums past 2**63 - 1: unbounded from now on

    ts = BatchProbe(0, unbounded)
    Flowable.from_iterable(_gen(3000)).subscribe(ts)
    ts.request(10)
    ts.assert_result(*range(3000)).assert_no_violations()
    assert ts.batches[0] == 10 and sum(ts.batches) == 3000


def test_rule_2_13_a_none_mid_batch_is_an_error_after_the_prefix() -> None:
    data: list[Any] = [1, 2, 3, None, 5]
    ts = _drive(Flowable.from_iterable(data), [2])
    ts.assert_values(1, 2, 3).assert_error(TypeError).assert_no_violations()


def test_rule_3_9_a_bad_request_between_batches_ends_the_stream() -> None:
    ts = BatchProbe(0)
    Flowable.range(0, 100).subscribe(ts)
    ts.request(10)
    ts.request(0)
    ts.assert_values(*range(10)).assert_error(ValueError).assert_no_violations()


@pytest.mark.parametrize("variant", sorted(STRICT))
def test_rule_2_13_strict_batch_delivery_stops_at_a_raising_on_next(
    variant: str, undeliverable: list[BaseException]
) -> None:
    s = _Foreign(raise_at=7)
    w = STRICT[variant](s)
    w.on_subscribe(EMPTY)
    w.on_next_batch(list(range(20)))
    w.on_next_batch(list(range(20, 40)))
    w.on_complete()
    assert s.values == list(range(7)) and s.completions == 0 and not s.errors
    assert len(undeliverable) == 1 and isinstance(undeliverable[0], Boom)


@pytest.mark.parametrize("variant", sorted(STRICT))
def test_rule_1_3_a_terminal_from_another_thread_never_overlaps_a_batch_and_is_never_lost(
    variant: str,
) -> None:
    for seed in range(30):
        ts: TestSubscriber[int] = TestSubscriber()
        w = STRICT[variant](ts)
        w.on_subscribe(EMPTY)
        barrier = threading.Barrier(2)

        def emit(w: Any = w, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            for i in range(0, 20_000, 100):
                w.on_next_batch(list(range(i, i + 100)))

        t = threading.Thread(target=emit)
        t.start()
        barrier.wait()
        if seed % 2:
            w.on_complete()
        else:
            w.on_error(Boom())
        t.join(5)
        assert len(ts.errors) + ts.completions == 1, f"seed {seed}: terminal lost or doubled"
        assert ts.values == list(range(len(ts.values))), f"seed {seed}: a gap or a reordering"
        ts.assert_no_violations()


def test_rule_3_9_observe_on_a_bad_request_while_idle_with_elements_queued_ends_the_stream() -> None:
    from rstreams.testing import TestScheduler

    sch = TestScheduler()
    ts = BatchProbe(0)
    Flowable.range(0, 300).observe_on(sch, prefetch=16).subscribe(ts)
    ts.request(3)
    sch.trigger_actions()
    assert ts.values == [0, 1, 2]
    ts.request(-1)
    sch.trigger_actions()
    ts.assert_values(0, 1, 2).assert_error(ValueError).assert_no_violations()
