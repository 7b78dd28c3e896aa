"""window(boundary): consecutive windows cut by the signals of a boundary Publisher (RxJava 3
``window(Publisher)``).

The first window opens at subscription; each element of ``boundary`` completes the open window and
opens the next one. When the source completes, or the boundary completes, the open window and the
main output complete (the other source is cancelled); an error of either goes to the open window and
the main output. Windows are :class:`~._window.UnicastWindow` s, as for ``window(count)``.

Backpressure (RxJava 3): the source and the boundary are requested unbounded (the boundary is a
clock); opening a window that the main subscriber has not requested cancels both and signals
``MissingBackpressureError``. Each window buffers its elements until its subscriber requests them.

Races and guards: element routing, window rotation and the terminal signals all run inside
:meth:`SerializedOut.run` (race: the source's thread vs the boundary's thread), so an element lands
in exactly one window and a window completes once, after its last element (rule 1.3).

Lifetime, as ``window(count)``: ``_live`` counts the main subscription and every window not yet
released; a window not subscribed while the main ``on_next`` ran is abandoned (released; it keeps its
elements for a late subscriber). Cancelling the main subscription stops the boundary and the opening
of windows, but a subscribed open window keeps receiving elements until the source ends (as
RxJava); the upstream is cancelled when nothing live is left (race: main cancel vs window cancel).
"""

from __future__ import annotations

from typing import Any, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import AtomicFlag
from ..._internal.requests import MAX_DEMAND, request_or_error
from ..._internal.subscriptions import cancel
from ..._spec import Publisher, Subscriber, Subscription
from .._flowable import Flowable
from ._boundary_common import DrivenBase, OtherSubscriber, check_publisher
from ._time_common import none_refused
from ._unicast_group import UnicastGroup
from ._window import _LiveCount, end_serialized_windows, open_serialized_window

__all__ = ["window_boundary"]

T = TypeVar("T")


@final
class _WindowBoundarySubscriber(DrivenBase):
    __slots__ = ("_other", "_window", "_main_cancelled", "_live")

    def __init__(self, downstream: Subscriber[Any]) -> None:
        super().__init__(downstream, "window")
        self._other = OtherSubscriber(self)
        self._window: UnicastGroup | None = None  # the open window (sections only)
        self._main_cancelled = AtomicFlag()
        self._live = _LiveCount(self._cancel_upstream)

    def _cancel_upstream(self) -> None:
        cancel(self._upstream)

    def _dispose_others(self) -> None:
        self._other.dispose()

    # -- inside serialized sections (DrivenBase runs the hooks at the terminal and boundary signals)
    def open_window(self) -> None:
        if self._done or self._main_cancelled.is_set():
            return
        what = "could not emit a new window at a boundary signal"
        self._window = open_serialized_window(self._out, self._live, self._requested, "window", self.cancel_all, what)
        if self._window is None:
            self._done = True

    def _at_signal(self) -> None:
        if self._done:
            return
        w = self._window
        self._window = None
        if w is not None:
            w.on_complete()
        self.open_window()

    def _at_end(self) -> None:
        self._end(None)

    def _at_error(self, error: BaseException) -> None:
        self._end(error)

    def _end(self, error: BaseException | None) -> None:
        if self._done:
            if error is not None:
                plugins.on_error(error, "window: an error after the stream ended")
            return
        self._done = True
        self.cancel_all()
        w = self._window
        self._window = None
        end_serialized_windows(self._out, w, error, self._main_cancelled)

    def _bad_request(self, err: BaseException) -> None:
        # rule 3.9: everything stops; the open window completes with what it got, the main fails
        if self._done:
            plugins.on_error(err, "window: a bad request after the stream ended")
            return
        self._done = True
        self.cancel_all()
        w = self._window
        self._window = None
        if w is not None:
            w.on_complete()
        self._out.emit_error(err)

    def _add(self, item: Any) -> None:
        w = self._window
        if w is not None and not self._done:
            w.on_next(item)

    def _add_batch(self, items: list[Any]) -> None:
        w = self._window
        if w is None or self._done or w.done or w.cancelled:
            return
        push = w.push
        for x in items:
            push(x)
        w.drain()

    # -- source ----------------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if self.set_upstream(subscription):
            subscription.request(MAX_DEMAND)

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        self._out.run(lambda: self._add(item))

    def on_next_batch(self, items: list[Any]) -> None:
        """Library-internal batch protocol (elements already checked): one serialized section and
        one window drain per batch."""
        self._out.run(lambda: self._add_batch(items))

    # -- main subscription -----------------------------------------------------------------------
    def cancel(self) -> None:
        if self._main_cancelled.try_set():
            self._other.dispose()  # no new windows
            self._live.release()
        # rule 3.13, but the serialization stays: a subscribed open window keeps receiving
        # elements (as window_timed)
        self._out.detach()

    def request(self, n: int) -> None:
        err = request_or_error(self._requested, n)
        if err is not None:
            if self._main_cancelled.try_set():  # after a cancel, a request is a no-op (rule 3.6)
                self._live.release()
                self._out.run(lambda: self._bad_request(err))
            return


@final
class _WindowBoundaryFlowable(Flowable[Any]):
    __slots__ = ("_source", "_boundary")

    def __init__(self, source: Flowable[Any], boundary: Publisher[Any]) -> None:
        self._source = source
        self._boundary = boundary

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        parent = _WindowBoundarySubscriber(subscriber)
        parent.subscribe_downstream()
        parent._out.run(parent.open_window)
        self._boundary.subscribe(parent._other)
        self._source.subscribe(parent)


def window_boundary(source: Flowable[T], boundary: Publisher[Any]) -> Flowable[Flowable[T]]:
    check_publisher("window", "boundary", boundary)
    return _WindowBoundaryFlowable(source, boundary)
