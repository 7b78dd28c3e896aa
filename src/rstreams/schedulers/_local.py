"""Schedulers that run on the calling thread (immediate, trampoline) or on an Executor."""

from __future__ import annotations

import concurrent.futures
import contextvars
import heapq
import threading
import time
from collections import deque
from typing import Any, Final

from .._internal.atomics import AtomicInt, AtomicRef
from .._internal.drain import enter, leave
from .._internal.plugins import on_schedule
from ._base import (
    DISPOSED,
    DisposedHandle,
    Scheduler,
    Task,
    TaskHandle,
    Worker,
    run_task,
    run_task_nested,
    sleep_until,
)

__all__ = ["ImmediateScheduler", "TrampolineScheduler", "ExecutorScheduler"]


class _ImmediateWorker(Worker):
    __slots__ = ("_context",)

    def __init__(self) -> None:
        super().__init__()
        self._context = contextvars.copy_context()  # captured at creation: subscribe time

    def schedule(self, task: Task, delay: float = 0.0) -> TaskHandle | DisposedHandle:
        if self.is_disposed:
            return DISPOSED
        task = on_schedule(task)
        if delay > 0:
            sleep_until(time.monotonic() + delay)
        if not self.is_disposed:
            run_task_nested(task, self._context)
        return DISPOSED

    def schedule_periodic(self, task: Task, initial_delay: float, period: float) -> TaskHandle | DisposedHandle:
        """A loop on the calling thread until the worker or the task's own handle is disposed (from
        inside the task: interval().take(n) cancels). The inherited version re-schedules each run
        from inside the previous one, which on this worker is a nested call: the stack grew by a
        few frames per run, and interval(...).take(3000) died of RecursionError."""
        if period <= 0:
            raise ValueError(f"schedule_periodic(): period must be > 0, got {period}")
        if self.is_disposed:
            return DISPOSED
        task = on_schedule(task)
        handle = TaskHandle(task)
        due = time.monotonic() + max(0.0, initial_delay)
        while True:
            sleep_until(due)
            if handle.is_disposed or self.is_disposed:
                return handle
            run_task_nested(task, self._context)
            due += period
            now = time.monotonic()
            if due < now - period:  # fell behind: re-base instead of a burst of catch-up runs
                due = now + period


class ImmediateScheduler(Scheduler):
    """Runs every task at once on the calling thread (a delay blocks the caller)."""

    def create_worker(self) -> Worker:
        return _ImmediateWorker()


_trampoline = threading.local()


class _TrampolineWorker(Worker):
    """Queues tasks scheduled while one of them runs on this thread; the outermost call drains
    them in due-time order (FIFO for equal times, so immediate tasks in FIFO order, as RxJava's
    trampoline), so nested scheduling never grows the stack (rule 3.3 style). The queue is the
    thread's, shared by every trampoline worker used on it; each task runs in its worker's context.
    """

    __slots__ = ("_context",)

    def __init__(self) -> None:
        super().__init__()
        self._context = contextvars.copy_context()  # captured at creation: subscribe time

    def schedule(self, task: Task, delay: float = 0.0) -> TaskHandle | DisposedHandle:
        if self.is_disposed:
            return DISPOSED
        handle = TaskHandle(on_schedule(task))
        # thread-local queue and sequence number (FIFO among equal due times): only this thread
        # touches them, no lock needed
        tl = _trampoline
        seq = tl.seq = getattr(tl, "seq", 0) + 1
        queue: list[tuple[float, int, TaskHandle, _TrampolineWorker]] | None = getattr(tl, "queue", None)
        entry = (time.monotonic() + max(0.0, delay), seq, handle, self)
        if queue is not None:
            heapq.heappush(queue, entry)
            return handle
        queue = tl.queue = [entry]
        try:
            while queue:
                due, _, h, worker = heapq.heappop(queue)
                sleep_until(due)
                t = h.take()
                if t is not None and not worker.is_disposed:
                    run_task_nested(t, worker._context)
        finally:
            tl.queue = None
        return handle


