"""TimedBase and TimedChunks: the plumbing shared by the time-driven operators.

:class:`TimedBase` (debounce, sample, throttle_first, throttle_latest, and below buffer_timed and
window_timed): the upstream is requested unbounded (time cannot be slowed down), the downstream's
demand is an ``AtomicInt`` (race: ``request`` on the downstream thread vs an emission on the timer or
upstream thread), and every signal goes through a :class:`SerializedOut` (race: the Scheduler worker's
thread vs the upstream thread, rule 1.3). Emitting without demand cancels the upstream and signals
``MissingBackpressureError`` naming the operator (RxJava 3). Cancelling disposes the worker: no timer
survives (rule 3.13: the downstream is dropped).

:class:`TimedChunks` (buffer_timed, window_timed) cuts the stream into consecutive chunks (lists,
windows) closed by a periodic timer or, with ``count``, as soon as a chunk is full (then the timer
restarts so the next chunk gets a full period). Race: timer close vs on_next vs on_complete: every
state change and emission runs inside :meth:`SerializedOut.run` (``_out``), so each element lands in
exactly one chunk, a chunk is closed exactly once, after its last element, and nothing overlaps
(rule 1.3). A restarted timer carries a generation number (``_gen``); a stale tick of the previous
timer is ignored. The subclass keeps its per-element step (``_on_item``) and its ``request``, and
says how a chunk is closed and the next one started (``_rotate``) and how the last one ends
(``_ended``).
"""

from __future__ import annotations

from typing import Any

from ..._internal import plugins
from ..._internal.atomics import AtomicInt
from ..._internal.requests import MAX_DEMAND, produced, request_or_error
from ..._internal.subscriptions import CANCELLED
from ..._spec import Subscriber, Subscription
from ...schedulers import Worker
from ._time_common import NOOP, SerializedOut, missing_backpressure, none_refused

__all__ = ["TimedBase", "TimedChunks"]



class TimedBase:
    """Common plumbing: upstream requested unbounded, downstream demand in an AtomicInt (module docstring)."""

    _rs_no_wrap = True
    __slots__ = (
        "_out",
        "_downstream_ref",
        "_upstream",
        "_worker",
        "_requested",
        "_done",
        "_op",
        "__weakref__",
    )

    def __init__(self, downstream: Subscriber[Any], worker: Worker, op: str) -> None:
        self._out = SerializedOut(downstream)  # race: timer thread vs upstream thread (rule 1.3)
        self._downstream_ref: Subscriber[Any] = downstream
        self._upstream: Subscription = CANCELLED
        self._worker = worker
        self._requested = AtomicInt(0)  # race: request (downstream thread) vs emission (timer/upstream)
        self._done = False
        self._op = op

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise none_refused("on_subscribe")  # rule 2.13
        if self._upstream is not CANCELLED:
            subscription.cancel()  # rule 2.5
            return
        self._upstream = subscription
        d = self._downstream_ref
        self._downstream_ref = NOOP  # only needed for on_subscribe; SerializedOut holds it
        d.on_subscribe(self)
        self._started(subscription)

    def _started(self, subscription: Subscription) -> None:
        """After the downstream's on_subscribe: request the upstream unbounded."""
        subscription.request(MAX_DEMAND)

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise none_refused("on_error")  # rule 2.13
        if self._done:
            return
        self._done = True
        self._worker.dispose()
        self._out.on_error(error)

    def request(self, n: int) -> None:
        err = request_or_error(self._requested, n)
        if err is not None:
            self.cancel_all()
            self._out.on_error(err)  # rule 3.9
            return

    def cancel_all(self) -> None:
        self._done = True
        self._upstream.cancel()
        self._worker.dispose()

    def cancel(self) -> None:
        self.cancel_all()
        self._out.release()  # rule 3.13

    def try_emit(self, item: Any, what: str) -> bool:
        """Emit if there is demand; otherwise fail with MissingBackpressureError.

        Only inside a ``SerializedOut.run`` section (it emits directly)."""
        r = self._requested
        if r.get() != 0:
            self._out.emit_next(item)
            if r.get() < MAX_DEMAND:
                produced(r, 1)
            return True
        self.cancel_all()
        self._out.emit_error(missing_backpressure(self._op, f"could not emit {what}"))
        return False


class TimedChunks(TimedBase):
    """The upstream side and timer of a time/size-chunking operator (see the module docstring)."""

    __slots__ = ("_duration", "_count", "_gen", "_timer")

    def __init__(
        self, downstream: Subscriber[Any], worker: Worker, op: str, duration: float, count: int | None
    ) -> None:
        super().__init__(downstream, worker, op)
        self._duration = duration
        self._count = count
        self._gen = 0  # the current timer's generation (inside serialized sections only)
        self._timer: Any = None

    # -- hooks ---------------------------------------------------------------------------------
    def _begin(self) -> None:
        """After the downstream's on_subscribe, before the timer starts (window_timed: first window)."""

    def _rotate(self) -> None:
        """Close the current chunk and start the next one (inside a serialized section)."""
        raise NotImplementedError

    def _on_item(self, item: Any) -> None:
        """Add ``item`` to the current chunk; call :meth:`_full` when it holds ``count`` (serialized)."""
        raise NotImplementedError

    def _ended(self, error: BaseException | None) -> None:
        """The upstream terminated, the worker is disposed: close the last chunk and signal the
        terminal (inside a serialized section)."""
        raise NotImplementedError

    # -- upstream side -------------------------------------------------------------------------
    def _started(self, subscription: Subscription) -> None:
        self._begin()
        if not self._done:
            self._start_timer()
            subscription.request(MAX_DEMAND)

    def _start_timer(self) -> None:
        g = self._gen
        t = self._timer
        if t is not None:
            t.dispose()
        self._timer = self._worker.schedule_periodic(
            lambda: self._out.run(lambda: self._tick(g)), self._duration, self._duration
        )

    def _tick(self, gen: int) -> None:
        if gen != self._gen or self._done:
            return  # a stale tick of a restarted timer
        self._rotate()

    def _full(self) -> None:
        """The current chunk holds ``count`` elements: rotate now and restart the timer (serialized)."""
        self._gen += 1
        self._rotate()
        if not self._done:
            self._start_timer()

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        if not self._done:
            self._out.run(lambda: self._on_item(item))

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise none_refused("on_error")  # rule 2.13
        self._out.run(lambda: self._end(error))

    def on_complete(self) -> None:
        self._out.run(lambda: self._end(None))

    def _end(self, error: BaseException | None) -> None:
        if self._done:
            if error is not None:
                plugins.on_error(error, f"{self._op}: on_error after termination")
            return
        self._done = True
        self._worker.dispose()
        self._ended(error)
