"""Schedulers: where work runs.

``immediate()``, ``trampoline()``, ``single()``, ``new_thread()``, ``computation()`` and ``io()``
return shared instances (as RxJava's ``Schedulers.single()``); ``from_executor(executor)`` wraps a
``concurrent.futures.Executor``. Threads are daemon threads named ``rstreams-<kind>-<n>``; pools
are bounded (computation: ``cpu_count`` threads; io: ``10 * cpu_count``, idle threads expire after
60 s). ``TestScheduler`` (virtual time) lives in :mod:`rstreams.testing`; ``AsyncioScheduler``
(a Worker's tasks on an event loop) is here and in :mod:`rstreams.aio`, loaded on first use (so
importing this package does not import asyncio).

Example::

    from rstreams import Flowable, schedulers
    Flowable.range(0, 1000).subscribe_on(schedulers.io()).observe_on(schedulers.single()) \\
        .blocking_subscribe(print)
"""

from __future__ import annotations

import concurrent.futures
import threading
from typing import TYPE_CHECKING, Any

from ._base import DISPOSED, Scheduler, TaskHandle, Worker

# Not in __all__ (explicit re-exports, ``import x as x``): what a Scheduler written elsewhere in
# rstreams builds on (TestScheduler in rstreams.testing), and new_thread's class for a named thread
# of one's own (the Spark sink's writer).
from ._base import DisposedHandle as DisposedHandle
from ._base import run_task as run_task
from ._base import run_task_nested as run_task_nested
from ._local import ExecutorScheduler, ImmediateScheduler, TrampolineScheduler
from ._threads import ComputationScheduler, IoScheduler, SingleScheduler
from ._threads import NewThreadScheduler as NewThreadScheduler

if TYPE_CHECKING:
    from ._asyncio import AsyncioScheduler, AsyncioWorker

__all__ = [
    "DISPOSED",
    "AsyncioScheduler",
    "AsyncioWorker",
    "Scheduler",
    "TaskHandle",
    "Worker",
    "computation",
    "from_executor",
    "immediate",
    "io",
    "new_thread",
    "shutdown",
    "single",
    "trampoline",
]

# The asyncio scheduler, loaded on first use (importing asyncio costs tens of milliseconds).
_LAZY = {
    "AsyncioScheduler": "._asyncio",
    "AsyncioWorker": "._asyncio",
}


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'rstreams.schedulers' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(mod, __name__), name)


_lock = threading.Lock()
_immediate = ImmediateScheduler()
_trampoline = TrampolineScheduler()
_single: SingleScheduler | None = None
_new_thread = NewThreadScheduler()
_computation: ComputationScheduler | None = None
_io: IoScheduler | None = None


def immediate() -> Scheduler:
    """Run tasks at once on the calling thread.

    Example::

        Flowable.just(1, 2).subscribe_on(schedulers.immediate()).test().assert_result(1, 2)   # no hop
    """
    return _immediate


def trampoline() -> Scheduler:
    """Run tasks on the calling thread, queueing re-entrant ones (no stack growth).

    Example::

        w = schedulers.trampoline().create_worker()
        w.schedule(lambda: (w.schedule(lambda: print("second")), print("first")))   # first, second
    """
    return _trampoline


def single() -> Scheduler:
    """One shared background thread.

    Example::

        Flowable.just(1).observe_on(schedulers.single()) \\
            .map(lambda _: threading.current_thread().name).blocking_first()   # 'rstreams-single-1'
    """
    global _single
    with _lock:
        if _single is None:
            _single = SingleScheduler()
        return _single


def new_thread() -> Scheduler:
    """A new thread per worker (it ends when the worker is disposed).

    Example::

        Flowable.interval(0.1, scheduler=schedulers.new_thread()).take(3).blocking_last()   # 2
    """
    return _new_thread


def computation() -> Scheduler:
    """A fixed pool of ``cpu_count`` event-loop threads (timers and light work).

    Example::

        Flowable.timer(0.1, scheduler=schedulers.computation()).blocking_first()   # 0
    """
    global _computation
    with _lock:
        if _computation is None:
            _computation = ComputationScheduler()
        return _computation


def io() -> Scheduler:
    """A cached, bounded pool of threads for blocking work.

    Example::

        Flowable.from_callable(lambda: urlopen(url).read()).subscribe_on(schedulers.io())
    """
    global _io
    with _lock:
        if _io is None:
            _io = IoScheduler()
        return _io


def from_executor(executor: concurrent.futures.Executor) -> Scheduler:
    """Wrap an Executor; delayed tasks wait on the computation scheduler's timers.

    Example::

        with ThreadPoolExecutor(4) as pool:
            Flowable.range(0, 3).observe_on(schedulers.from_executor(pool)).to_list().blocking_first()
            # [0, 1, 2]
    """
    return ExecutorScheduler(executor, computation())


def shutdown() -> None:
    """Stop the shared schedulers' threads (they restart lazily on next use).

    Example::

        schedulers.shutdown()
        Flowable.timer(0.1).blocking_first()    # 0: the computation threads start again
    """
    for s in (_single, _computation, _io):
        if s is not None:
            s.shutdown()
