"""Schedulers that run on the calling thread (immediate, trampoline) or on an Executor."""

from __future__ import annotations

import concurrent.futures
import contextvars
import threading
import time
from collections import deque

from .._internal.atomics import AtomicInt
from ._base import DISPOSED, Scheduler, Task, TaskHandle, Worker, _Disposed, run_task

__all__ = ["ImmediateScheduler", "TrampolineScheduler", "ExecutorScheduler"]


class _ImmediateWorker(Worker):
    __slots__ = ()

    def schedule(self, task: Task, delay: float = 0.0) -> TaskHandle | _Disposed:
        if self.is_disposed:
            return DISPOSED
        if delay > 0:
            time.sleep(delay)
        if not self.is_disposed:
            run_task(task, None)
        return DISPOSED


class ImmediateScheduler(Scheduler):
    """Runs every task at once on the calling thread (a delay blocks the caller)."""

    def create_worker(self) -> Worker:
        return _ImmediateWorker()


_trampoline = threading.local()


class _TrampolineWorker(Worker):
    """Queues tasks scheduled while one of them runs on this thread; the outermost call drains
    them in FIFO order, so nested scheduling never grows the stack (rule 3.3 style)."""

    __slots__ = ()

    def schedule(self, task: Task, delay: float = 0.0) -> TaskHandle | _Disposed:
        if self.is_disposed:
            return DISPOSED
        handle = TaskHandle(task)
        queue: deque[tuple[TaskHandle, float, Worker]] | None = getattr(_trampoline, "queue", None)
        if queue is not None:
            queue.append((handle, time.monotonic() + delay, self))
            return handle
        queue = _trampoline.queue = deque()
        queue.append((handle, time.monotonic() + delay, self))
        try:
            while queue:
                h, due, worker = queue.popleft()
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                t = h.take()
                if t is not None and not worker.is_disposed:
                    run_task(t, None)
        finally:
            _trampoline.queue = None
        return handle


class TrampolineScheduler(Scheduler):
    """Runs tasks on the calling thread, queueing re-entrant ones (RxJava ``trampoline()``)."""

    def create_worker(self) -> Worker:
        return _TrampolineWorker()


class _ExecutorWorker(Worker):
    """Serializes its tasks onto an Executor with a wip drain: one executor task per burst."""

    __slots__ = ("_executor", "_queue", "_wip", "_context", "_timer")

    def __init__(self, executor: concurrent.futures.Executor, timer: Scheduler) -> None:
        super().__init__()
        self._executor = executor
        self._queue: deque[TaskHandle] = deque()
        self._wip = AtomicInt(0)  # race: tasks scheduled from many threads, one drain at a time
        self._context = contextvars.copy_context()
        self._timer = timer

    def schedule(self, task: Task, delay: float = 0.0) -> TaskHandle | _Disposed:
        if self.is_disposed:
            return DISPOSED
        handle = TaskHandle(task)
        if delay > 0:
            self._timer.schedule_direct(lambda: self._enqueue(handle), delay)
        else:
            self._enqueue(handle)
        return handle

    def _enqueue(self, handle: TaskHandle) -> None:
        if self.is_disposed:
            return
        self._queue.append(handle)
        if self._wip.get_and_increment() == 0:
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
            missed = self._wip.add_and_get(-missed)
            if missed == 0:
                return

    def dispose(self) -> None:
        super().dispose()
        self._queue.clear()


class ExecutorScheduler(Scheduler):
    """Wraps a ``concurrent.futures.Executor``; each worker's tasks stay ordered and serial."""

    def __init__(self, executor: concurrent.futures.Executor, timer: Scheduler) -> None:
        self._executor = executor
        self._timer = timer

    def create_worker(self) -> Worker:
        return _ExecutorWorker(self._executor, self._timer)
