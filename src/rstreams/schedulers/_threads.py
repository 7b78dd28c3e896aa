"""Thread-backed schedulers: an event-loop thread and the standard schedulers built on it.

An :class:`EventLoop` is one daemon thread with a FIFO of ready tasks and a heap of timed tasks,
woken through a raw lock used as a binary semaphore only when it sleeps (a wake-up per burst, not per
task). Workers on a loop run their tasks on that one thread, so they never overlap (Worker
contract) and run immediate tasks in FIFO order.

The hand-off (an immediate task for a loop that sleeps) is the cost of every thread boundary, so
it is kept short: the submitter takes the loop's lock once (append, flip the sleeping flag,
release the wake-up); the woken loop pops and runs the ready tasks without the lock and takes it
once more only to find nothing left and mark itself sleeping. An immediate task carries its
worker's disposed flag (checked before it runs) instead of being tracked by the worker, and
``Worker.submit`` skips even its handle.
"""

from __future__ import annotations

import contextvars
import heapq
import itertools
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Final

from .._internal import plugins
from .._internal.atomics import AtomicFlag, AtomicInt
from .._internal.plugins import on_schedule
from ._base import DISPOSED, DisposedHandle, Scheduler, Task, TaskHandle, Worker

__all__ = [
    "EventLoop",
    "LoopWorker",
    "SingleScheduler",
    "NewThreadScheduler",
    "ComputationScheduler",
    "IoScheduler",
]

_ids = itertools.count(1)

#: The longest single sleep of a loop (seconds). A timed task due later (``timer(1e12)``, a
#: ``math.inf`` delay) is waited for in slices: ``Lock.acquire`` rejects a timeout beyond the
#: platform's ``time_t`` with OverflowError, which would kill the loop thread and every worker on it.
_MAX_WAIT = 3600.0

#: The "worker disposed" flag of tasks submitted to a loop directly (no worker): never raised.
_LIVE = AtomicFlag()

#: A ready task: (its worker's disposed flag, its handle or None, the task when it has no handle,
#: the context to run it in). A task is skipped once its worker's flag is up or its handle disposed.
_Ready = tuple[AtomicFlag, "TaskHandle | None", "Task | None", "contextvars.Context | None"]


def _dispose_all(handles: list[TaskHandle | None]) -> None:
    # outside the loop's lock: a worker's timed handle takes it to leave the worker's _handles
    for h in handles:
        if h is not None:
            h.dispose()


_PURGE_MIN: Final = 64


def _dead(entry: tuple[float, int, AtomicFlag, TaskHandle, Any]) -> bool:
    """A timed entry whose worker or own handle was disposed: it will never run."""
    return bool(entry[2]._value) or entry[3]._disposed


