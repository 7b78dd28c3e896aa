"""merge and zip over batching sources (signals equal to one-by-one sources, cancel from on_next stops
at once) and zip with an empty or failed source (the rest subscribed and cancelled as RxJava does)."""

from __future__ import annotations

import pytest

from rstreams import Flowable
from rstreams.testing import TestPublisher, TestSubscriber

from .test_flat_map_family_outer_and_batches import _one_by_one
from .test_sync_operators_fused_and_hidden import trace as _trace


def test_zip_with_a_leading_empty_source_still_subscribes_and_cancels_the_rest() -> None:
    # RxJava subscribes every source; the ones after the zip ended are cancelled at once.
    subscribed: list[str] = []
    other: TestPublisher[int] = TestPublisher.create()
    src = Flowable.from_publisher(other).do_on_subscribe(lambda _s: subscribed.append("other"))
    ts: TestSubscriber[tuple[int, int]] = Flowable.zip(Flowable.empty(), src).test()
    ts.assert_result().assert_no_violations()
    assert subscribed == ["other"]
    other.assert_was_cancelled()


def test_zip_does_not_subscribe_the_rest_after_a_downstream_cancel_or_an_error() -> None:
    subscribed: list[str] = []
    late = Flowable.just(1).do_on_subscribe(lambda _s: subscribed.append("late"))
    ts: TestSubscriber[tuple[int, int]] = Flowable.zip(Flowable.error(KeyError("first")), late).test()
    ts.assert_failure(KeyError).assert_no_violations()
    assert subscribed == []


# -- merge / zip over batching sources ---------------------------------------------------------------


@pytest.mark.parametrize("pattern", [[1] * 70, [5, 9, 100], [2**63 - 1]])
def test_merge_of_batching_sources_signals_equal_one_by_one_sources(pattern: list[int]) -> None:
    parts = [list(range(i * 20, i * 20 + 20)) for i in range(3)]
    batched = _trace(Flowable.merge(*(Flowable.from_iterable(p) for p in parts), prefetch=8), pattern)
    single = _trace(Flowable.merge(*(_one_by_one(p) for p in parts), prefetch=8), pattern)
    assert sorted(batched[-1][0]) == sorted(single[-1][0]) == list(range(60))
    assert [len(v) for v, _, _ in batched] == [len(v) for v, _, _ in single]  # never more than requested
    assert batched[-1][1] == single[-1][1] == 1


def test_merge_into_a_batch_consumer_sums_every_element_once() -> None:
    srcs = [Flowable.range(i * 1000, 1000) for i in range(8)]
    ts: TestSubscriber[int] = Flowable.merge(*srcs).reduce(lambda a, b: a + b).test()
    ts.assert_result(sum(range(8000))).assert_no_violations()


def test_merge_batched_cancel_from_on_next_stops_at_once() -> None:
    seen: list[int] = []
    ts: TestSubscriber[int] = TestSubscriber()

    def on_next(x: int) -> None:
        seen.append(x)
        if len(seen) == 5:
            ts.cancel()

    Flowable.merge(Flowable.range(0, 500), Flowable.range(500, 500)).do_on_next(on_next).subscribe(ts)
    assert len(seen) == 5
    ts.assert_value_count(5).assert_not_complete().assert_no_violations()


def test_zip_of_batching_sources_pairs_in_order() -> None:
    ts: TestSubscriber[tuple[int, int]] = Flowable.zip(Flowable.range(0, 300), Flowable.range(1000, 250).hide()).test(0)
    ts.request(1)
    ts.assert_values((0, 1000))
    ts.request(2**63 - 1)
    ts.assert_value_count(250).assert_complete().assert_no_violations()
    assert ts.values[-1] == (249, 1249)
