"""Queues for hand-offs between threads, on ``collections.deque``.

``deque.append``/``popleft``/``extend`` are each atomic (the GIL in classic CPython; a per-object
critical section in free-threaded builds), which is enough for single-producer/single-consumer use.
:class:`MpscQueue` adds a lock around batch offers so that one producer's batch stays contiguous
when several producers race (race: interleaved extend from two threads is not guaranteed atomic for
arbitrary iterables).

``None`` is never an element (rule 2.13), so ``poll()`` returns ``None`` for "empty".
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable
from itertools import islice
from typing import Generic, TypeVar

__all__ = ["SpscQueue", "MpscQueue"]

T = TypeVar("T")


class SpscQueue(Generic[T]):
    """A single-producer single-consumer queue, optionally bounded.

    Example::

        q = SpscQueue(capacity=128)
        q.offer(1); q.offer_many([2, 3])
        q.poll(), q.poll_many(10)     # (1, [2, 3])
    """

    __slots__ = ("_q", "capacity")

    def __init__(self, capacity: int | None = None) -> None:
        self._q: deque[T] = deque()
        self.capacity = capacity

    def offer(self, item: T) -> bool:
        """Append; False (and nothing appended) when a bounded queue is full."""
        cap = self.capacity
        if cap is not None and len(self._q) >= cap:
            return False
        self._q.append(item)
        return True

    def offer_many(self, items: Iterable[T]) -> int:
        """Append as many as fit; return how many were appended."""
        cap = self.capacity
        if cap is None:
            # count the batch itself: a len() delta is wrong while the consumer polls concurrently
            batch = items if isinstance(items, list | tuple) else list(items)
            self._q.extend(batch)
            return len(batch)
        room = cap - len(self._q)
        if room <= 0:
            return 0
        batch = list(islice(items, room))  # an iterator keeps what did not fit (never consumed)
        self._q.extend(batch)
        return len(batch)

    def poll(self) -> T | None:
        try:
            return self._q.popleft()
        except IndexError:
            return None

    def peek(self) -> T | None:
        q = self._q
        return q[0] if q else None

    def poll_many(self, max_items: int) -> list[T]:
        """Remove and return up to ``max_items`` items in order."""
        q = self._q
        n = min(max_items, len(q))
        pop = q.popleft
        return [pop() for _ in range(n)]

    def is_empty(self) -> bool:
        return not self._q

    def clear(self) -> None:
        self._q.clear()

    def __len__(self) -> int:
        return len(self._q)

    def __bool__(self) -> bool:
        return bool(self._q)


class MpscQueue(SpscQueue[T]):
    """A multi-producer single-consumer queue: offers are serialized by a lock, polls are not."""

    __slots__ = ("_lock",)

    def __init__(self, capacity: int | None = None) -> None:
        super().__init__(capacity)
        self._lock = threading.Lock()

    def offer(self, item: T) -> bool:
        with self._lock:  # race: capacity check + append by two producers
            return super().offer(item)

    def offer_many(self, items: Iterable[T]) -> int:
        with self._lock:  # race: keep one producer's batch contiguous
            return super().offer_many(items)
