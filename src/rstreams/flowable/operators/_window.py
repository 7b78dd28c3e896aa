"""window(count, skip) and window_timed(duration, count): split a stream into windows (Flowables).

Each window is a :class:`UnicastWindow`: a Flowable that can be subscribed once, with its own queue,
demand and wip drain (race: the producer's ``on_next`` vs the window subscriber's
``request``/``cancel`` on another thread). It buffers what its subscriber has not requested yet. The
queue-drain is a :class:`UnicastGroup` (``_unicast_group.py``, shared with ``group_by``'s groups),
which documents its guards.

``window(count, skip)``: a new window opens every ``skip`` elements and closes after ``count``
elements. Backpressure: ``request(n)`` windows asks the upstream for ``count + skip * (n - 1)``
elements the first time and ``skip * n`` afterwards, so each window is buffered at most ``count``
elements ahead of its subscriber and, for ``skip >= count``, windows never open without demand. With
overlapping windows (``skip < count``) more windows can open than were requested: they wait in a queue
and the main output is a queue-drain (race: upstream thread vs the downstream's ``request``).

``window_timed(duration, count)``: consecutive windows closed by a periodic timer (or, with
``count``, when full: the timer restarts). The upstream is requested unbounded (time cannot be slowed
down); opening a window without demand ends the stream with ``MissingBackpressureError``. Race:
timer close vs on_next: every state change runs inside :meth:`SerializedOut.run`, so an element
lands in exactly one window and a window is closed exactly once, after its last element.

``window(boundary)`` (a Publisher as the first argument) is ``_window_boundary.py``; the predicate
windows ``window_until``/``window_while`` are ``_window_until.py``.

Windows that are emitted but never subscribed do not keep the upstream alive: the upstream is
cancelled when the main subscription is cancelled and every *subscribed* window is cancelled or done
(``_live``, an ``AtomicInt``: race: main cancel vs window cancel). A window not subscribed by the
time the main ``on_next`` returned is "abandoned" (it still buffers its elements for a late
subscriber, at most ``count``). Windows opened but not yet emitted (overlapping windows waiting for
main demand) when the main subscription is cancelled can never be subscribed: they are cancelled.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import AtomicFlag, AtomicInt
from ..._internal.drain import enter, leave
from ..._internal.requests import MAX_DEMAND, add_cap, mul_cap, produced, request_or_error
from ..._internal.subscriptions import CANCELLED
from ..._spec import Publisher, Subscriber, Subscription
from ...schedulers import Scheduler, Worker
from .._flowable import Flowable
from ._boundary_common import GONE
from ._time_common import (
    SerializedOut,
    check_count,
    check_duration,
    missing_backpressure,
    resolve_scheduler,
)
from ._timed_chunks import TimedChunks
from ._unicast_group import UnicastGroup

__all__ = ["window", "window_timed", "UnicastWindow", "WindowMain", "open_serialized_window", "end_serialized_windows"]

T = TypeVar("T")


class UnicastWindow(Flowable[T]):
    """A window: a Flowable subscribed at most once, buffering until its subscriber requests.

    ``on_cancel`` runs once when the window stops keeping the upstream alive: its subscriber
    cancelled, it completed or failed, or it was abandoned (:meth:`release`). The queue, demand and
    drain are a :class:`UnicastGroup` (shared with ``group_by``); the operators here feed it
    directly (``_state``), other producers through :meth:`on_next` and the terminal methods.
    """

    __slots__ = ("_state",)

    def __init__(self, on_cancel: Callable[[], Any]) -> None:
        self._state = _WindowState(on_cancel)

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._state.subscribe(subscriber)

    def release(self) -> None:
        """This window no longer keeps the upstream alive (cancelled, done or abandoned): once."""
        self._state.release()

    def try_abandon(self) -> bool:
        return self._state.try_abandon()

    # -- producer side (serialized by the producer) ---------------------------------------------
    def on_next(self, item: Any) -> None:
        self._state.on_next(item)

    def on_error(self, error: BaseException) -> None:
        self._state.on_error(error)

    def on_complete(self) -> None:
        self._state.on_complete()


@final
class _WindowState(UnicastGroup):
    """A window's queue, Subscription and drain; terminating it releases it."""

    __slots__ = ()
    release_when_done = True
    delay_error = True  # a window's queued elements precede the upstream's error (RxJava)

    def _subscribed_twice(self) -> str:
        return "a window can be subscribed only once"


