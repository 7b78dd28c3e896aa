"""TimedChunks: the timer plumbing shared by buffer_timed and window_timed.

Both cut the stream into consecutive chunks (lists, windows) closed by a periodic timer or, with
``count``, as soon as a chunk is full (then the timer restarts so the next chunk gets a full period).
The upstream is requested unbounded (time cannot be slowed down).

Race: timer close vs on_next vs on_complete: every state change and emission runs inside
:meth:`SerializedOut.run` (``_out``), so each element lands in exactly one chunk, a chunk is closed
exactly once, after its last element, and nothing overlaps (rule 1.3). A restarted timer carries a
generation number (``_gen``); a stale tick of the previous timer is ignored.

The subclass keeps its per-element step (``_on_item``), its terminal step (``_end``), ``request``
and ``cancel``, and says how a chunk is closed and the next one started (``_rotate``).
"""

from __future__ import annotations

from typing import Any, Final

from ..._internal.atomics import AtomicInt
from ..._internal.requests import MAX_DEMAND
from ..._internal.subscriptions import CANCELLED
from ..._spec import Subscriber, Subscription
from ...schedulers import Worker
from ._time_common import NOOP, SerializedOut

__all__ = ["TimedChunks"]

_MAX: Final = MAX_DEMAND


class TimedChunks:
    """The upstream side and timer of a time/size-chunking operator (see the module docstring)."""

    _rs_no_wrap = True
    __slots__ = (
        "_out",
        "_downstream_ref",
        "_upstream",
        "_worker",
        "_duration",
        "_count",
        "_requested",
        "_gen",
        "_timer",
        "_done",
        "__weakref__",
    )

    def __init__(
        self, downstream: Subscriber[Any], worker: Worker, duration: float, count: int | None
    ) -> None:
        self._out = SerializedOut(downstream)  # race: timer close vs on_next (module docstring)
        self._downstream_ref: Subscriber[Any] = downstream
        self._upstream: Subscription = CANCELLED
        self._worker = worker
        self._duration = duration
        self._count = count
        self._requested = AtomicInt(0)  # race: request (downstream thread) vs emission
        self._gen = 0  # the current timer's generation (inside serialized sections only)
        self._timer: Any = None
        self._done = False

    # -- hooks ---------------------------------------------------------------------------------
    def _begin(self) -> None:
        """After the downstream's on_subscribe, before the timer starts (window_timed: first window)."""

    def _rotate(self) -> None:
        """Close the current chunk and start the next one (inside a serialized section)."""
        raise NotImplementedError

    def _on_item(self, item: Any) -> None:
        """Add ``item`` to the current chunk; call :meth:`_full` when it holds ``count`` (serialized)."""
        raise NotImplementedError

    def _end(self, error: BaseException | None) -> None:
        """The upstream terminated (inside a serialized section)."""
        raise NotImplementedError

    # the downstream's Subscription: the subclass's
    def request(self, n: int) -> None:
        raise NotImplementedError

    def cancel(self) -> None:
        raise NotImplementedError

    # -- upstream side -------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if self._upstream is not CANCELLED:
            subscription.cancel()  # rule 2.5
            return
        self._upstream = subscription
        d = self._downstream_ref
        self._downstream_ref = NOOP  # only needed for on_subscribe; SerializedOut holds it
        d.on_subscribe(self)
        self._begin()
        if not self._done:
            self._start_timer()
            subscription.request(_MAX)

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
        if not self._done:
            self._out.run(lambda: self._on_item(item))

    def on_error(self, error: BaseException) -> None:
        self._out.run(lambda: self._end(error))

    def on_complete(self) -> None:
        self._out.run(lambda: self._end(None))
