"""blocking_iterable: ``next(it)`` inside ``for x in it`` (the "pairs" idiom) takes the following
elements of the same run, in order, and the replenish the loop's run owes still goes out (the wait
for the next element used to never end), never more than ``prefetch`` outstanding (rule 1.1)."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest

from rstreams import Flowable
from rstreams.schedulers import new_thread

N = 1_000


class _Demand:
    """Outstanding demand at the bridge: requested minus delivered (the most seen)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # requests on the consumer thread vs on_next on the producer's
        self.outstanding = 0
        self.most = 0

    def on_request(self, n: int) -> None:
        with self._lock:
            self.outstanding += n
            self.most = max(self.most, self.outstanding)

    def on_next(self, _: Any) -> None:
        with self._lock:
            self.outstanding -= 1


def _source(kind: str, demand: _Demand) -> Flowable[int]:
    src: Flowable[int] = Flowable.range(0, N)
    src = src.subscribe_on(new_thread()) if kind == "thread" else src.hide()
    return src.do_on_request(demand.on_request).do_on_next(demand.on_next)


@pytest.mark.parametrize("kind", ["thread", "sync"])
@pytest.mark.parametrize("prefetch", [1, 2, 3, 4, 7, 128])
def test_next_inside_the_loop_takes_the_following_elements_in_order(kind: str, prefetch: int) -> None:
    demand = _Demand()
    it = _source(kind, demand).blocking_iterable(prefetch=prefetch, timeout=5)  # a hang: TimeoutError
    pairs = []
    for a in it:
        pairs.append((a, next(it)))
    assert pairs == [(i, i + 1) for i in range(0, N, 2)]
    assert demand.most <= prefetch  # rule 1.1: the bridge never asks for more than it can hold


@pytest.mark.parametrize("kind", ["thread", "sync"])
@pytest.mark.parametrize("prefetch", [1, 4, 16])
def test_next_and_the_loop_interleaved_at_random_lose_and_repeat_nothing(kind: str, prefetch: int) -> None:
    demand = _Demand()
    rnd = random.Random(prefetch)
    got: list[int] = []
    it = _source(kind, demand).blocking_iterable(prefetch=prefetch, timeout=5)
    for a in it:
        got.append(a)
        for _ in range(rnd.randrange(0, 4)):
            x = next(it, None)
            if x is None:
                break
            got.append(x)
    assert got == list(range(N))
    assert demand.most <= prefetch