class _LiveCount:
    """The main subscription plus each subscribed, open window; at 0 the upstream is cancelled."""

    __slots__ = ("_live", "_cancel_upstream")

    def __init__(self, cancel_upstream: Callable[[], Any]) -> None:
        self._live = AtomicInt(1)  # race: main cancel vs window cancel (one cancels the upstream)
        self._cancel_upstream = cancel_upstream

    def add(self) -> None:
        self._live.increment_and_get()

    def release(self) -> None:
        if self._live.decrement_and_get() == 0:
            self._cancel_upstream()


# ---------------------------------------------------------------------------------------------
# Windows emitted inside SerializedOut sections (window_timed, window(boundary)): a window opens
# at a clock or boundary signal, never waits for main demand (RxJava 3: MissingBackpressureError)


def open_serialized_window(
    out: SerializedOut,
    live: _LiveCount,
    requested: AtomicInt,
    op: str,
    stop: Callable[[], Any],
    what: str = "could not emit a new window",
) -> UnicastGroup | None:
    """Inside a section: emit a new window counted in ``live`` and return its state (the open
    window); without main demand, ``stop()`` the sources, signal ``MissingBackpressureError``
    naming ``op`` and return None (the stream is over: the caller marks itself done). A window
    nobody subscribed during the main ``on_next`` is released at once: it does not keep the
    upstream alive."""
    if requested.get() == 0:
        stop()
        out.emit_error(missing_backpressure(op, what))
        return None
    w: UnicastWindow[Any] = UnicastWindow(live.release)
    live.add()
    ws = w._state
    out.emit_next(w)
    if ws.try_abandon():
        ws.release()
    if requested.get() < MAX_DEMAND:
        produced(requested, 1)
    return ws


def end_serialized_windows(
    out: SerializedOut, window: UnicastGroup | None, error: BaseException | None, main_cancelled: AtomicFlag
) -> None:
    """Inside a section, once: the open ``window`` (if any), then the main output, get the
    terminal signal. An error the open window received is not undeliverable when the main
    subscriber left."""
    if error is None:
        if window is not None:
            window.on_complete()
        out.emit_complete()
        return
    if window is not None:
        window.on_error(error)
        if main_cancelled.is_set():
            return
    out.emit_error(error)