class EventLoop:
    """One daemon thread running tasks in order. ``idle_timeout``: exit after that long idle."""

    def __init__(
        self, name: str, idle_timeout: float | None = None, on_idle: Callable[[EventLoop], bool] | None = None
    ) -> None:
        self.name = name
        # race: submitters (any thread) vs the loop. Submitters append under _lock, which orders the
        # append against the _sleeping flag (no lost wake-up); the loop pops without the lock:
        # deque.append/popleft are documented thread-safe (the deque's own lock without the GIL),
        # and this loop thread is the only consumer (besides stop(): see _stop_locked).
        self._ready: deque[_Ready] = deque()
        self._timed: list[tuple[float, int, AtomicFlag, TaskHandle, contextvars.Context | None]] = []
        self._seq = itertools.count()
        # _timed is rebuilt without its disposed entries once it grows past this (amortised O(1)):
        # a disposed timer must not hold its task and context until it falls due (rule 3.13)
        self._purge_at = _PURGE_MIN
        self._lock = threading.Lock()  # guards _timed/_sleeping/_stopped and appends to _ready
        # Wake-up: a raw lock used as a binary semaphore, held while no wake-up is pending. A raw
        # lock hand-off costs about a third of a Condition's (which allocates a waiter lock per
        # wait): ~15 us vs ~42 us a round trip here, and a hand-off pays one per burst.
        self._wake = threading.Lock()
        self._wake.acquire()
        self._sleeping = False
        self._stopped = False
        self._idle_timeout = idle_timeout
        self._on_idle = on_idle
        self.leases = 0  # guarded by the owning pool's lock
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def submit(self, handle: TaskHandle, delay: float, context: contextvars.Context | None) -> bool:
        """Run ``handle``'s task after ``delay`` (unless disposed by then); False once stopped."""
        with self._lock:
            return self._submit_locked(_LIVE, handle, delay, context)

    def _submit_locked(
        self, flag: AtomicFlag, handle: TaskHandle, delay: float, context: contextvars.Context | None
    ) -> bool:
        # under _lock
        if self._stopped:
            return False
        if not delay > 0:  # NaN too: a NaN due time would break the heap and the wait below
            self._ready.append((flag, handle, None, context))
        else:
            timed = self._timed
            heapq.heappush(timed, (time.monotonic() + delay, next(self._seq), flag, handle, context))
            if len(timed) > self._purge_at:
                timed[:] = [e for e in timed if not _dead(e)]
                heapq.heapify(timed)
                self._purge_at = max(_PURGE_MIN, 2 * len(timed))
        if self._sleeping:
            # race: lost wake-up vs a double release. Only the submitter that flips the flag
            # releases, under _lock; the loop consumes that permit (see _run).
            self._sleeping = False
            self._wake.release()
        return True

    def stop(self) -> None:
        """Stop the thread: the tasks not yet run never run, and their handles are disposed."""
        with self._lock:
            dropped = self._stop_locked()
            if self._sleeping:
                self._sleeping = False
                self._wake.release()
        _dispose_all(dropped)

    def _stop_locked(self) -> list[TaskHandle | None]:
        # under _lock: nothing is accepted after this, so emptying the queues is final
        self._stopped = True
        ready = self._ready
        dropped: list[TaskHandle | None] = [item[3] for item in self._timed]
        self._timed.clear()
        # race: the loop pops without the lock; popping one by one (not iterating, which fails
        # on a concurrent pop) leaves it at most the task it was taking when stop() came
        while ready:
            try:
                dropped.append(ready.popleft()[1])
            except IndexError:
                break
        return dropped

    @property
    def stopped(self) -> bool:
        return self._stopped

    def _run(self) -> None:
        # The hot path of every thread hand-off. Per wake-up: the ready tasks are popped and run
        # without the lock (one by one, so a task queued while the loop is awake runs in the same
        # pass), then one lock round trip either finds more work or marks the loop sleeping, then
        # the wait on the raw-lock semaphore. No clock read unless timed tasks or an idle timeout
        # need one; no allocation per task beyond the ready tuple.
        lock = self._lock
        wake = self._wake
        ready = self._ready
        popleft = ready.popleft
        timed = self._timed
        heappop = heapq.heappop
        on_error = plugins.on_error
        idle_timeout = self._idle_timeout
        monotonic = time.monotonic
        idle_since = monotonic()
        while True:
            if ready:
                while ready:
                    try:
                        flag, h, task, ctx = popleft()
                    except IndexError:  # race: stop() cleared the deque after the check
                        break
                    if flag._value:  # the worker was disposed: it runs nothing more
                        if h is not None:
                            h.dispose()  # and its tasks are disposed (is_disposed), as before
                        continue
                    if h is not None:
                        task = h.take()
                        if task is None:  # disposed (cancelled) before it ran
                            continue
                    try:
                        if ctx is not None:
                            ctx.run(task)  # type: ignore[arg-type]
                        else:
                            task()  # type: ignore[misc]
                    except BaseException as e:  # noqa: BLE001 - a CancelledError or SystemExit too:
                        # the loop thread serves every later task of its workers, so it never dies
                        # of one task (RxJava's scheduled runnables catch any Throwable)
                        on_error(e, f"a scheduled task raised: {task!r}")
                if idle_timeout is not None:
                    idle_since = monotonic()
            with lock:
                if self._stopped:
                    return
                timeout: float | None = None
                while timed and _dead(timed[0]):  # a disposed timer keeps no thread awake
                    heappop(timed)
                if timed:
                    now = monotonic()
                    while timed and timed[0][0] <= now:
                        _, _, flag, h, ctx = heappop(timed)
                        ready.append((flag, h, None, ctx))
                    if timed:
                        timeout = timed[0][0] - now
                if ready:
                    continue  # (leaves the lock) run them
                idle_exit = False
                if timeout is None and idle_timeout is not None:
                    timeout = idle_timeout - (monotonic() - idle_since)
                    idle_exit = timeout <= 0
                if timeout is None or timeout > 0:
                    self._sleeping = True
            if idle_exit:
                # idle for idle_timeout. race: a worker leasing this loop vs the loop retiring; the
                # pool decides under its own lock, and only a loop nobody leases is retired.
                if self._on_idle is None or self._on_idle(self):
                    with lock:
                        dropped = self._stop_locked()
                    _dispose_all(dropped)
                    return
                idle_since = monotonic()
                continue
            if timeout is None:
                wake.acquire()  # until a submitter (or stop) releases the permit
            elif timeout > 0.0:
                # until a submitter releases ``wake`` or the timeout passes (at most _MAX_WAIT:
                # the loop then re-checks and sleeps again)
                if not wake.acquire(True, min(timeout, _MAX_WAIT)):
                    with lock:
                        if self._sleeping:
                            self._sleeping = False  # timed out and nobody released
                        else:
                            # a submitter released after our timeout: take that permit so the
                            # semaphore stays binary (race: timeout vs submit)
                            wake.acquire(False)
            # else: a timed task is due now: loop again


