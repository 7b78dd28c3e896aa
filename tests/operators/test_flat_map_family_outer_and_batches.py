"""flat_map, concat_map, switch_map and concat_map_eager: an outer that already terminated is never
cancelled (rule 2.4; those rule tests are in tests/spec/test_rules_flat_map_family_outer_and_batches.py),
an inner error still cancels a live outer, and a batching upstream (a fused
range hands over whole batches) signals exactly what a one-by-one upstream does. Every test subscribes
through TestSubscriber and ends with assert_no_violations()."""

from __future__ import annotations

from typing import Any

import pytest

from rstreams import Flowable
from rstreams.errors import NoneElementError
from rstreams.testing import TestPublisher, TestSubscriber

from .test_sync_operators_fused_and_hidden import trace as _trace


def test_flat_map_inner_error_still_cancels_a_live_outer() -> None:
    outer: TestPublisher[int] = TestPublisher.create()
    inner: TestPublisher[str] = TestPublisher.create()
    ts: TestSubscriber[str] = Flowable.from_publisher(outer).flat_map(lambda _: inner).test()
    outer.next(1)
    inner.error(KeyError("inner"))
    ts.assert_failure(KeyError).assert_no_violations()
    outer.assert_was_cancelled()


# -- flat_map over a batching upstream (the library-internal batch protocol) ------------------------
# A fused range hands flat_map whole batches; the signals must be those of a one-by-one upstream.


def _one_by_one(data: list[int]) -> Flowable[int]:
    """The same elements from a source that emits one per call (no batches)."""

    def gen(state: int, emitter: Any) -> int:
        if state < len(data):
            emitter.on_next(data[state])
        else:
            emitter.on_complete()
        return state + 1

    return Flowable.generate(lambda: 0, gen)


def _mapper(x: int) -> Any:
    if x % 5 == 0:
        return Flowable.empty()
    if x % 5 == 1:
        return Flowable.range(x * 10, 3)  # an inner that is not a scalar
    if x % 5 == 2:
        return Flowable.from_iterable([x, -x]).hide()
    return Flowable.just(x)


@pytest.mark.parametrize("max_concurrency", [1, 3, 128, None])
@pytest.mark.parametrize("pattern", [[1] * 80, [3, 7, 2, 50], [2**63 - 1]])
def test_flat_map_batched_upstream_signals_equal_the_one_by_one_path(max_concurrency: int | None, pattern: list[int]) -> None:
    data = list(range(40))
    batched = _trace(Flowable.range(0, 40).flat_map(_mapper, max_concurrency=max_concurrency), pattern)
    single = _trace(_one_by_one(data).flat_map(_mapper, max_concurrency=max_concurrency), pattern)
    assert batched == single
    assert batched[-1][1] == 1  # completes


def test_flat_map_batched_mapper_error_mid_batch_emits_the_prefix_then_the_error() -> None:
    calls: list[int] = []

    def mapper(x: int) -> Flowable[int]:
        calls.append(x)
        if x == 7:
            raise KeyError("seven")
        return Flowable.just(x)

    ts: TestSubscriber[int] = Flowable.range(0, 100).flat_map(mapper).test()
    ts.assert_failure(KeyError, *range(7)).assert_no_violations()
    assert calls == list(range(8))  # nothing mapped after the failing element


def test_flat_map_batched_mapper_none_mid_batch_is_a_type_error_after_the_prefix() -> None:
    ts: TestSubscriber[int] = Flowable.range(0, 50).flat_map(lambda x: None if x == 3 else Flowable.just(x)).test()  # type: ignore[arg-type,return-value]
    ts.assert_failure(TypeError, 0, 1, 2).assert_no_violations()
    assert "flat_map" in str(ts.errors[0])


def test_flat_map_batched_cancel_from_on_next_stops_at_once() -> None:
    ts: TestSubscriber[int] = TestSubscriber()
    seen: list[int] = []

    def on_next(x: int) -> None:
        seen.append(x)
        if x == 10:
            ts.cancel()

    f = Flowable.range(0, 1000).flat_map(lambda x: Flowable.just(x)).do_on_next(on_next)
    f.subscribe(ts)
    assert seen == list(range(11))
    ts.assert_values(*range(11)).assert_not_complete().assert_no_violations()


def test_concat_map_batched_upstream_with_a_large_prefetch_keeps_order_and_demand() -> None:
    pattern = [1, 2, 5, 100]
    batched = _trace(Flowable.range(0, 30).concat_map(_mapper, prefetch=16), pattern)
    single = _trace(_one_by_one(list(range(30))).concat_map(_mapper, prefetch=16), pattern)
    assert batched == single


def _inner_failing_at_2(x: int) -> Any:
    yield x
    yield x + 100
    if x == 2:
        raise KeyError("boom")


@pytest.mark.parametrize(
    "mapper, error",
    [(_inner_failing_at_2, KeyError), (lambda x: [x, None] if x == 2 else [x, x + 100], NoneElementError)],
)
def test_flat_map_iterable_hands_over_an_inners_prefix_before_its_failure_into_a_batch_consumer(
    mapper: Any, error: type[BaseException]
) -> None:
    """A batch-taking consumer (the lambda subscriber) gets what the inner gave before it raised
    (or yielded None), then the error: fused and hidden alike, as a one-by-one TestSubscriber."""
    runs = []
    for src in (Flowable.range(0, 5), Flowable.range(0, 5).hide()):
        got: list[Any] = []
        add = got.append
        src.flat_map_iterable(mapper).subscribe(on_next=add, on_error=lambda e, add=add: add(type(e)))
        ts = src.flat_map_iterable(mapper).test()
        ts.assert_error(error).assert_no_violations()
        assert got == [*ts.values, error]
        runs.append(got)
    assert runs[0] == runs[1]
    assert runs[0][:5] == [0, 100, 1, 101, 2]
