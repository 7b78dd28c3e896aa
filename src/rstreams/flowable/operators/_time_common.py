"""Shared pieces of the time operators: argument checks, scheduler defaults, and a full serializer.

:class:`SerializedOut` is RxJava's ``SerializedSubscriber`` idea written as a queue-drain: the time
operators signal their downstream from two threads at once (the upstream thread and a timer on a
Scheduler worker: debounce's pending value vs on_complete, sample's tick vs on_complete, a timeout vs
on_next). Whoever wins the wip counter emits; signals that arrive meanwhile are queued and emitted by
the winner before it leaves (race: timer thread vs upstream thread; rule 1.3). The cost is two
uncontended lock round trips per signal, paid only by operators that already schedule per item or
per period.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, Final, final

from ..._internal import plugins
from ..._internal.arguments import positive_int
from ..._internal.atomics import AtomicInt
from ..._internal.drain import enter, leave
from ..._internal.subscribers import NOOP_SUBSCRIBER
from ..._spec import Subscriber, null_element_message
from ...errors import MissingBackpressureError, NoneElementError
from ...schedulers import Scheduler

__all__ = ["resolve_scheduler", "check_duration", "SerializedOut", "missing_backpressure", "none_refused", "NOOP", "Pending"]


def resolve_scheduler(op: str, scheduler: Scheduler | None) -> Scheduler:
    """``scheduler`` or the shared computation scheduler; TypeError for anything else."""
    if scheduler is None:
        from ... import schedulers

        return schedulers.computation()
    if not isinstance(scheduler, Scheduler):
        raise TypeError(f"{op}(): scheduler must be a Scheduler, got {type(scheduler).__name__}")
    return scheduler


def check_duration(op: str, duration: object, name: str = "duration", *, positive: bool = False) -> float:
    """A duration in seconds (int or float, >= 0, or > 0 when ``positive``)."""
    if isinstance(duration, bool) or not isinstance(duration, int | float):
        raise TypeError(f"{op}(): {name} must be a number of seconds, got {type(duration).__name__}")
    d = float(duration)
    if d != d or d < 0 or (positive and d == 0):
        need = "> 0" if positive else ">= 0"
        raise ValueError(f"{op}(): {name} must be {need} seconds, got {duration!r}")
    return d


def check_count(op: str, count: object, name: str = "count") -> int:
    """:func:`~rstreams._internal.arguments.positive_int` in the argument order of the time operators."""
    return positive_int(op, name, count)


def missing_backpressure(op: str, what: str, fix: str | None = None) -> MissingBackpressureError:
    """The error a time-driven operator signals when it must emit but the downstream has no demand."""
    if fix is None:
        fix = (
            f"apply on_backpressure_drop(), on_backpressure_latest() or on_backpressure_buffer() after "
            f"{op}(), or request more"
        )
    return MissingBackpressureError(f"{op}(): {what}: the downstream has not requested it; {fix}")


def none_refused(method: str) -> NoneElementError:
    """What a time operator's ``on_subscribe``/``on_next``/``on_error`` raises to its caller for a
    ``None`` argument (rule 2.13), before any state change: a None element would otherwise be
    timed, wrapped (``Timed(None, t)``, ``[None]``) or raised later on a timer thread, where no
    caller can see it and the stream hangs."""
    return NoneElementError(null_element_message(method))


#: the downstream after cancel (rule 3.13); the time operators know it by this name
NOOP: Final = NOOP_SUBSCRIBER


def _run_guarded(fn: Callable[[], Any]) -> None:
    """Run ``fn``; an exception (a bug: rule 2.13) goes to the hook instead of leaving wip stuck."""
    try:
        fn()
    except Exception as e:
        plugins.on_error(e, "a serialized time-operator step raised")


_NEXT: Final = 0
_ERROR: Final = 1
_COMPLETE: Final = 2
_RUN: Final = 3


@final
class SerializedOut:
    """Serializes on_next/on_error/on_complete called from any threads (see the module docstring).

    After the first terminal signal everything is dropped (errors go to the undeliverable hook).
    ``release()`` drops the downstream reference (rule 3.13) and makes every later call a no-op;
    ``detach()`` drops it but keeps serializing.
    """

    __slots__ = ("_downstream", "_wip", "_queue", "_done")

    def __init__(self, downstream: Subscriber[Any]) -> None:
        self._downstream: Subscriber[Any] = downstream
        self._wip = AtomicInt(0)  # race: timer thread vs upstream thread (rule 1.3)
        self._queue: deque[tuple[int, Any]] = deque()
        self._done = False

    @property
    def done(self) -> bool:
        return self._done

    def release(self) -> None:
        self._done = True
        self._downstream = NOOP

    def detach(self) -> None:
        """Drop the downstream (rule 3.13) but keep running :meth:`run` sections: window_timed's
        open window still receives elements and closes on time after its main subscriber left."""
        self._downstream = NOOP

    def on_next(self, item: Any) -> None:
        if self._done:
            return
        wip = self._wip
        if wip.compare_and_set(0, 1):  # fast path: nobody is emitting
            self._downstream.on_next(item)
            if wip.decrement_and_get() == 0:
                return
        else:
            self._queue.append((_NEXT, item))
            if not enter(wip):
                return
        self._drain()

    def run(self, fn: Callable[[], Any]) -> None:
        """Run ``fn`` inside the serialized section (after everything queued before it).

        Inside ``fn`` emit with :meth:`emit_next`/:meth:`emit_error`/:meth:`emit_complete`, which
        deliver at once (``fn`` holds the serialization). This is how an operator makes a "check
        state, then emit" step atomic with respect to the other thread (race: timer vs upstream,
        e.g. debounce's pending value vs on_complete). Calling ``on_next`` from inside ``fn`` would
        queue the element behind signals other threads enqueued meanwhile (a completion could then
        overtake it), so don't.
        """
        if self._done:
            return
        wip = self._wip
        if wip.compare_and_set(0, 1):
            _run_guarded(fn)
            if wip.decrement_and_get() == 0:
                return
        else:
            self._queue.append((_RUN, fn))
            if not enter(wip):
                return
        self._drain()

    # -- inside a run() section only ------------------------------------------------------------
    def emit_next(self, item: Any) -> None:
        if not self._done:
            self._downstream.on_next(item)

    def emit_error(self, error: BaseException) -> None:
        if self._done:
            plugins.on_error(error, "an error after the stream ended")
            return
        self._done = True
        d = self._downstream
        self._downstream = NOOP
        d.on_error(error)

    def emit_complete(self) -> None:
        if self._done:
            return
        self._done = True
        d = self._downstream
        self._downstream = NOOP
        d.on_complete()

    # -- from any thread -------------------------------------------------------------------------
    def on_error(self, error: BaseException) -> None:
        if self._done:
            plugins.on_error(error, "an error after the stream ended")
            return
        self._queue.append((_ERROR, error))
        if enter(self._wip):
            self._drain()

    def on_complete(self) -> None:
        if self._done:
            return
        self._queue.append((_COMPLETE, None))
        if enter(self._wip):
            self._drain()

    def _drain(self) -> None:
        q = self._queue
        missed = 1
        while True:
            while q:
                kind, v = q.popleft()
                if kind == _RUN:
                    if not self._done:
                        _run_guarded(v)
                    continue
                if self._done:
                    if kind == _ERROR:
                        plugins.on_error(v, "an error after the stream ended")
                    continue
                d = self._downstream
                if kind == _NEXT:
                    d.on_next(v)
                elif kind == _ERROR:
                    self._done = True
                    self._downstream = NOOP
                    d.on_error(v)
                else:
                    self._done = True
                    self._downstream = NOOP
                    d.on_complete()
            missed = leave(self._wip, missed)
            if missed == 0:
                return


class Pending:
    """The element a debounce holds until its quiet period (a timer, or the selector's Publisher)
    ends: ``index`` tells a stale timer from the current one; ``emitted`` is read and written inside
    ``SerializedOut`` sections only (race: the timer vs the next element vs completion)."""

    __slots__ = ("value", "index", "emitted")

    def __init__(self, value: Any, index: int) -> None:
        self.value = value
        self.index = index
        self.emitted = False
