"""``AsyncioScheduler(loop)``: a Scheduler whose Workers run their tasks on an asyncio event loop.

Thread-safe entry: ``schedule`` may be called from any thread. From the loop's own thread it uses
``loop.call_soon``/``call_later`` directly; from any other thread ``call_soon_threadsafe`` (a
delayed task's due time is fixed at ``schedule`` and its timer armed once it reaches the loop).
Tasks of one Worker run one at a time (the loop runs one callback at a time) and immediate tasks
in FIFO order (both paths append to the loop's ready queue in call order). ``contextvars``
captured when the Worker is created are restored around each task (``call_soon(..., context=)``).

``dispose()`` cancels the Worker's pending tasks: every task has a :class:`TaskHandle` checked
just before it runs, and its asyncio ``Handle``/``TimerHandle`` is cancelled on the loop (so a long
timer does not keep the callback alive). Race: schedule vs dispose from two threads; the handle set
is guarded by a lock (never held while a task runs), and a handle added after dispose started is
disposed by the re-check under that lock.

``observe_on(AsyncioScheduler(loop))`` thus delivers a stream on the loop thread, in batches: the
observe_on drain is one task per burst, not per element.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from asyncio import AbstractEventLoop
from asyncio.events import _get_running_loop
from typing import Any, final

from .._internal.event_loops import resolve_loop
from .._internal.plugins import on_schedule
from ._base import DISPOSED, DisposedHandle, Scheduler, TaskHandle, Worker, run_task

__all__ = ["AsyncioScheduler", "AsyncioWorker"]


@final
class _LoopTaskHandle(TaskHandle):
    __slots__ = ("_worker", "_handle")

    def __init__(self, task: Any, worker: AsyncioWorker) -> None:
        super().__init__(task)
        self._worker: AsyncioWorker | None = worker
        self._handle: asyncio.Handle | None = None  # loop thread only

    def run(self, context: contextvars.Context | None) -> None:
        self._handle = None
        t = self._task
        w = self._worker
        self._task = None  # one-shot: drop the reference once run
        self._worker = None
        if self._disposed or t is None:
            return
        if w is not None:
            w._forget(self)
            if w.is_disposed:
                return
        self._disposed = True  # the Worker contract: a task's handle is disposed once it ran
        run_task(t, context)

    def arm_at(self, loop: AbstractEventLoop, due: float, context: contextvars.Context | None) -> None:
        """On the loop thread: arm the timer for the due time fixed at ``schedule`` (on the
        monotonic clock: a loop's own ``time()`` may be a cached value when read from another
        thread, as uvloop's is), so a busy loop that reaches this late does not add the whole
        delay again. Nothing is armed once disposed."""
        if self._disposed:
            return
        self._handle = loop.call_later(max(0.0, due - time.monotonic()), self.run, context)

    def dispose(self) -> None:
        if self._disposed:
            return
        super().dispose()
        w = self._worker
        self._worker = None
        if w is not None:
            w._forget(self)
            w._cancel_handle(self)


@final
class AsyncioWorker(Worker):
    """A Worker running its tasks on ``loop`` (see the module docstring).

    Example::

        w = aio.AsyncioScheduler(aio.background_loop()).create_worker()    # an AsyncioWorker
        w.schedule(lambda: print(threading.current_thread().name), delay=0.1)   # rstreams-aio-loop
    """

    __slots__ = ("_loop", "_context", "_handles", "_lock")

    def __init__(self, loop: AbstractEventLoop) -> None:
        super().__init__()
        self._loop = loop
        self._context = contextvars.copy_context()  # captured at creation: subscribe time
        self._handles: set[_LoopTaskHandle] = set()
        self._lock = threading.Lock()  # race: schedule vs dispose (guards _handles only)

    def schedule(self, task: Any, delay: float = 0.0) -> TaskHandle | DisposedHandle:
        if self.is_disposed:
            return DISPOSED
        h = _LoopTaskHandle(on_schedule(task), self)
        with self._lock:
            if self.is_disposed:
                return DISPOSED
            self._handles.add(h)
        loop = self._loop
        ctx = self._context
        try:
            if _get_running_loop() is loop:
                if delay > 0:
                    h._handle = loop.call_later(delay, h.run, ctx)
                else:
                    h._handle = loop.call_soon(h.run, ctx)
            elif delay > 0:
                # the due time is taken now, on the scheduling thread, so the hop to the loop does
                # not delay the task by the loop's latency on top of ``delay``
                loop.call_soon_threadsafe(h.arm_at, loop, time.monotonic() + delay, ctx)
            else:
                loop.call_soon_threadsafe(h.run, ctx)
        except RuntimeError:  # the loop is closed
            h.dispose()
            return DISPOSED
        return h

    def _forget(self, h: _LoopTaskHandle) -> None:
        with self._lock:
            self._handles.discard(h)

    def _cancel_handle(self, h: _LoopTaskHandle) -> None:
        ah = h._handle
        if ah is None:
            return
        if _get_running_loop() is self._loop:
            ah.cancel()
        else:
            try:
                self._loop.call_soon_threadsafe(ah.cancel)
            except RuntimeError:
                pass

    def dispose(self) -> None:
        if not self._disposed.try_set():
            return
        with self._lock:
            handles = list(self._handles)
            self._handles.clear()
        for h in handles:
            h.dispose()

    @property
    def loop(self) -> AbstractEventLoop:
        return self._loop


class AsyncioScheduler(Scheduler):
    """A Scheduler whose Workers run tasks on an asyncio event loop, entered from any thread.

    Example::

        async def main():
            loop = asyncio.get_running_loop()
            values = []
            Flowable.range(0, 5).subscribe_on(schedulers.io()) \\
                .observe_on(AsyncioScheduler(loop)).subscribe(values.append)   # on the loop thread

    ``AsyncioScheduler()`` without a loop uses the running loop of the calling thread, or the
    shared background loop thread ``rstreams-aio-loop`` when there is none.

    Scheduler: tasks run on the loop thread, one at a time; a task that blocks blocks the loop
    (choose this scheduler only for short callbacks).
    """

    def __init__(self, loop: AbstractEventLoop | None = None) -> None:
        if loop is not None and not isinstance(loop, asyncio.AbstractEventLoop):
            raise TypeError(f"AsyncioScheduler(): expected an asyncio event loop, got {type(loop).__name__}")
        self._loop = resolve_loop(loop)

    @property
    def loop(self) -> AbstractEventLoop:
        return self._loop

    def create_worker(self) -> Worker:
        return AsyncioWorker(self._loop)

    def now(self) -> float:
        # the Scheduler contract's clock (time.monotonic(), as the Workers' now()): a loop's own
        # time() may use another epoch (uvloop) and be a cached value when read off its thread
        return time.monotonic()

    def __repr__(self) -> str:
        return f"AsyncioScheduler({self._loop!r})"