class LoopWorker(Worker):
    """A Worker whose tasks run on one EventLoop (shared with other workers or its own)."""

    __slots__ = ("_loop", "_context", "_handles", "_lock", "_owns_loop", "_release")

    def __init__(self, loop: EventLoop, owns_loop: bool = False, release: Callable[[EventLoop], Any] | None = None) -> None:
        # Created once per inner source by flat_map over subscribe_on(io()): no locks of its own.
        # The loop's lock guards the disposed flag and _handles (race: schedule vs dispose); it is
        # never held while the worker calls out, so sharing it cannot deadlock.
        self._lock = loop._lock
        self._disposed = AtomicFlag(self._lock)
        self._loop = loop
        self._context = contextvars.copy_context()  # captured at creation: subscribe time
        self._handles: set[TaskHandle] = set()  # timed tasks only
        self._owns_loop = owns_loop
        self._release = release

    def schedule(self, task: Task, delay: float = 0.0) -> TaskHandle | DisposedHandle:
        if self._disposed._value:
            return DISPOSED
        if plugins._schedule_hook is not None:
            task = on_schedule(task)
        if delay > 0:
            return self._schedule_timed(task, delay)
        # immediate (NaN too): a plain one-shot handle; the loop checks this worker's disposed
        # flag before running it (a disposed worker runs nothing more), so no tracking is needed
        handle = TaskHandle(task)
        loop = self._loop
        with self._lock:  # the loop's lock: see EventLoop._submit_locked (inlined: the hot path)
            if loop._stopped:
                handle.dispose()
                return DISPOSED
            loop._ready.append((self._disposed, handle, None, self._context))
            if loop._sleeping:
                # race: lost wake-up vs a double release, as in _submit_locked
                loop._sleeping = False
                loop._wake.release()
        return handle

    def submit(self, task: Task) -> None:
        """``schedule(task)`` without a handle: nothing to allocate for callers that discard it."""
        if self._disposed._value:
            return
        if plugins._schedule_hook is not None:
            task = on_schedule(task)
        loop = self._loop
        with self._lock:  # as in schedule
            if loop._stopped:
                return
            loop._ready.append((self._disposed, None, task, self._context))
            if loop._sleeping:
                loop._sleeping = False
                loop._wake.release()

    def _schedule_timed(self, task: Task, delay: float) -> TaskHandle | DisposedHandle:
        handle = _WorkerTaskHandle(task, self)
        with self._lock:
            # timed tasks are tracked so that dispose() drops their references at once (rule
            # 3.13); added under the lock after seeing the flag down (race: schedule vs dispose)
            flag = self._disposed
            ok = not flag._value and self._loop._submit_locked(flag, handle, delay, self._context)
            if ok:
                self._handles.add(handle)
        if not ok:
            handle.dispose()
            return DISPOSED
        return handle

    def _done(self, handle: TaskHandle) -> None:
        if self._handles:
            with self._lock:
                self._handles.discard(handle)

    @property
    def thread(self) -> threading.Thread:
        return self._loop.thread

    def dispose(self) -> None:
        if not self._disposed.try_set():
            return
        # race: schedule(delay) vs dispose. schedule adds a handle only under _lock after seeing
        # the flag down; try_set raised it under the same lock, so every handle added before is
        # visible here and none can be added after: an empty set needs no second lock round trip
        if self._handles:
            with self._lock:
                handles = list(self._handles)
                self._handles.clear()
            for h in handles:
                h.dispose()
        if self._owns_loop:
            self._loop.stop()
        elif self._release is not None:
            self._release(self._loop)


class _WorkerTaskHandle(TaskHandle):
    __slots__ = ("_worker",)

    def __init__(self, task: Task, worker: LoopWorker) -> None:
        # no super().__init__: this runs once per hand-off; the base slots are set here directly
        self._task: Task | None = task
        self._disposed = False
        self._worker: LoopWorker | None = worker

    def take(self) -> Task | None:
        t = self._task
        if self._disposed or t is None:
            return None
        w = self._worker
        self._worker = None
        self._task = None  # one-shot: drop the reference once run
        self._disposed = True  # and done (is_disposed, as RxJava's ScheduledRunnable)
        if w is not None:
            if w._disposed._value:
                return None
            if w._handles:
                w._done(self)
        return t

    def dispose(self) -> None:
        # A disposed timed task leaves its worker's _handles at once (debounce disposes one timer
        # per element: without this the set grows until the worker is disposed). race: dispose vs
        # take on the loop thread: both may see the worker; discard under its lock is idempotent.
        self._disposed = True
        self._task = None
        w = self._worker
        self._worker = None
        if w is not None and w._handles:
            w._done(self)


