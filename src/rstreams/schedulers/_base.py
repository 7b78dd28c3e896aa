"""The Scheduler/Worker contract (RxJava's ``Scheduler`` and ``Scheduler.Worker``).

* A :class:`Worker` runs its tasks one at a time, never concurrently, and immediate tasks in FIFO
  order; delayed tasks in due-time order (FIFO for equal times); ``dispose()`` cancels its pending
  tasks (and no one else's).
* After ``dispose``, ``schedule`` returns an already-disposed handle and runs nothing. A task's
  handle is disposed once the task ran; a periodic handle's ``dispose`` also drops the pending run.
* A delay is any float: ``<= 0`` or NaN means "as soon as possible", ``math.inf`` means never (no
  sleep or wait is ever asked for more than the platform accepts).
* A task that raises does not kill anything: the error goes to the undeliverable-error hook.
* ``contextvars`` captured when the worker is created (that is, at subscribe time for the
  operators that use one) are restored around every task it runs.
* Times are in seconds (floats); ``now()`` is ``time.monotonic()`` for real schedulers and the
  virtual clock for :class:`~rstreams.testing.TestScheduler`.
"""

from __future__ import annotations

import contextvars
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Final, final

from .._internal import plugins
from .._internal.atomics import AtomicFlag, AtomicRef

__all__ = ["Scheduler", "Worker", "TaskHandle", "DISPOSED", "run_task", "run_task_nested", "sleep_until"]

Task = Callable[[], Any]


class TaskHandle:
    """A disposable handle on a scheduled task.

    Example::

        h = schedulers.single().create_worker().schedule(lambda: print("never"), delay=60)
        h.dispose()
        h.is_disposed        # True: the task will not run
    """

    __slots__ = ("_task", "_disposed")

    def __init__(self, task: Task | None) -> None:
        self._task = task
        self._disposed = False

    def dispose(self) -> None:
        self._disposed = True
        self._task = None  # drop references early

    @property
    def is_disposed(self) -> bool:
        return self._disposed

    def take(self) -> Task | None:
        """The task if it may still run, and marks the handle done: a task that ran is disposed
        (``is_disposed`` is True, as RxJava's), and its reference is dropped."""
        if self._disposed:
            return None
        t = self._task
        self._disposed = True
        self._task = None
        return t


_GONE: Final[Any] = object()


@final
class _PeriodicHandle(TaskHandle):
    """The handle of a periodic task: disposing it disposes the pending run too, so the worker
    (and ``TestScheduler.pending``) forgets it at once (rule 3.13: no reference kept)."""

    __slots__ = ("_current",)

    def __init__(self, task: Task) -> None:
        super().__init__(task)
        # the pending run's handle, or _GONE once disposed. race: dispose (any thread) vs the
        # run scheduling its successor (the worker's thread): one of them disposes the successor
        self._current: AtomicRef[Any] = AtomicRef(None)

    def take(self) -> Task | None:
        # a periodic task runs many times: done only when disposed
        return None if self._disposed else self._task

    def track(self, run: Any) -> None:
        cur = self._current
        prev = cur.get()
        if prev is _GONE or not cur.compare_and_set(prev, run):
            run.dispose()

    def dispose(self) -> None:
        super().dispose()
        run = self._current.get_and_set(_GONE)
        if run is not None and run is not _GONE:
            run.dispose()


@final
class DisposedHandle:
    """The type of :data:`DISPOSED`: a handle that is already disposed (``dispose()`` does nothing)."""

    __slots__ = ()

    def dispose(self) -> None:
        pass

    @property
    def is_disposed(self) -> bool:
        return True


#: What ``schedule`` returns after its worker or scheduler was disposed.
DISPOSED: Final = DisposedHandle()


def run_task(task: Task, context: contextvars.Context | None) -> None:
    """Run ``task`` (inside ``context`` when given); errors go to the undeliverable hook."""
    try:
        if context is not None:
            context.run(task)
        else:
            task()
    except Exception as e:
        plugins.on_error(e, f"a scheduled task raised: {task!r}")


def run_task_nested(task: Task, context: contextvars.Context) -> None:
    """:func:`run_task` inside ``context`` for workers whose tasks run on the caller's thread and
    may nest (immediate, trampoline, virtual time): a Context cannot be entered twice, so a task
    scheduled from inside a task of the same worker runs in the context already entered."""
    entered = False

    def enter() -> None:
        nonlocal entered
        entered = True
        task()

    try:
        context.run(enter)
    except RuntimeError as e:
        if entered:
            plugins.on_error(e, f"a scheduled task raised: {task!r}")
        else:  # "already entered": we are inside one of this worker's tasks (or its other thread)
            run_task(task, None)
    except Exception as e:
        plugins.on_error(e, f"a scheduled task raised: {task!r}")


