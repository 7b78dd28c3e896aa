"""``TestScheduler``: a virtual-time scheduler for deterministic tests of timed operators.

Nothing runs until the test moves the clock: ``advance_by(dt)``, ``advance_to(t)`` or
``trigger_actions()`` (run what is due now). Tasks run in time order, and in FIFO order of
submission for equal times; tasks scheduled while advancing run in the same advance if they fall
due before its target time. All on the calling thread.

Example::

    ts = TestScheduler()
    seen = []
    ts.create_worker().schedule(lambda: seen.append(ts.now()), delay=5)
    ts.advance_by(4); assert seen == []
    ts.advance_by(1); assert seen == [5.0]
"""

from __future__ import annotations

import heapq
import itertools
import threading

from ..schedulers._base import DISPOSED, Scheduler, TaskHandle, Worker, _Disposed, run_task

__all__ = ["TestScheduler"]


class _TestWorker(Worker):
    __slots__ = ("_scheduler",)

    def __init__(self, scheduler: TestScheduler) -> None:
        super().__init__()
        self._scheduler = scheduler

    def schedule(self, task: object, delay: float = 0.0) -> TaskHandle | _Disposed:
        if self.is_disposed:
            return DISPOSED
        return self._scheduler._enqueue(task, max(0.0, delay), self)

    def now(self) -> float:
        return self._scheduler.now()


class TestScheduler(Scheduler):
    """Virtual time (seconds, starting at ``start``)."""

    __test__ = False  # not a pytest test class

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        self._queue: list[tuple[float, int, TaskHandle, Worker]] = []
        self._seq = itertools.count()
        self._lock = threading.Lock()  # guards the queue (tasks may be scheduled from any thread)

    def now(self) -> float:
        return self._now

    def create_worker(self) -> Worker:
        return _TestWorker(self)

    def _enqueue(self, task: object, delay: float, worker: Worker) -> TaskHandle:
        handle = TaskHandle(task)  # type: ignore[arg-type]
        with self._lock:
            heapq.heappush(self._queue, (self._now + delay, next(self._seq), handle, worker))
        return handle

    def advance_by(self, dt: float) -> None:
        """Move the clock forward by ``dt`` seconds, running every task that falls due."""
        if dt < 0:
            raise ValueError(f"advance_by(): cannot go back in time ({dt})")
        self.advance_to(self._now + dt)

    def advance_to(self, t: float) -> None:
        """Move the clock to ``t``, running every task due at or before ``t`` in time order."""
        if t < self._now:
            raise ValueError(f"advance_to(): {t} is before now ({self._now})")
        while True:
            with self._lock:
                if not self._queue or self._queue[0][0] > t:
                    break
                due, _, handle, worker = heapq.heappop(self._queue)
            self._now = max(self._now, due)
            task = handle.take()
            if task is not None and not worker.is_disposed:
                run_task(task, None)
        self._now = t

    def trigger_actions(self) -> None:
        """Run every task due now, without moving the clock."""
        self.advance_to(self._now)

    @property
    def pending(self) -> int:
        """How many tasks wait (disposed ones included until their time comes)."""
        with self._lock:
            return sum(1 for _, _, h, w in self._queue if not h.is_disposed and not w.is_disposed)
