"""buffer(openings, closing_selector): possibly overlapping lists, each opened by an element of
``openings`` and closed by the first signal of ``closing_selector(that element)`` (RxJava 3
``buffer(Publisher openingIndicator, Function closingIndicator)``).

* Every element of the source goes into every open list.
* A list is emitted when its closing Publisher signals (first element or completion).
* When the source completes, the open lists are emitted in the order they were opened, then the
  completion. When ``openings`` completes and every open list has closed, the source is cancelled
  and the stream completes.
* An error of the source, of ``openings``, of a closing Publisher or of ``closing_selector``
  (``None`` included, rule 2.13) fails the stream at once, dropping the lists.

Backpressure (RxJava 3): the source, ``openings`` and the closing Publishers are requested
unbounded; closed lists wait in a queue until the downstream requests them (no
``MissingBackpressureError``; memory grows with the lists not yet requested).

Races and guards: ``_lock`` (a ``threading.Lock``) guards the open lists and their closers (race:
the source appending vs a list opening on the ``openings`` thread vs a list closing on its closer's
thread vs a terminal signal); a closed list is queued under that lock too, so lists keep their
closing order. The output is a queue-drain on ``_wip`` (race: a closer or the source queueing vs the
downstream's ``request``/``cancel``); the drain delivers the terminal signal (or a rule 3.9 error)
after the queue, serially (rule 1.3). ``_live`` (an ``AtomicInt``) counts ``openings`` plus every
active closer; whoever brings it to zero (race: the last close vs the completion of ``openings``)
ends the stream. The first error wins an ``AtomicRef``; later ones go to the undeliverable hook.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Final, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import AtomicInt, AtomicRef
from ..._internal.drain import enter, leave
from ..._internal.requests import MAX_DEMAND, produced, request_or_error
from ..._internal.subscriptions import cancel, set_once
from ..._spec import Publisher, Subscriber, Subscription
from .._base import none_result_error
from .._flowable import Flowable
from ._boundary_common import GONE, OtherSubscriber, check_publisher
from ._time_common import none_refused

__all__ = ["buffer_openings"]

T = TypeVar("T")
O = TypeVar("O")  # noqa: E741
_OPENINGS: Final[Any] = object()  # the kind of the openings subscriber (closers carry their index)


@final
class _BufferOpeningsSubscriber:
    _rs_no_wrap = True
    __slots__ = (
        "_downstream",
        "_upstream",
        "_openings",
        "_closing",
        "_open_sub",
        "_lock",
        "_buffers",
        "_closers",
        "_index",
        "_live",
        "_queue",
        "_requested",
        "_wip",
        "_done",
        "_error",
        "_cancelled",
        "_terminated",
        "__weakref__",
    )

    def __init__(
        self, downstream: Subscriber[Any], openings: Publisher[Any], closing: Callable[[Any], Publisher[Any]]
    ) -> None:
        self._downstream = downstream
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)  # race: cancel vs on_subscribe
        self._openings = openings
        self._closing = closing
        self._open_sub = OtherSubscriber(self, _OPENINGS)
        self._lock = threading.Lock()  # guards _buffers, _closers and queueing (module docstring)
        self._buffers: dict[int, list[Any]] | None = {}  # open lists by opening index, in order
        self._closers: dict[int, OtherSubscriber] = {}
        self._index = 0  # the openings thread only
        self._live = AtomicInt(1)  # openings + active closers (race: last close vs openings done)
        self._queue: deque[list[Any]] = deque()  # closed lists waiting for demand
        self._requested = AtomicInt(0)  # race: request vs drain
        self._wip = AtomicInt(0)  # race: queueing threads vs request/cancel (queue-drain)
        self._done = False  # set after the last queueing, before a drain
        self._error: AtomicRef[BaseException | None] = AtomicRef(None)  # the first error wins
        self._cancelled = False
        self._terminated = False  # the drain owner only

    # -- source ----------------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise none_refused("on_subscribe")  # rule 2.13
        if not set_once(self._upstream, subscription, "buffer"):
            return
        self._openings.subscribe(self._open_sub)
        subscription.request(MAX_DEMAND)

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        with self._lock:
            bufs = self._buffers
            if bufs:
                for b in bufs.values():
                    b.append(item)

    def on_next_batch(self, items: list[Any]) -> None:
        """Library-internal batch protocol (elements already checked): one lock acquisition per batch."""
        with self._lock:
            bufs = self._buffers
            if bufs:
                for b in bufs.values():
                    b.extend(items)

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise none_refused("on_error")  # rule 2.13
        self._fail(error)

    def on_complete(self) -> None:
        self._dispose_others()
        with self._lock:
            bufs = self._buffers
            self._buffers = None
            if bufs is None:
                return
            self._queue.extend(bufs.values())  # in opening order
        self._done = True
        self._drain()

    # -- openings and closers ------------------------------------------------------------------
    def other_next(self, other: OtherSubscriber, item: Any) -> None:
        if other.kind is _OPENINGS:
            self._open(item)
        else:
            self._close(other)

    def other_complete(self, other: OtherSubscriber) -> None:
        if other.kind is _OPENINGS:
            self._release()
        else:
            self._close(other)

    def other_error(self, other: OtherSubscriber, error: BaseException) -> None:
        self._fail(error)

    def _open(self, token: Any) -> None:
        try:
            p = self._closing(token)
            if p is None:
                raise none_result_error("buffer", "the closing selector")
            check_publisher("buffer", "the closing selector's result", p)
        except Exception as e:
            self._fail(e)
            return
        idx = self._index
        self._index = idx + 1
        closer = OtherSubscriber(self, idx)
        with self._lock:
            bufs = self._buffers
            if bufs is None:
                return  # terminated or cancelled
            bufs[idx] = []
            self._closers[idx] = closer
        self._live.increment_and_get()
        p.subscribe(closer)

    def _close(self, closer: OtherSubscriber) -> None:
        closer.dispose()
        idx = closer.kind
        with self._lock:
            bufs = self._buffers
            if bufs is None:
                return
            self._closers.pop(idx, None)
            b = bufs.pop(idx, None)
            if b is not None:
                self._queue.append(b)
        self._release()
        self._drain()

    def _release(self) -> None:
        """``openings`` completed or a list closed: at zero nothing can open or close any more."""
        if self._live.decrement_and_get() == 0:
            cancel(self._upstream)
            with self._lock:
                self._buffers = None
            self._done = True
            self._drain()

    def _dispose_others(self) -> None:
        self._open_sub.dispose()
        with self._lock:
            closers = list(self._closers.values())
            self._closers.clear()
        for c in closers:
            c.dispose()

    def _fail(self, error: BaseException) -> None:
        if not self._error.compare_and_set(None, error):
            plugins.on_error(error, "buffer: an error after the stream failed")
            return
        cancel(self._upstream)
        self._dispose_others()
        with self._lock:
            self._buffers = None
        self._done = True
        self._drain()

    # -- downstream ------------------------------------------------------------------------------
    def request(self, n: int) -> None:
        err = request_or_error(self._requested, n)
        if err is not None:
            self._fail(err)  # rule 3.9, delivered by the drain
            return
        self._drain()

    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        cancel(self._upstream)
        self._dispose_others()
        with self._lock:
            self._buffers = None
        self._drain()

    def _drain(self) -> None:
        wip = self._wip
        if not enter(wip):
            return
        missed = 1
        q = self._queue
        requested = self._requested
        while True:
            if self._cancelled:
                q.clear()
                self._downstream = GONE  # rule 3.13
            elif not self._terminated:
                d = self._downstream
                done = self._done  # read before the queue: every list precedes the terminal
                err = self._error.get()
                if done and err is not None:
                    q.clear()
                    self._terminated = True
                    self._downstream = GONE
                    d.on_error(err)
                else:
                    r = requested.get()
                    e = 0
                    while q and (r >= MAX_DEMAND or e < r) and not self._cancelled:
                        d.on_next(q.popleft())
                        e += 1
                    if e and r < MAX_DEMAND:
                        produced(requested, e)
                    if done and not q and not self._cancelled:
                        self._terminated = True
                        self._downstream = GONE
                        d.on_complete()
            missed = leave(wip, missed)
            if missed == 0:
                return


@final
class _BufferOpeningsFlowable(Flowable[list[T]]):
    __slots__ = ("_source", "_openings", "_closing")

    def __init__(
        self, source: Flowable[T], openings: Publisher[Any], closing: Callable[[Any], Publisher[Any]]
    ) -> None:
        self._source = source
        self._openings = openings
        self._closing = closing

    def _subscribe_actual(self, subscriber: Subscriber[list[T]]) -> None:
        parent = _BufferOpeningsSubscriber(subscriber, self._openings, self._closing)
        subscriber.on_subscribe(parent)
        self._source.subscribe(parent)


def buffer_openings(
    source: Flowable[T], openings: Publisher[O], closing_selector: Callable[[O], Publisher[Any]]
) -> Flowable[list[T]]:
    check_publisher("buffer", "openings", openings)
    if not callable(closing_selector):
        raise TypeError(f"buffer(): closing_selector must be callable, got {type(closing_selector).__name__}")
    return _BufferOpeningsFlowable(source, openings, closing_selector)
