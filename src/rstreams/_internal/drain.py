"""Serialization idioms of seed 004: the wip/missed queue-drain, the half-serializer, post-complete,
and error accumulation.

Queue-drain in one picture (race: many producers, one consumer at a time)::

    if wip.get_and_increment() != 0:   # someone else is draining: they will see our work
        return
    missed = 1
    while True:
        ... deliver everything available, up to demand ...
        missed = wip.add_and_get(-missed)
        if missed == 0:
            break
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Final, final

from .._spec import Subscriber
from . import plugins
from .atomics import AtomicInt
from .requests import MAX_DEMAND

__all__ = [
    "enter",
    "leave",
    "HalfSerializer",
    "ErrorCollector",
    "pair_errors",
    "TERMINATED",
    "COMPLETED_MASK",
    "REQUESTED_MASK",
    "post_complete",
    "post_complete_request",
]


# enter/leave run once per signal in the per-element paths: each is the atomic's read-modify-write
# written out under its lock (one call in all, not a call to AtomicInt's method from here)


def enter(wip: AtomicInt) -> bool:
    """True if the caller moved wip from 0 and now owns the drain loop (``get_and_increment() == 0``)."""
    with wip._lock:  # race: several signalling threads, one drainer
        w = wip._value
        wip._value = w + 1
    return w == 0


def leave(wip: AtomicInt, missed: int) -> int:
    """Subtract the work seen by this pass; 0 means the drain loop may exit (``add_and_get(-missed)``)."""
    with wip._lock:  # race: work signalled while this pass ran shows as a non-zero result
        m = wip._value - missed
        wip._value = m
    return m


# ---------------------------------------------------------------------------------------------
# Errors


@final
class _Terminated(Exception):
    """Marks an ErrorCollector whose error has been taken (nothing more may be added)."""

    def __repr__(self) -> str:
        return "TERMINATED"


TERMINATED: Final = _Terminated("terminated")


class ErrorCollector:
    """Accumulates errors (seed 004, "atomic error management"); several become an ExceptionGroup.

    ``add`` returns False once the collector was terminated (the error goes nowhere and the caller
    should send it to the undeliverable hook: :meth:`add_or_report` does that).

    Example::

        errors = ErrorCollector()
        errors.add(ValueError("a")); errors.add(KeyError("b"))
        exc = errors.terminate()     # ExceptionGroup of both
    """

    __slots__ = ("_errors", "_terminated", "_lock")

    def __init__(self) -> None:
        self._errors: list[BaseException] = []
        self._terminated = False
        self._lock = threading.Lock()  # race: concurrent add vs terminate

    def add(self, error: BaseException) -> bool:
        with self._lock:
            if self._terminated:
                return False
            self._errors.append(error)
            return True

    def add_or_report(self, error: BaseException) -> bool:
        if self.add(error):
            return True
        plugins.on_error(error)
        return False

    def has_error(self) -> bool:
        return bool(self._errors)

    @property
    def is_terminated(self) -> bool:
        return self._terminated

    def peek(self) -> BaseException | None:
        errs = self._errors
        return errs[0] if errs else None

    def terminate(self) -> BaseException | None:
        """Close the collector and return its error: None, the single error, or an ExceptionGroup."""
        with self._lock:
            if self._terminated:
                return TERMINATED
            self._terminated = True
            errs = self._errors
            self._errors = []
        if not errs:
            return None
        if len(errs) == 1:
            return errs[0]
        return _group(errs)

    def terminate_into(self, subscriber: Subscriber[Any]) -> None:
        """Terminate and signal: on_error with the accumulated error, or on_complete if there is none."""
        e = self.terminate()
        if e is None:
            subscriber.on_complete()
        elif e is not TERMINATED:
            subscriber.on_error(e)

    def report_remaining(self) -> None:
        """Terminate and send any accumulated error to the undeliverable hook (after cancel)."""
        e = self.terminate()
        if e is not None and e is not TERMINATED:
            plugins.on_error(e)


def _group(errs: list[BaseException]) -> BaseException:
    return _exception_group(f"{len(errs)} errors", errs)


def _exception_group(message: str, errs: list[BaseException]) -> BaseException:
    # an ExceptionGroup only holds Exceptions: a KeyboardInterrupt among them needs the base group
    if all(isinstance(e, Exception) for e in errs):
        return ExceptionGroup(message, errs)  # type: ignore[type-var]
    return BaseExceptionGroup(message, errs)


def pair_errors(first: BaseException, second: BaseException, message: str) -> BaseException:
    """Both errors as one group, ``first`` (the stream's error) first: what a signal reports when a
    user callback raised while it handled ``first`` (RxJava: ``CompositeException(first, second)``).

    Example::

        pair_errors(ValueError("stream"), KeyError("handler"), "on_error_return(): the handler raised")
    """
    return _exception_group(message, [first, second])


# ---------------------------------------------------------------------------------------------
# Half-serializer


class HalfSerializer:
    """Serializes on_next from one thread with on_error/on_complete from any other thread.

    Race: the upstream thread is inside on_next while another thread (a take_until trigger, a timer)
    wants to terminate. The terminal signal is stored and delivered by whoever leaves last.
    Only on_next is assumed serial with itself; terminal calls may come from anywhere.

    Example::

        hs = HalfSerializer(downstream)
        hs.on_next(x)          # from the upstream thread
        hs.on_error(exc)       # from another thread, safely
    """

    __slots__ = ("_downstream", "_lock", "_wip", "_errors", "_done")

    def __init__(self, downstream: Subscriber[Any]) -> None:
        self._downstream = downstream
        # guards _wip (race: on_next on the upstream thread vs a terminal signal from another
        # thread; rule 1.3): a plain int under a raw lock, one lock round trip per step
        self._lock = threading.Lock()
        self._wip = 0  # 1 while on_next runs; +1 per terminal signal that arrived
        self._errors = ErrorCollector()
        self._done = False

    def on_next(self, item: Any) -> None:
        if self._done:
            return
        lock = self._lock
        with lock:
            if self._wip:
                return  # a terminal signal is being delivered (or was): nothing follows it
            self._wip = 1
        self._downstream.on_next(item)
        with lock:
            w = self._wip - 1
            self._wip = w
        if w:  # a terminal signal arrived during on_next: delivered here, after it
            self._errors.terminate_into(self._downstream)
            self._done = True

    def _enter_terminal(self) -> bool:
        with self._lock:
            w = self._wip
            self._wip = w + 1
        return w == 0

    def on_error(self, error: BaseException) -> None:
        if not self._errors.add(error):
            plugins.on_error(error)
            return
        if self._enter_terminal():
            self._done = True
            self._errors.terminate_into(self._downstream)

    def on_complete(self) -> None:
        if self._enter_terminal():
            self._done = True
            self._errors.terminate_into(self._downstream)


# ---------------------------------------------------------------------------------------------
# Post-complete (seed 004): emit a buffered tail after on_complete, honouring demand.

#: The completed flag lives above every legal demand value in the requested counter.
COMPLETED_MASK: Final[int] = 1 << 63
REQUESTED_MASK: Final[int] = MAX_DEMAND


def _post_complete_drain(
    n: int,
    downstream: Subscriber[Any],
    queue: deque[Any],
    requested: AtomicInt,
    is_cancelled: Callable[[], bool],
) -> bool:
    """Emit up to the demand from ``queue``; True if everything (queue + on_complete) was delivered."""
    e = n & COMPLETED_MASK
    while True:
        while e != n:
            if is_cancelled():
                return True
            if not queue:
                downstream.on_complete()
                return True
            downstream.on_next(queue.popleft())
            e += 1
        if e == n:
            if is_cancelled():
                return True
            if not queue:
                downstream.on_complete()
                return True
        n = requested.get()
        if n == e:
            n = requested.add_and_get(-(e & REQUESTED_MASK))
            if (n & REQUESTED_MASK) == 0:
                return False
            e = n & COMPLETED_MASK


def post_complete_request(
    n: int,
    downstream: Subscriber[Any],
    queue: deque[Any],
    requested: AtomicInt,
    is_cancelled: Callable[[], bool],
) -> bool:
    """Handle ``request(n)`` for a post-complete operator.

    Returns True if the request happened before completion (the caller should pass it upstream) and
    False if the post-complete phase handles it (the queued tail is emitted here).
    Race: request vs on_complete; the completed bit and the demand share one atomic counter.
    """
    with requested._lock:
        r = requested._value
        u = (r & REQUESTED_MASK) + n
        if u >= MAX_DEMAND:
            u = MAX_DEMAND
        requested._value = (r & COMPLETED_MASK) | u
    if r == COMPLETED_MASK:
        _post_complete_drain(n | COMPLETED_MASK, downstream, queue, requested, is_cancelled)
        return False
    return (r & COMPLETED_MASK) == 0


def post_complete(
    downstream: Subscriber[Any],
    queue: deque[Any],
    requested: AtomicInt,
    is_cancelled: Callable[[], bool],
) -> None:
    """Call from on_complete: mark completion and emit the tail as demand allows."""
    if not queue:
        downstream.on_complete()
        return
    with requested._lock:  # race: on_complete vs request
        r = requested._value
        if r & COMPLETED_MASK:
            return
        requested._value = r | COMPLETED_MASK
    if r != 0:
        _post_complete_drain(r | COMPLETED_MASK, downstream, queue, requested, is_cancelled)