class TrampolineScheduler(Scheduler):
    """Runs tasks on the calling thread, queueing re-entrant ones (RxJava ``trampoline()``)."""

    def create_worker(self) -> Worker:
        return _TrampolineWorker()


_NO_TIMERS: Final = object()  # _ExecutorWorker._timers after dispose


class _ExecutorWorker(Worker):
    """Serializes its tasks onto an Executor with a wip drain: one executor task per burst.

    Delayed tasks wait on one worker of the timer scheduler per executor worker (created on the
    first delayed task): its single loop releases them in due-time order, FIFO for equal times, so
    ``delay()`` on ``from_executor`` keeps the elements in order (a worker per delayed task, spread
    over the timer pool's threads, released equal delays out of order); disposing this worker
    disposes that one, which drops the pending delayed tasks at once.
    """

    __slots__ = ("_executor", "_queue", "_wip", "_context", "_timer", "_timers")

    def __init__(self, executor: concurrent.futures.Executor, timer: Scheduler) -> None:
        super().__init__()
        self._executor = executor
        self._queue: deque[TaskHandle] = deque()
        self._wip = AtomicInt(0)  # race: tasks scheduled from many threads, one drain at a time
        self._context = contextvars.copy_context()
        self._timer = timer
        # None, the timer worker, or _NO_TIMERS. race: two first delayed tasks vs dispose: one
        # compare-and-set installs the timer worker; a loser (or one after dispose) disposes its own
        self._timers: AtomicRef[Any] = AtomicRef(None)

    def _timer_worker(self) -> Worker | None:
        tw = self._timers.get()
        if tw is None:
            fresh = self._timer.create_worker()
            if self._timers.compare_and_set(None, fresh):
                return fresh
            fresh.dispose()
            tw = self._timers.get()
        return None if tw is _NO_TIMERS else tw

    def schedule(self, task: Task, delay: float = 0.0) -> TaskHandle | DisposedHandle:
        if self.is_disposed:
            return DISPOSED
        handle = TaskHandle(on_schedule(task))
        if delay > 0:
            tw = self._timer_worker()
            if tw is None:  # disposed meanwhile
                return DISPOSED
            if tw.schedule(lambda: self._enqueue(handle), delay) is DISPOSED:
                # the timer scheduler was shut down under us (schedulers.shutdown()): a fresh timer
                # worker restarts it; race: another thread may have replaced it first (CAS)
                self._timers.compare_and_set(tw, None)
                tw = self._timer_worker()
                if tw is None:
                    return DISPOSED
                tw.schedule(lambda: self._enqueue(handle), delay)
        else:
            self._enqueue(handle)
        return handle

    def _enqueue(self, handle: TaskHandle) -> None:
        if self.is_disposed:
            return
        self._queue.append(handle)
        if enter(self._wip):
            try:
                self._executor.submit(self._drain)
            except RuntimeError as e:  # executor shut down
                from .._internal import plugins

                plugins.on_error(e, "from_executor(): the executor refused a task")

    def _drain(self) -> None:
        missed = 1
        q = self._queue
        while True:
            while q:
                h = q.popleft()
                if self.is_disposed:
                    q.clear()
                    break
                t = h.take()
                if t is not None:
                    run_task(t, self._context)
            missed = leave(self._wip, missed)
            if missed == 0:
                return

    def dispose(self) -> None:
        super().dispose()
        self._queue.clear()
        tw = self._timers.get_and_set(_NO_TIMERS)
        if tw is not None and tw is not _NO_TIMERS:
            tw.dispose()


class ExecutorScheduler(Scheduler):
    """Wraps a ``concurrent.futures.Executor``; each worker's tasks stay ordered and serial."""

    def __init__(self, executor: concurrent.futures.Executor, timer: Scheduler) -> None:
        self._executor = executor
        self._timer = timer

    def create_worker(self) -> Worker:
        return _ExecutorWorker(self._executor, self._timer)
