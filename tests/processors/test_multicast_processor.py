"""MulticastProcessor (lockstep, bounded prefetch, ref_count) and to_serialized()."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rstreams import Flowable
from rstreams.errors import MissingBackpressureError
from rstreams.processors import (
    FlowableProcessor,
    MulticastProcessor,
    PublishProcessor,
    ReplayProcessor,
    SerializedProcessor,
    UnicastProcessor,
)
from rstreams.testing import TestSubscriber


class Boom(Exception):
    pass


def test_multicast_lockstep_slow_subscriber_paces_the_fast_one() -> None:
    mp = MulticastProcessor.create(buffer_size=4)
    mp.start()
    fast = mp.test(10)
    slow = mp.test(1)
    assert mp.offer(1) and mp.offer(2) and mp.offer(3)
    fast.assert_values(1)
    slow.assert_values(1)
    slow.request(1)
    fast.assert_values(1, 2)  # the fast one does not get ahead
    slow.request(5)
    fast.assert_values(1, 2, 3)
    slow.assert_values(1, 2, 3)
    mp.on_complete()
    fast.assert_result(1, 2, 3).assert_no_violations()
    slow.assert_result(1, 2, 3).assert_no_violations()


def test_multicast_offer_false_when_buffer_full() -> None:
    mp = MulticastProcessor.create(buffer_size=2)
    mp.start()
    ts = mp.test(0)
    assert mp.offer(1) and mp.offer(2)
    assert mp.offer(3) is False
    ts.request(1).assert_values(1)
    assert mp.offer(3) is True
    mp.on_complete()
    assert mp.offer(4) is False
    ts.request(10).assert_result(1, 2, 3).assert_no_violations()


def test_multicast_start_unbounded_accepts_everything() -> None:
    mp = MulticastProcessor.create(buffer_size=2)
    mp.start_unbounded()
    for i in range(100):
        assert mp.offer(i)
    mp.on_complete()
    mp.test().assert_result(*range(100)).assert_no_violations()


def test_multicast_items_wait_for_subscribers() -> None:
    mp = MulticastProcessor.create()
    mp.start()
    mp.offer(1)
    mp.offer(2)
    ts = mp.test()
    ts.assert_values(1, 2)
    late = mp.test()
    mp.offer(3)
    mp.on_complete()
    ts.assert_result(1, 2, 3).assert_no_violations()
    late.assert_result(3).assert_no_violations()
    mp.test().assert_result().assert_no_violations()  # after termination: just the terminal signal


def test_multicast_stable_prefetch_replenishes_at_75_percent() -> None:
    requests: list[int] = []
    mp = MulticastProcessor.create(buffer_size=8)
    Flowable.range(0, 100).do_on_request(requests.append).subscribe(mp)
    assert requests == [8]
    ts = mp.test(0)
    ts.request(5)
    assert requests == [8]
    ts.request(1)  # 6 emitted = limit (8 - 8 // 4)
    assert requests == [8, 6]
    ts.request(1000)
    ts.assert_result(*range(100)).assert_no_violations()
    assert all(r == 6 for r in requests[1:])


def test_multicast_upstream_overflow_is_missing_backpressure() -> None:
    mp = MulticastProcessor.create(buffer_size=2)
    ts = mp.test(0)
    cancelled: list[bool] = []
    requested: list[int] = []

    class Rogue:  # an upstream that ignores its request(2)
        def request(self, n: int) -> None:
            requested.append(n)

        def cancel(self) -> None:
            cancelled.append(True)

    mp.on_subscribe(Rogue())
    assert requested == [2]
    mp.on_next(1)
    mp.on_next(2)
    mp.on_next(3)
    ts.assert_no_values().assert_error(MissingBackpressureError).assert_no_violations()
    assert cancelled == [True]


def test_multicast_error_is_not_buffered() -> None:
    mp = MulticastProcessor.create()
    mp.start()
    ts = mp.test(1)
    mp.offer(1)
    mp.offer(2)
    mp.on_error(Boom())
    ts.assert_values(1).assert_error(Boom).assert_no_violations()
    assert mp.has_throwable
    mp.test().assert_error(Boom)


def test_multicast_ref_count_cancels_upstream_when_last_leaves() -> None:
    cancelled: list[bool] = []
    mp = MulticastProcessor.create(ref_count=True)
    Flowable.never().do_on_cancel(lambda: cancelled.append(True)).subscribe(mp)
    a = mp.test()
    b = mp.test()
    a.cancel()
    assert cancelled == []
    b.cancel()
    assert cancelled == [True]
    mp.test().assert_result().assert_no_violations()
    assert mp.has_complete


def test_multicast_without_ref_count_keeps_upstream() -> None:
    cancelled: list[bool] = []
    mp = MulticastProcessor.create()
    Flowable.never().do_on_cancel(lambda: cancelled.append(True)).subscribe(mp)
    mp.test().cancel()
    assert cancelled == []
    assert not mp.has_subscribers


def test_multicast_bad_arguments() -> None:
    with pytest.raises(ValueError):
        MulticastProcessor.create(0)
    with pytest.raises(TypeError):
        MulticastProcessor.create("8")  # type: ignore[arg-type]


def test_multicast_as_identity_processor() -> None:
    mp = MulticastProcessor.create(buffer_size=16)
    out = mp.map(lambda x: x + 1).test()
    Flowable.range(0, 1000).subscribe(mp)
    out.assert_result(*range(1, 1001)).assert_no_violations()


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(), max_size=60),
    st.lists(st.lists(st.integers(1, 7), min_size=1, max_size=5), min_size=1, max_size=3),
    st.integers(1, 16),
)
def test_multicast_property_all_subscribers_get_the_same_sequence(
    data: list[int], patterns: list[list[int]], buffer_size: int
) -> None:
    mp = MulticastProcessor.create(buffer_size=buffer_size)
    subs: list[TestSubscriber[int]] = [mp.test(0) for _ in patterns]
    Flowable.from_iterable(data).subscribe(mp)
    for rnd in range(10_000):
        if all(ts.is_terminated for ts in subs):
            break
        for ts, pat in zip(subs, patterns, strict=True):
            ts.request(pat[rnd % len(pat)])
            # lockstep: nobody is ahead of the slowest by more than the emission of one batch
            assert ts.values == data[: len(ts.values)]
    for ts in subs:
        ts.assert_result(*data).assert_no_violations()


# ---------------------------------------------------------------------------------- to_serialized


def _processors() -> list[Any]:
    return [
        PublishProcessor.create(),
        ReplayProcessor.create(),
        UnicastProcessor.create(),
        MulticastProcessor.create(),
    ]


@pytest.mark.parametrize("idx", range(4))
def test_to_serialized_forwards_signals(idx: int) -> None:
    p = _processors()[idx]
    if isinstance(p, MulticastProcessor):
        p.start_unbounded()
    sp = p.to_serialized()
    assert isinstance(sp, SerializedProcessor) and isinstance(sp, FlowableProcessor)
    assert sp.to_serialized() is sp
    ts = sp.test()
    assert sp.has_subscribers and sp.subscriber_count == 1
    for i in range(5):
        sp.on_next(i)
    sp.on_complete()
    sp.on_next(99)
    ts.assert_result(*range(5)).assert_no_violations()
    assert sp.has_complete and sp.throwable is None


def test_to_serialized_concurrent_emitters_keep_every_item_once() -> None:
    rp = ReplayProcessor.create()
    sp = rp.to_serialized()
    ts = sp.test()
    n_threads, per = 4, 500
    barrier = threading.Barrier(n_threads)

    def emit(k: int) -> None:
        barrier.wait()
        for i in range(per):
            sp.on_next((k, i))

    threads = [threading.Thread(target=emit, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    sp.on_complete()
    ts.await_done(5).assert_complete().assert_no_violations()
    assert sorted(ts.values) == sorted((k, i) for k in range(n_threads) for i in range(per))
    for k in range(n_threads):  # each emitter's own order is kept
        assert [i for kk, i in ts.values if kk == k] == list(range(per))


def test_to_serialized_error_and_none(undeliverable: list[BaseException]) -> None:
    sp = PublishProcessor.create().to_serialized()
    ts = sp.test()
    with pytest.raises(TypeError):
        sp.on_next(None)  # type: ignore[arg-type]
    sp.on_error(Boom())
    sp.on_error(Boom())
    ts.assert_error(Boom).assert_no_violations()
    assert sp.has_throwable
    assert len(undeliverable) == 1


def test_to_serialized_on_subscribe_forwards() -> None:
    up = UnicastProcessor.create()
    sp = up.to_serialized()
    Flowable.range(0, 3).subscribe(sp)
    up.test().assert_result(0, 1, 2).assert_no_violations()


# ---------------------------------------------------------------------------------- rule 3.13


def _make(kind: str) -> Any:
    from rstreams.processors import AsyncProcessor, BehaviorProcessor

    if kind == "multicast":
        mp = MulticastProcessor.create()
        mp.start()
        return mp
    return {
        "publish": PublishProcessor.create,
        "behavior": lambda: BehaviorProcessor.create(default=1),
        "replay": ReplayProcessor.create,
        "unicast": UnicastProcessor.create,
        "async": AsyncProcessor.create,
    }[kind]()
