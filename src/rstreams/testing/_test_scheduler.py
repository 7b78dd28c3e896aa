"""``TestScheduler``: a virtual-time scheduler for deterministic tests of timed operators.

Nothing runs until the test moves the clock: ``advance_by(dt)``, ``advance_to(t)`` or
``trigger_actions()`` (run what is due now). Tasks run in time order, and in FIFO order of
submission for equal times; tasks scheduled while advancing run in the same advance if they fall
due before its target time. All on the calling thread, each task inside the ``contextvars``
context captured when its worker was created (the Worker contract).

Example::

    ts = TestScheduler()
    seen = []
    ts.create_worker().schedule(lambda: seen.append(ts.now()), delay=5)
    ts.advance_by(4); assert seen == []
    ts.advance_by(1); assert seen == [5.0]
"""

from __future__ import annotations

import contextvars
import heapq
import itertools
import math
import threading

from .._internal.plugins import on_schedule
from ..schedulers import DISPOSED, Scheduler, TaskHandle, Worker, run_task_nested
from ..schedulers import DisposedHandle as _Disposed

__all__ = ["TestScheduler"]

_NS = 1_000_000_000  # the clock counts integer nanoseconds (as RxJava's TestScheduler)


def _to_ns(seconds: float) -> float:
    """Seconds -> integer nanoseconds (``math.inf`` stays: a task that never falls due)."""
    return round(seconds * _NS) if math.isfinite(seconds) else math.inf


class _TestWorker(Worker):
    __slots__ = ("_scheduler", "_context")

    def __init__(self, scheduler: TestScheduler) -> None:
        super().__init__()
        self._scheduler = scheduler
        self._context = contextvars.copy_context()  # captured at creation: subscribe time

    def schedule(self, task: object, delay: float = 0.0) -> TaskHandle | _Disposed:
        if self.is_disposed:
            return DISPOSED
        return self._scheduler._enqueue(on_schedule(task), max(0.0, delay), self)

    def now(self) -> float:
        return self._scheduler.now()

    def dispose(self) -> None:
        if self._disposed.try_set():  # once
            self._scheduler._purge(self)  # its pending tasks go at once (rule 3.13: no reference kept)


class TestScheduler(Scheduler):
    """Virtual time (seconds, starting at ``start``).

    The clock counts integer nanoseconds, so times add up exactly: ``interval(0.1)`` ticks at
    0.1, 0.2 and 0.3 s and ``advance_by(0.3)`` runs all three (float sums would put the third tick
    at 0.30000000000000004, after the target). ``now()`` returns seconds as a float.

    Example::

        ts = TestScheduler()
        sub = Flowable.interval(0.1, scheduler=ts).take(3).test()
        ts.advance_by(0.3); sub.assert_result(0, 1, 2)
        ts.now()                                   # 0.3
    """

    __test__ = False  # not a pytest test class

    def __init__(self, start: float = 0.0) -> None:
        self._now_ns: float = _to_ns(float(start))
        self._queue: list[tuple[float, int, TaskHandle, _TestWorker]] = []
        self._seq = itertools.count()
        self._lock = threading.Lock()  # guards the queue and the sequence (tasks may be scheduled from any thread)

    def now(self) -> float:
        return self._now_ns / _NS

    def create_worker(self) -> Worker:
        return _TestWorker(self)

    def _enqueue(self, task: object, delay: float, worker: _TestWorker) -> TaskHandle:
        handle = TaskHandle(task)  # type: ignore[arg-type]
        with self._lock:
            # FIFO among equal due times: the sequence number breaks ties
            heapq.heappush(self._queue, (self._now_ns + _to_ns(delay), next(self._seq), handle, worker))
        return handle

    def _purge(self, worker: _TestWorker) -> None:
        with self._lock:
            q = self._queue
            kept = [e for e in q if e[3] is not worker]
            if len(kept) != len(q):
                heapq.heapify(kept)
                self._queue = kept

    def advance_by(self, dt: float) -> None:
        """Move the clock forward by ``dt`` seconds, running every task that falls due."""
        if dt < 0:
            raise ValueError(f"advance_by(): cannot go back in time ({dt})")
        self._advance_to_ns(self._now_ns + _to_ns(dt))

    def advance_to(self, t: float) -> None:
        """Move the clock to ``t``, running every task due at or before ``t`` in time order."""
        target = _to_ns(t)
        if target < self._now_ns:
            raise ValueError(f"advance_to(): {t} is before now ({self.now()})")
        self._advance_to_ns(target)

    def _advance_to_ns(self, target: float) -> None:
        while True:
            with self._lock:
                if not self._queue or self._queue[0][0] > target:
                    break
                due, _, handle, worker = heapq.heappop(self._queue)
            self._now_ns = max(self._now_ns, due)
            task = handle.take()
            if task is not None and not worker.is_disposed:
                run_task_nested(task, worker._context)
        self._now_ns = max(self._now_ns, target)

    def trigger_actions(self) -> None:
        """Run every task due now, without moving the clock."""
        self._advance_to_ns(self._now_ns)

    @property
    def pending(self) -> int:
        """How many tasks wait to run (disposed tasks and the tasks of disposed workers are not counted)."""
        with self._lock:
            return sum(1 for _, _, h, w in self._queue if not h.is_disposed and not w.is_disposed)