class WindowMain:
    """The main output of the operators that emit windows under main demand (``window(count,
    skip)``, ``window_until``/``window_while``): opened windows wait in ``_out`` and a queue-drain
    (race: the upstream thread vs the downstream's ``request``) emits them as demand allows.

    A window nobody subscribed by the time the main ``on_next`` returned is abandoned
    (:meth:`_abandoned`). A rule 3.9 error is delivered by the drain owner (:meth:`_refuse`), serial
    with the windows the drain emits on the upstream thread (rule 1.3). Subclasses set their
    ``__slots__`` and call ``WindowMain.__init__``.
    """

    _rs_no_wrap = True
    __slots__ = (
        "_downstream",
        "_upstream",
        "_out",
        "_requested",
        "_wip",
        "_first",
        "_main_cancelled",
        "_live",
        "_done",
        "_error",
        "_terminated",
        "_bad",
        "__weakref__",
    )

    def __init__(self, downstream: Subscriber[Any]) -> None:
        self._downstream: Subscriber[Any] = downstream
        self._upstream: Subscription = CANCELLED
        self._out: deque[UnicastWindow[Any]] = deque()  # windows waiting for main demand
        self._requested = AtomicInt(0)  # race: request vs drain
        self._wip = AtomicInt(0)  # race: upstream thread vs request thread (main queue-drain)
        self._first = AtomicFlag()  # race: concurrent first requests
        self._main_cancelled = AtomicFlag()
        self._live = _LiveCount(self._cancel_upstream)
        self._done = False
        self._error: BaseException | None = None
        self._terminated = False  # touched only by the drain owner
        self._bad: BaseException | None = None  # a rule 3.9 error, delivered by the drain

    def _cancel_upstream(self) -> None:
        self._upstream.cancel()

    def on_subscribe(self, subscription: Subscription) -> None:
        if self._upstream is not CANCELLED:
            subscription.cancel()  # rule 2.5
            return
        self._upstream = subscription
        self._downstream.on_subscribe(self)

    def request(self, n: int) -> None:  # pragma: no cover - every subclass translates demand
        raise NotImplementedError

    def _refuse(self, error: BaseException) -> None:
        """A bad ``request`` amount (rule 3.9): the drain owner signals it."""
        self._bad = error
        if self._main_cancelled.try_set():
            self._live.release()
        self._drain()

    def cancel(self) -> None:
        if self._main_cancelled.try_set():
            self._downstream = GONE  # rule 3.13
            self._live.release()
            self._drain()

    def _abandoned(self, ws: UnicastGroup) -> None:
        """An emitted window nobody subscribed: it no longer keeps the upstream alive."""
        ws.release()

    def _drain(self) -> None:
        wip = self._wip
        if not enter(wip):
            return
        missed = 1
        out = self._out
        requested = self._requested
        while True:
            if self._main_cancelled.is_set():
                # windows opened but never emitted can never be subscribed now: cancel them, so
                # they stop keeping the upstream alive (_live; their drains credit what they hold)
                while out:
                    out.popleft()._state.cancel()
                bad = self._bad
                if bad is not None and not self._terminated:
                    self._terminated = True
                    d = self._downstream
                    self._downstream = GONE  # rule 3.13
                    d.on_error(bad)
            elif not self._terminated:
                d = self._downstream
                done = self._done
                if done and self._error is not None:
                    out.clear()
                r = requested.get()
                e = 0
                while out and (r >= MAX_DEMAND or e < r):
                    w = out.popleft()
                    d.on_next(w)
                    e += 1
                    ws = w._state
                    if ws.try_abandon():
                        self._abandoned(ws)
                if e and r < MAX_DEMAND:
                    produced(requested, e)
                if done and not out:
                    self._terminated = True
                    self._downstream = GONE
                    if self._error is None:
                        d.on_complete()
                    else:
                        d.on_error(self._error)
            missed = leave(wip, missed)
            if missed == 0:
                return


# ---------------------------------------------------------------------------------------------
# window(count, skip)


@final
class _WindowSubscriber(WindowMain):
    __slots__ = ("_count", "_skip", "_open", "_index")

    def __init__(self, downstream: Subscriber[Any], count: int, skip: int) -> None:
        WindowMain.__init__(self, downstream)
        self._count = count
        self._skip = skip
        self._open: deque[list[Any]] = deque()  # [window state, size] of the open windows (upstream thread)
        self._index = 0

    def on_next(self, item: Any) -> None:
        if self._done:
            return
        i = self._index
        self._index = i + 1
        opened = self._open
        if i % self._skip == 0 and not self._main_cancelled.is_set():
            w: UnicastWindow[Any] = UnicastWindow(self._live.release)
            self._live.add()
            opened.append([w._state, 0])
            self._out.append(w)
            self._drain()
        for entry in opened:
            entry[0].on_next(item)
            entry[1] += 1
        if opened and opened[0][1] >= self._count:
            opened.popleft()[0].on_complete()

    def on_error(self, error: BaseException) -> None:
        if self._done:
            plugins.on_error(error, "window: on_error after termination")
            return
        self._error = error
        self._terminate()

    def on_complete(self) -> None:
        if self._done:
            return
        self._terminate()

    def _terminate(self) -> None:
        self._done = True
        e = self._error
        while self._open:
            w = self._open.popleft()[0]
            if e is None:
                w.on_complete()
            else:
                w.on_error(e)
        self._drain()

    def request(self, n: int) -> None:
        err = request_or_error(self._requested, n)
        if err is not None:
            self._refuse(err)
            return
        if self._first.try_set():
            self._upstream.request(add_cap(self._count, mul_cap(self._skip, n - 1)))
        else:
            self._upstream.request(mul_cap(self._skip, n))
        self._drain()


