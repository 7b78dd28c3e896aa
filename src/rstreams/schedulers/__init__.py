"""Schedulers: where work runs.

``immediate()``, ``trampoline()``, ``single()``, ``new_thread()``, ``computation()`` and ``io()``
return shared instances (as RxJava's ``Schedulers.single()``); ``from_executor(executor)`` wraps a
``concurrent.futures.Executor``. Threads are daemon threads named ``rstreams-<kind>-<n>``; pools
are bounded (computation: ``cpu_count`` threads; io: ``10 * cpu_count``, idle threads expire after
60 s). ``TestScheduler`` (virtual time) lives in :mod:`rstreams.testing`.

Example::

    from rstreams import Flowable, schedulers
    Flowable.range(0, 1000).subscribe_on(schedulers.io()).observe_on(schedulers.single()) \\
        .blocking_subscribe(print)
"""

from __future__ import annotations

import concurrent.futures
import threading

from ._base import DISPOSED, Scheduler, TaskHandle, Worker
from ._local import ExecutorScheduler, ImmediateScheduler, TrampolineScheduler
from ._threads import ComputationScheduler, IoScheduler, NewThreadScheduler, SingleScheduler

__all__ = [
    "DISPOSED",
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

_lock = threading.Lock()
_immediate = ImmediateScheduler()
_trampoline = TrampolineScheduler()
_single: SingleScheduler | None = None
_new_thread = NewThreadScheduler()
_computation: ComputationScheduler | None = None
_io: IoScheduler | None = None


def immediate() -> Scheduler:
    """Run tasks at once on the calling thread."""
    return _immediate


def trampoline() -> Scheduler:
    """Run tasks on the calling thread, queueing re-entrant ones (no stack growth)."""
    return _trampoline


def single() -> Scheduler:
    """One shared background thread."""
    global _single
    with _lock:
        if _single is None:
            _single = SingleScheduler()
        return _single


def new_thread() -> Scheduler:
    """A new thread per worker (it ends when the worker is disposed)."""
    return _new_thread


def computation() -> Scheduler:
    """A fixed pool of ``cpu_count`` event-loop threads (timers and light work)."""
    global _computation
    with _lock:
        if _computation is None:
            _computation = ComputationScheduler()
        return _computation


def io() -> Scheduler:
    """A cached, bounded pool of threads for blocking work."""
    global _io
    with _lock:
        if _io is None:
            _io = IoScheduler()
        return _io


def from_executor(executor: concurrent.futures.Executor) -> Scheduler:
    """Wrap an Executor; delayed tasks wait on the computation scheduler's timers."""
    return ExecutorScheduler(executor, computation())


def shutdown() -> None:
    """Stop the shared schedulers' threads (they restart lazily on next use)."""
    for s in (_single, _computation, _io):
        if s is not None:
            s.shutdown()
