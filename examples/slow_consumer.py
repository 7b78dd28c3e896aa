"""A slow consumer behind a thread boundary: the fast producer is held back by demand, not by memory.

A producer thread generates readings as fast as it can; the consumer takes 1 ms per reading on
another thread. ``observe_on(..., prefetch=16)`` is the bridge: it asks the producer for at most
16 readings at a time and asks again only as the consumer takes them, so the producer is never
more than 16 readings ahead, however slow the consumer. ``do_on_request`` shows the demand the producer saw.

The consumer runs on the ``single()`` worker itself (``subscribe`` with callbacks). A
``blocking_subscribe`` after ``observe_on`` would add a second hand-over, to the calling thread,
with its own bounded queue (128): the producer could then run up to 16 + 128 readings ahead.

    python examples/slow_consumer.py
"""

from __future__ import annotations

import threading
import time

from rstreams import Flowable, schedulers

N = 200
PREFETCH = 16


def main() -> None:
    produced = 0
    consumed = 0
    max_ahead = 0
    requests: list[int] = []
    lock = threading.Lock()

    def produce(i: int) -> int:
        nonlocal produced, max_ahead
        with lock:
            produced += 1
            max_ahead = max(max_ahead, produced - consumed)
        return i

    def consume(_reading: int) -> None:
        nonlocal consumed
        time.sleep(0.001)  # the slow part
        with lock:
            consumed += 1

    done = threading.Event()
    t0 = time.perf_counter()
    (
        Flowable.range(0, N)
        .do_on_request(requests.append)                      # what the producer was asked for
        .map(produce)
        .subscribe_on(schedulers.io())                       # produced on an io() thread
        .observe_on(schedulers.single(), prefetch=PREFETCH)  # the bounded bridge
        .do_finally(done.set)
        .subscribe(consume)                                  # consumed on the single() worker, slowly
    )
    done.wait(30)
    elapsed = time.perf_counter() - t0
    print(f"consumed {consumed} of {N} readings in {elapsed:.2f} s")
    print(f"first requests seen by the producer: {requests[:4]} ({len(requests)} requests in all)")
    print(f"the producer was at most {max_ahead} readings ahead of the consumer (prefetch {PREFETCH})")
    assert consumed == N and max_ahead <= PREFETCH + 1


if __name__ == "__main__":
    main()