class SingleScheduler(Scheduler):
    """One shared thread for every worker (RxJava ``Schedulers.single()``)."""

    def __init__(self, name: str = "rstreams-single") -> None:
        self._name = name
        self._loop: EventLoop | None = None
        self._lock = threading.Lock()

    def _get_loop(self) -> EventLoop:
        with self._lock:
            loop = self._loop
            if loop is None or loop.stopped:
                loop = self._loop = EventLoop(f"{self._name}-{next(_ids)}")
            return loop

    def create_worker(self) -> Worker:
        return LoopWorker(self._get_loop())

    def shutdown(self) -> None:
        with self._lock:
            loop, self._loop = self._loop, None
        if loop is not None:
            loop.stop()


class NewThreadScheduler(Scheduler):
    """A new thread per worker; the thread ends when the worker is disposed."""

    def __init__(self, name: str = "rstreams-new-thread") -> None:
        self._name = name

    def create_worker(self) -> Worker:
        return LoopWorker(EventLoop(f"{self._name}-{next(_ids)}"), owns_loop=True)


class ComputationScheduler(Scheduler):
    """A fixed pool of ``os.cpu_count()`` event-loop threads; workers are assigned round-robin.

    Under the GIL this gives no CPU parallelism for Python code (it does on free-threaded builds);
    use it for timers and light work.
    """

    def __init__(self, size: int | None = None, name: str = "rstreams-computation") -> None:
        self._size = size or max(1, os.cpu_count() or 1)
        self._name = name
        self._loops: list[EventLoop] = []
        self._next = AtomicInt(0)
        self._lock = threading.Lock()

    def create_worker(self) -> Worker:
        with self._lock:
            if not self._loops or any(lp.stopped for lp in self._loops):
                self._loops = [
                    lp if not lp.stopped else EventLoop(f"{self._name}-{next(_ids)}") for lp in self._loops
                ] or [EventLoop(f"{self._name}-{next(_ids)}") for _ in range(self._size)]
            loops = self._loops
        return LoopWorker(loops[self._next.get_and_increment() % len(loops)])

    def shutdown(self) -> None:
        with self._lock:
            loops, self._loops = self._loops, []
        for lp in loops:
            lp.stop()


class IoScheduler(Scheduler):
    """A cached pool for blocking work: a worker leases an idle thread or starts a new one, up to
    ``max_threads`` (default ``10 * cpu_count``; beyond that workers share the least-leased
    threads); idle threads exit after ``keep_alive`` seconds."""

    def __init__(self, max_threads: int | None = None, keep_alive: float = 60.0, name: str = "rstreams-io") -> None:
        self._max = max_threads or 10 * max(1, os.cpu_count() or 1)
        self._keep_alive = keep_alive
        self._name = name
        self._loops: list[EventLoop] = []  # live loops (a retired loop is removed at once)
        self._idle: list[EventLoop] = []  # loops nobody leases, most recently released last
        self._lock = threading.Lock()  # guards _loops, _idle and the loops' lease counts

    def _retire(self, loop: EventLoop) -> bool:
        # race: a worker leasing this loop vs the loop retiring; decided under the pool lock, and
        # a retired loop leaves _loops and _idle before the lock is released
        with self._lock:
            if loop.leases > 0:
                return False
            if loop in self._loops:
                self._loops.remove(loop)
            if loop in self._idle:
                self._idle.remove(loop)
            return True

    def create_worker(self) -> Worker:
        # O(1) while an idle thread exists: flat_map creates a worker per inner source
        with self._lock:
            idle = self._idle
            loop: EventLoop | None = None
            while idle:
                candidate = idle.pop()
                if not candidate._stopped:
                    loop = candidate
                    break
            if loop is None:
                live = self._loops
                if any(lp.stopped for lp in live):  # after shutdown() of a loop by someone else
                    live = self._loops = [lp for lp in live if not lp.stopped]
                if len(live) < self._max:
                    loop = EventLoop(f"{self._name}-{next(_ids)}", idle_timeout=self._keep_alive, on_idle=self._retire)
                    live.append(loop)
                else:
                    loop = min(live, key=lambda lp: lp.leases)
            loop.leases += 1
        return LoopWorker(loop, release=self._release)

    def _release(self, loop: EventLoop) -> None:
        with self._lock:
            loop.leases -= 1
            if loop.leases == 0 and not loop._stopped:
                self._idle.append(loop)
        # no wake-up needed: an idle loop re-checks its lease count at least every keep_alive

    def shutdown(self) -> None:
        with self._lock:
            loops, self._loops = self._loops, []
            self._idle = []
        for lp in loops:
            lp.stop()
