"""Seeded, bounded races on the asyncio hand-off: producer threads vs a consumer going to sleep."""

from __future__ import annotations

import asyncio
import random
import threading

import pytest

from rstreams import Flowable, schedulers

from .util import own_threads, run


@pytest.mark.parametrize("seed", range(6))
def test_stress_threaded_producer_vs_sleeping_consumer(seed: int) -> None:
    rnd = random.Random(seed)
    n = 3000
    prefetch = rnd.choice([1, 2, 3, 8, 64])

    async def main() -> list[int]:
        out: list[int] = []
        src = Flowable.range(0, n).subscribe_on(schedulers.io())
        async for x in src.to_async_iterator(prefetch=prefetch):
            out.append(x)
            if rnd.random() < 0.01:
                await asyncio.sleep(0)
        return out

    before = own_threads()
    assert run(main(), timeout=5) == list(range(n))
    assert own_threads() <= before


@pytest.mark.parametrize("seed", range(4))
def test_stress_cancel_from_another_thread_while_consuming(seed: int) -> None:
    rnd = random.Random(seed)
    cancelled = threading.Event()

    async def main() -> int:
        src = Flowable.range(0, 10**9).subscribe_on(schedulers.io()).do_on_cancel(cancelled.set)
        it = src.to_async_iterator(prefetch=rnd.choice([1, 4, 16]))
        delay = 0.01 + rnd.random() * 0.02
        stopper = threading.Timer(delay, it.close)
        stopper.start()
        count = 0
        async for _ in it:
            count += 1
            if count % 50 == 0:
                await asyncio.sleep(0)
        stopper.join()
        return count

    assert run(main(), timeout=3) > 0
    assert cancelled.wait(1)


def test_uvloop_when_installed() -> None:
    uvloop = pytest.importorskip("uvloop")

    async def main() -> list[int]:
        a = [x async for x in Flowable.range(0, 100).subscribe_on(schedulers.io())]
        b = await Flowable.range(0, 10).map_async(lambda x: asyncio.sleep(0, x)).to_list()
        return a + b

    assert uvloop.run(main()) == list(range(100)) + list(range(10))