def sleep_until(due: float) -> None:
    """Sleep until ``time.monotonic()`` reaches ``due`` (``math.inf``: forever), in slices that
    ``time.sleep`` accepts (it rejects a delay beyond the platform's ``time_t`` with OverflowError)."""
    while True:
        wait = due - time.monotonic()
        if wait <= 0:
            return
        time.sleep(min(wait, 3600.0))


class Worker(ABC):
    """Runs tasks sequentially. Thread-safe: any thread may schedule or dispose.

    Example::

        w = schedulers.single().create_worker()
        w.schedule(lambda: print("soon"))
        w.schedule(lambda: print("later"), delay=0.5)
        w.dispose()
    """

    __slots__ = ("_disposed",)

    def __init__(self) -> None:
        self._disposed = AtomicFlag()

    @abstractmethod
    def schedule(self, task: Task, delay: float = 0.0) -> TaskHandle | DisposedHandle:
        """Run ``task`` after ``delay`` seconds (0: as soon as possible, after earlier tasks)."""

    def submit(self, task: Task) -> None:
        """``schedule(task)`` for a caller that discards the handle (a drain scheduling itself):
        same order and dispose semantics; a worker may skip allocating the handle."""
        self.schedule(task)

    def schedule_periodic(self, task: Task, initial_delay: float, period: float) -> TaskHandle | DisposedHandle:
        """Run ``task`` every ``period`` seconds after ``initial_delay``, on absolute times
        (start + k * period); if the worker falls behind by more than a period it re-bases rather
        than bursting. Disposing the returned handle also disposes the pending run."""
        if period <= 0:
            raise ValueError(f"schedule_periodic(): period must be > 0, got {period}")
        handle = _PeriodicHandle(task)
        start = self.now() + initial_delay
        state = [0, start]

        def tick() -> None:
            t = handle.take()
            if t is None or self.is_disposed:
                return
            t()
            state[0] += 1
            nxt = state[1] + state[0] * period
            now = self.now()
            if nxt < now - period:  # fell behind: re-base instead of a burst of catch-up runs
                state[0] = 0
                state[1] = now + period
                nxt = state[1]
            if not handle.is_disposed:
                handle.track(self.schedule(tick, max(0.0, nxt - now)))

        handle.track(self.schedule(tick, max(0.0, initial_delay)))
        return handle

    def now(self) -> float:
        return time.monotonic()

    def dispose(self) -> None:
        self._disposed.try_set()

    @property
    def is_disposed(self) -> bool:
        return self._disposed.is_set()


class Scheduler(ABC):
    """A source of Workers.

    Example::

        from rstreams import schedulers
        Flowable.range(0, 10).subscribe_on(schedulers.io()).observe_on(schedulers.single())
    """

    @abstractmethod
    def create_worker(self) -> Worker:
        """A new Worker; dispose it when done."""

    def now(self) -> float:
        return time.monotonic()

    def schedule_direct(self, task: Task, delay: float = 0.0) -> Any:
        """Run ``task`` once on a fresh worker, which is disposed after it; disposing the returned
        handle before the task ran disposes that worker too (a new_thread() thread ends, an io()
        thread is released)."""
        w = self.create_worker()

        def run() -> None:
            try:
                task()
            finally:
                w.dispose()

        return _CompositeHandle(w.schedule(run, delay), w)

    def schedule_periodic_direct(self, task: Task, initial_delay: float, period: float) -> Any:
        """Run ``task`` periodically on a dedicated worker; disposing the handle disposes the worker."""
        w = self.create_worker()
        h = w.schedule_periodic(task, initial_delay, period)
        return _CompositeHandle(h, w)

    def shutdown(self) -> None:  # noqa: B027 - optional hook: most schedulers own no threads
        """Stop the scheduler's threads (shared schedulers restart lazily on next use)."""


class _CompositeHandle:
    __slots__ = ("_a", "_b")

    def __init__(self, a: Any, b: Any) -> None:
        self._a = a
        self._b = b

    def dispose(self) -> None:
        self._a.dispose()
        self._b.dispose()

    @property
    def is_disposed(self) -> bool:
        return bool(self._b.is_disposed)