@final
class _WindowFlowable(Flowable[Any]):
    __slots__ = ("_source", "_count", "_skip")

    def __init__(self, source: Flowable[Any], count: int, skip: int) -> None:
        self._source = source
        self._count = count
        self._skip = skip

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        self._source.subscribe(_WindowSubscriber(subscriber, self._count, self._skip))


def window(source: Flowable[T], count: int | Publisher[Any], skip: int | None = None) -> Flowable[Flowable[T]]:
    if not isinstance(count, int) and hasattr(count, "subscribe"):
        if skip is not None:
            raise TypeError("window(): a boundary Publisher takes no skip")
        from ._window_boundary import window_boundary  # it imports this module

        return window_boundary(source, count)
    c = check_count("window", count)
    s = c if skip is None else check_count("window", skip, "skip")
    return _WindowFlowable(source, c, s)


# ---------------------------------------------------------------------------------------------
# window_timed(duration, count)


@final
class _WindowTimedSubscriber(TimedChunks):
    __slots__ = ("_window", "_size", "_main_cancelled", "_live")

    def __init__(
        self, downstream: Subscriber[Any], worker: Worker, duration: float, count: int | None
    ) -> None:
        # _requested (TimedBase): race: request vs window opening
        super().__init__(downstream, worker, "window_timed", duration, count)
        self._window: UnicastGroup | None = None  # the open window's state; inside serialized sections only
        self._size = 0
        self._main_cancelled = AtomicFlag()
        self._live = _LiveCount(self._stop)

    def _stop(self) -> None:
        self._upstream.cancel()
        self._worker.dispose()

    def _begin(self) -> None:
        self._out.run(self._open_window)

    def _open_window(self) -> None:
        # inside a serialized section
        if self._done or self._main_cancelled.is_set():
            return
        self._size = 0
        self._window = open_serialized_window(self._out, self._live, self._requested, "window_timed", self._stop)
        if self._window is None:
            self._done = True

    def _close_window(self) -> None:
        w = self._window
        self._window = None
        if w is not None:
            w.on_complete()

    def _rotate(self) -> None:
        self._close_window()
        self._open_window()

    def _on_item(self, item: Any) -> None:
        w = self._window
        if w is None or self._done:
            return
        w.on_next(item)
        c = self._count
        if c is not None:
            self._size += 1
            if self._size >= c:
                self._full()

    def _ended(self, error: BaseException | None) -> None:
        w = self._window
        self._window = None
        end_serialized_windows(self._out, w, error, self._main_cancelled)

    def request(self, n: int) -> None:
        err = request_or_error(self._requested, n)
        if err is not None:
            self.cancel_quietly()
            self._out.on_error(err)  # rule 3.9
            return

    def cancel_quietly(self) -> None:
        if self._main_cancelled.try_set():
            self._live.release()

    def cancel(self) -> None:
        self.cancel_quietly()
        # rule 3.13, but the serialization stays: a subscribed open window keeps receiving elements
        # until its time is up (then no new window opens and, with no live window left, _live
        # cancels the upstream), as RxJava's window(time). release() would strand that window.
        self._out.detach()


@final
class _WindowTimedFlowable(Flowable[Any]):
    __slots__ = ("_source", "_duration", "_count", "_scheduler")

    def __init__(
        self, source: Flowable[Any], duration: float, count: int | None, scheduler: Scheduler
    ) -> None:
        self._source = source
        self._duration = duration
        self._count = count
        self._scheduler = scheduler

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        w = self._scheduler.create_worker()
        self._source.subscribe(_WindowTimedSubscriber(subscriber, w, self._duration, self._count))


def window_timed(
    source: Flowable[T], duration: float, count: int | None = None, scheduler: Scheduler | None = None
) -> Flowable[Flowable[T]]:
    d = check_duration("window_timed", duration, positive=True)
    c = None if count is None else check_count("window_timed", count)
    return _WindowTimedFlowable(source, d, c, resolve_scheduler("window_timed", scheduler))
