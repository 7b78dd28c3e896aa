"""Seeded, bounded multi-thread stress tests of the processors and multicast operators.

Several threads subscribe, request and cancel while one thread emits (or several, through
``to_serialized()``). Every subscriber is a TestSubscriber and must record no rule violation
(over-delivery, overlapping signals, signals after a terminal one). Where the semantics promise it
(Replay, Multicast, Unicast, serialized emitters), no element is lost or duplicated. Every thread is
joined within a time bound and the thread count is back to where it started.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from rstreams import Flowable
from rstreams.errors import MissingBackpressureError
from rstreams.flowable.operators._multicast import share
from rstreams.processors import (
    BehaviorProcessor,
    MulticastProcessor,
    PublishProcessor,
    ReplayProcessor,
    UnicastProcessor,
)
from rstreams.testing import TestSubscriber

pytestmark = pytest.mark.stress

SEEDS = range(2)
N = 2000
TIMEOUT = 10.0


@pytest.fixture(autouse=True)
def threads_joined() -> Iterator[None]:
    # the threads started during the test must end; threads of others that end meanwhile (a
    # Spark session's py4j threads in the same worker) do not matter
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 5
    while set(threading.enumerate()) - before and time.monotonic() < deadline:
        time.sleep(0.01)
    left = set(threading.enumerate()) - before
    assert not left, f"threads left running: {left}"


def run_all(fns: list[Callable[[], None]], timeout: float = TIMEOUT) -> None:
    errors: list[BaseException] = []
    start = threading.Barrier(len(fns))

    def wrap(fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                start.wait(timeout)
                fn()
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        return run

    threads = [threading.Thread(target=wrap(fn), daemon=True) for fn in fns]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a thread did not finish in time"
    if errors:
        raise errors[0]


def assert_consecutive(values: list[int]) -> None:
    """Live multicast: a subscriber sees a gap-free, duplicate-free run of the emitted integers."""
    if values:
        assert values == list(range(values[0], values[0] + len(values))), (
            "lost, duplicated or reordered items"
        )


def yield_sometimes(rng: random.Random) -> None:
    if rng.random() < 0.05:
        time.sleep(0)


@pytest.mark.parametrize("seed", SEEDS)
def test_stress_publish_subscribe_request_cancel_while_emitting(
    seed: int, undeliverable: list[BaseException]
) -> None:
    pp = PublishProcessor.create()
    subs: list[TestSubscriber[int]] = []
    lock = threading.Lock()

    def emitter() -> None:
        for i in range(N):
            pp.on_next(i)
        pp.on_complete()

    def client(k: int) -> Callable[[], None]:
        def run() -> None:
            rng = random.Random(seed * 100 + k)
            for _ in range(20):
                bounded = rng.random() < 0.5
                ts: TestSubscriber[int] = TestSubscriber(rng.randint(1, 50) if bounded else 2**63 - 1)
                with lock:
                    subs.append(ts)
                pp.subscribe(ts)
                for _ in range(rng.randint(1, 30)):
                    if bounded:
                        ts.request(rng.randint(1, 20))
                    yield_sometimes(rng)
                if rng.random() < 0.7:
                    ts.cancel()

        return run

    run_all([emitter] + [client(k) for k in range(4)])
    for ts in subs:
        ts.assert_no_violations()
        assert_consecutive(ts.values)
        for e in ts.errors:
            assert isinstance(e, MissingBackpressureError)
    assert not pp.has_subscribers
    assert not undeliverable


@pytest.mark.parametrize("seed", SEEDS)
def test_stress_behavior_subscribe_while_emitting(seed: int, undeliverable: list[BaseException]) -> None:
    bp = BehaviorProcessor.create(default=-1)
    subs: list[TestSubscriber[int]] = []
    lock = threading.Lock()

    def emitter() -> None:
        for i in range(N):
            bp.on_next(i)
        bp.on_complete()

    def client(k: int) -> Callable[[], None]:
        def run() -> None:
            rng = random.Random(seed * 100 + k)
            for _ in range(12):
                ts: TestSubscriber[int] = TestSubscriber(rng.choice([0, 2**63 - 1]))
                with lock:
                    subs.append(ts)
                bp.subscribe(ts)
                if ts.values == [] and not ts.is_terminated and rng.random() < 0.5:
                    ts.request(2**63 - 1)
                yield_sometimes(rng)
                if rng.random() < 0.8:
                    ts.cancel()

        return run

    run_all([emitter] + [client(k) for k in range(4)])
    for ts in subs:
        ts.assert_no_violations()
        assert_consecutive(ts.values)
        if ts.completions:
            assert not ts.values or ts.values[-1] == N - 1
    assert not undeliverable


@pytest.mark.parametrize("seed", SEEDS)
def test_stress_replay_every_subscriber_gets_everything_once(
    seed: int, undeliverable: list[BaseException]
) -> None:
    rp = ReplayProcessor.create()
    finals: list[TestSubscriber[int]] = []
    cancelled: list[TestSubscriber[int]] = []
    lock = threading.Lock()

    def emitter() -> None:
        rng = random.Random(seed)
        for i in range(N):
            rp.on_next(i)
            yield_sometimes(rng)
        rp.on_complete()

    def client(k: int) -> Callable[[], None]:
        def run() -> None:
            rng = random.Random(seed * 100 + k)
            for _ in range(3):
                ts: TestSubscriber[int] = TestSubscriber(0)
                rp.subscribe(ts)
                cancel_after = rng.randint(0, N) if rng.random() < 0.4 else None
                deadline = time.monotonic() + TIMEOUT / 2
                while not ts.is_terminated and time.monotonic() < deadline:
                    ts.request(rng.randint(1, 200))
                    if cancel_after is not None and len(ts.values) >= cancel_after:
                        ts.cancel()
                        break
                    yield_sometimes(rng)
                with lock:
                    (cancelled if ts.is_cancelled else finals).append(ts)

        return run

    run_all([emitter] + [client(k) for k in range(3)])
    for ts in finals:
        ts.await_done(5).assert_result(*range(N)).assert_no_violations()
    for ts in cancelled:
        ts.assert_no_violations()
        assert ts.values == list(range(len(ts.values)))
    assert not rp.has_subscribers
    assert not undeliverable


@pytest.mark.parametrize("seed", SEEDS)
def test_stress_multicast_lockstep_no_loss_no_duplicates(
    seed: int, undeliverable: list[BaseException]
) -> None:
    mp = MulticastProcessor.create(buffer_size=16)
    subs: list[TestSubscriber[int]] = []
    stayers: list[TestSubscriber[int]] = []
    lock = threading.Lock()
    ready = threading.Event()

    # two subscribers stay to the end: they must receive every item exactly once
    for _ in range(2):
        ts: TestSubscriber[int] = TestSubscriber(0)
        mp.subscribe(ts)
        stayers.append(ts)

    def emitter() -> None:
        ready.set()
        Flowable.range(0, N).subscribe(mp)

    def stayer(ts: TestSubscriber[int], k: int) -> Callable[[], None]:
        def run() -> None:
            rng = random.Random(seed * 10 + k)
            deadline = time.monotonic() + TIMEOUT / 2
            while not ts.is_terminated and time.monotonic() < deadline:
                ts.request(rng.randint(1, 40))
                yield_sometimes(rng)

        return run

    def churner(k: int) -> Callable[[], None]:
        def run() -> None:
            rng = random.Random(seed * 100 + k)
            ready.wait(5)
            for _ in range(30):
                ts: TestSubscriber[int] = TestSubscriber(rng.randint(0, 5))
                with lock:
                    subs.append(ts)
                mp.subscribe(ts)
                for _ in range(rng.randint(0, 5)):
                    ts.request(rng.randint(1, 10))
                    yield_sometimes(rng)
                ts.cancel()  # must not block the others for good

        return run

    run_all([emitter, stayer(stayers[0], 0), stayer(stayers[1], 1)] + [churner(k) for k in range(3)])
    for ts in stayers:
        ts.await_done(5).assert_result(*range(N)).assert_no_violations()
    for ts in subs:
        ts.assert_no_violations()
        assert_consecutive(ts.values)
    assert not undeliverable


@pytest.mark.parametrize("seed", SEEDS)
def test_stress_serialized_emitters_replay(seed: int, undeliverable: list[BaseException]) -> None:
    rp = ReplayProcessor.create()
    sp = rp.to_serialized()
    n_emitters, per = 4, 800
    early: TestSubscriber[tuple[int, int]] = sp.test()
    slow: TestSubscriber[tuple[int, int]] = sp.test(0)
    done = threading.Event()
    finished = [0]
    flock = threading.Lock()

    def emitter(k: int) -> Callable[[], None]:
        def run() -> None:
            rng = random.Random(seed * 10 + k)
            for i in range(per):
                sp.on_next((k, i))
                yield_sometimes(rng)
            with flock:
                finished[0] += 1
                if finished[0] == n_emitters:
                    sp.on_complete()
                    done.set()

        return run

    def requester() -> None:
        rng = random.Random(seed)
        deadline = time.monotonic() + TIMEOUT / 2
        while not slow.is_terminated and time.monotonic() < deadline:
            slow.request(rng.randint(1, 100))
            yield_sometimes(rng)

    run_all([emitter(k) for k in range(n_emitters)] + [requester])
    assert done.is_set()
    want = {(k, i) for k in range(n_emitters) for i in range(per)}
    for ts in (early, slow):
        ts.await_done(5).assert_complete().assert_no_violations()
        assert len(ts.values) == len(want) and set(ts.values) == want
        for k in range(n_emitters):
            assert [i for kk, i in ts.values if kk == k] == list(range(per))
    assert not undeliverable


@pytest.mark.parametrize("seed", SEEDS)
def test_stress_unicast_emitter_vs_requester(seed: int, undeliverable: list[BaseException]) -> None:
    up = UnicastProcessor.create()
    ts: TestSubscriber[int] = TestSubscriber(0)

    def emitter() -> None:
        rng = random.Random(seed)
        for i in range(N):
            up.on_next(i)
            yield_sometimes(rng)
        up.on_complete()

    def subscriber() -> None:
        rng = random.Random(seed + 1)
        up.subscribe(ts)
        deadline = time.monotonic() + TIMEOUT / 2
        while not ts.is_terminated and time.monotonic() < deadline:
            ts.request(rng.randint(1, 64))
            yield_sometimes(rng)

    run_all([emitter, subscriber])
    ts.await_done(5).assert_result(*range(N)).assert_no_violations()
    assert not undeliverable


@pytest.mark.parametrize("seed", SEEDS)
def test_stress_share_subscribe_cancel_while_hot_source_emits(
    seed: int, undeliverable: list[BaseException]
) -> None:
    pp = PublishProcessor.create()
    cancels: list[int] = []
    subscribes: list[int] = []
    overflows: list[BaseException] = []
    shared = share(
        pp.do_on_subscribe(lambda s: subscribes.append(1))
        .do_on_cancel(lambda: cancels.append(1))
        .do_on_error(overflows.append)
    )
    subs: list[TestSubscriber[int]] = []
    lock = threading.Lock()
    stop = threading.Event()

    def emitter() -> None:
        i = 0
        while not stop.is_set() and i < 50 * N:
            pp.on_next(i)
            i += 1

    def client(k: int) -> Callable[[], None]:
        def run() -> None:
            rng = random.Random(seed * 100 + k)
            for _ in range(40):
                ts: TestSubscriber[int] = TestSubscriber()
                with lock:
                    subs.append(ts)
                shared.subscribe(ts)
                yield_sometimes(rng)
                ts.cancel()

        return run

    clients = [client(k) for k in range(4)]
    remaining = [len(clients)]
    rlock = threading.Lock()

    def counted(fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                fn()
            finally:
                with rlock:
                    remaining[0] -= 1
                    if remaining[0] == 0:
                        stop.set()

        return run

    run_all([emitter] + [counted(c) for c in clients])
    for ts in subs:
        ts.assert_no_violations()
        assert_consecutive(ts.values)
    # every connection that was made was disconnected when its last subscriber left, or ended by
    # the hot source: a PublishProcessor signals MissingBackpressureError to share()'s connection
    # when its 128-element prefetch is full (legal; rare), which ends it without a cancel
    assert all(isinstance(e, MissingBackpressureError) for e in overflows), overflows
    for ts in subs:
        assert all(isinstance(e, MissingBackpressureError) for e in ts.errors), ts.errors
    assert len(subscribes) == len(cancels) + len(overflows) >= 1
    assert not pp.has_subscribers
    assert not undeliverable


@pytest.mark.parametrize("seed", SEEDS)
def test_stress_multicast_ref_count_last_cancel_cancels_upstream_once(
    seed: int, undeliverable: list[BaseException]
) -> None:
    cancels: list[int] = []
    mp = MulticastProcessor.create(buffer_size=8, ref_count=True)
    pp = PublishProcessor.create()
    pp.do_on_cancel(lambda: cancels.append(1)).subscribe(mp)
    keeper: TestSubscriber[int] = mp.test()  # keeps the processor alive while the others churn
    subs: list[TestSubscriber[int]] = []
    lock = threading.Lock()

    def emitter() -> None:
        for i in range(N):
            if not pp.offer(i):
                break

    def client(k: int) -> Callable[[], None]:
        def run() -> None:
            rng = random.Random(seed * 100 + k)
            for _ in range(30):
                ts: TestSubscriber[int] = TestSubscriber(rng.choice([1, 2**63 - 1]))
                with lock:
                    subs.append(ts)
                mp.subscribe(ts)
                yield_sometimes(rng)
                ts.cancel()

        return run

    run_all([emitter] + [client(k) for k in range(3)])
    assert cancels == []
    keeper.cancel()
    assert cancels == [1]
    mp.test().assert_result().assert_no_violations()
    keeper.assert_no_violations()
    assert_consecutive(keeper.values)
    for ts in subs:
        ts.assert_no_violations()
        assert_consecutive(ts.values)
    assert not undeliverable
