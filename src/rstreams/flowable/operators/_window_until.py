"""window_until(predicate, cut_before) and window_while(predicate): windows cut by a predicate
(Reactor's ``windowUntil``/``windowWhile``; RxJava 3 has no such operator).

Windows are :class:`~._window.UnicastWindow` s, as for ``window(count)``: subscribed once, each
buffering what its subscriber has not requested yet.

Which window an element goes to (upstream thread only; Reactor's rules):

* every element first makes sure a window is open: if none is (at the start, or after the last one
  closed) a new one opens and is queued for the main subscriber;
* ``until``: the element goes to the open window; if the predicate is true it closes the window;
* ``until`` with ``cut_before``: if the predicate is true the open window closes (it is empty if the
  very first element matches) and the element goes to a new one;
* ``while``: if the predicate is true the element goes to the open window; if false the window
  closes and the element is dropped (a leading separator, or two in a row, give an empty window).

A window opens only when an element arrives, so completion never emits an empty trailing window.

Backpressure (Reactor's scheme, as ``group_by``): the upstream is asked for ``prefetch`` elements at
the main subscriber's first request and replenished as elements are *consumed*: delivered by a
window to its subscriber (:class:`UnicastGroup`'s ``replenish`` callback, once per drain batch),
dropped (separators; elements for a cancelled window, cleared by that window's drain) or handed to
an abandoned window. Credits are batched (``limit = prefetch - prefetch // 4``) in an ``AtomicInt``
(race: window drains on several threads vs the upstream thread). So at most ``prefetch`` elements
wait in windows; windows wait in a queue for the main subscriber's demand (rule 1.1), and the main
output is a queue-drain (race: upstream thread vs the main subscriber's ``request``/``cancel``).

Elements are pushed into the window's queue and the window drained once per run of elements (one
per element from ``on_next``, one per run within a batch of the library-internal batch protocol).
An element for a window whose subscriber cancelled is dropped and credited by that window's drain,
whether pushed before or after the cancel (race: cancel vs routing, no credit lost). A window
abandoned (not subscribed while the main subscriber's ``on_next`` ran, as ``window(count)``) keeps
its elements for a late subscriber but no longer holds back the upstream: its queued elements are
credited at abandonment, later ones after their drain. Race: an abandonment on another thread (a
window that waited for main demand) vs elements being pushed: the router reads the window's state
after the drain, so an element is credited at least once; at worst twice (the upstream then has a
few more elements in flight, once per window), never lost (lost credits could stall the stream).

Upstream lifetime: as ``window(count)``, ``_live`` counts the main subscription and each window not
yet released; at zero the upstream is cancelled (race: main cancel vs window cancel).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import AtomicInt
from ..._internal.requests import DEFAULT_PREFETCH, MAX_DEMAND, request_or_error
from ..._spec import Subscriber
from .._flowable import Flowable
from ._time_common import check_count
from ._unicast_group import UnicastGroup
from ._window import UnicastWindow, WindowMain

__all__ = ["window_until", "window_while"]

T = TypeVar("T")

_UNTIL: Final = 0
_CUT_BEFORE: Final = 1
_WHILE: Final = 2


@final
class _WindowPredicateSubscriber(WindowMain):
    __slots__ = ("_predicate", "_mode", "_op", "_prefetch", "_limit", "_credit", "_window", "_run", "_run_n")

    def __init__(
        self, downstream: Subscriber[Any], predicate: Callable[[Any], object], mode: int, prefetch: int, op: str
    ) -> None:
        WindowMain.__init__(self, downstream)  # _first: the prefetch is requested once
        self._predicate = predicate
        self._mode = mode
        self._op = op
        self._prefetch = prefetch
        self._limit = prefetch - (prefetch >> 2)
        self._credit = AtomicInt(0)  # consumed, not yet re-requested (race: window drains vs upstream thread)
        self._window: UnicastGroup | None = None  # the open window (upstream thread only)
        self._run: UnicastGroup | None = None  # the window with pushed, undrained elements (upstream thread)
        self._run_n = 0

    # -- credits ---------------------------------------------------------------------------------
    def consumed(self, n: int) -> None:
        """``n`` elements left the windows (delivered, dropped, or abandoned): replenish in batches."""
        if n <= 0 or self._prefetch >= MAX_DEMAND:
            return
        c = self._credit
        if c.add_and_get(n) >= self._limit:
            k = c.get_and_set(0)
            if k > 0:
                self._upstream.request(k)

    # -- upstream side ---------------------------------------------------------------------------
    def _open(self) -> UnicastGroup | None:
        """Open a new window and queue it for the main subscriber (upstream thread)."""
        if self._main_cancelled.is_set():
            return None
        w: UnicastWindow[Any] = UnicastWindow(self._live.release)
        ws = w._state
        ws.replenish = self.consumed
        self._live.add()
        self._window = ws
        self._out.append(w)
        self._drain()
        return ws

    def _push(self, ws: UnicastGroup, item: Any) -> None:
        """Queue ``item`` in ``ws``; the run of pushed elements is drained by :meth:`_flush`.

        Push and drain, not ``UnicastGroup.on_next`` (which drops the element of a cancelled
        window uncounted): a window's drain clears and credits whatever its cancelled subscriber
        left, pushed before or after the cancel, so no credit is lost (race: cancel vs routing)."""
        run = self._run
        if run is not ws:
            if run is not None:
                self._flush()
            self._run = ws
        ws.push(item)
        self._run_n += 1

    def _flush(self) -> None:
        ws = self._run
        if ws is None:
            return
        n = self._run_n
        self._run = None
        self._run_n = 0
        ws.drain()
        # read after the drain (module docstring): an abandoned window's elements do not hold back
        # the upstream; an abandonment racing the push may count some of them twice, never none
        if ws.replenish is None:
            self.consumed(n)

    def _close(self, ws: UnicastGroup) -> None:
        self._window = None
        self._flush()
        ws.on_complete()

    def _step(self, item: Any) -> bool:
        """Route one element (upstream thread); False once the stream failed."""
        try:
            match = self._predicate(item)
        except Exception as e:
            self._flush()
            self._upstream.cancel()
            self._terminate(e)
            return False
        ws = self._window
        if ws is None:
            ws = self._open()
            if ws is None:
                return True  # the main subscriber left: no new windows (the upstream goes with _live)
        mode = self._mode
        if mode == _UNTIL:
            self._push(ws, item)
            if match:
                self._close(ws)
        elif mode == _CUT_BEFORE:
            if match:
                self._close(ws)
                ws2 = self._open()
                if ws2 is None:
                    return True
                ws = ws2
            self._push(ws, item)
        elif match:
            self._push(ws, item)
        else:
            self._close(ws)
            self.consumed(1)  # the separator is dropped
        return True

    def on_next(self, item: Any) -> None:
        if self._done:
            return
        self._step(item)
        self._flush()

    def on_next_batch(self, items: list[Any]) -> None:
        """Library-internal batch protocol: the same steps as :meth:`on_next`, with one window
        drain per run of elements for the same window instead of one per element."""
        if self._done:
            return
        step = self._step
        for item in items:
            if not step(item):
                return
        self._flush()

    def on_error(self, error: BaseException) -> None:
        if self._done:
            plugins.on_error(error, f"{self._op}: on_error after termination")
            return
        self._terminate(error)

    def on_complete(self) -> None:
        if self._done:
            return
        self._terminate(None)

    def _terminate(self, error: BaseException | None) -> None:
        self._done = True
        self._error = error
        ws = self._window
        self._window = None
        if ws is not None:
            if error is None:
                ws.on_complete()
            else:
                ws.on_error(error)
        self._drain()

    # -- main subscription -----------------------------------------------------------------------
    def request(self, n: int) -> None:
        err = request_or_error(self._requested, n)
        if err is not None:
            self._refuse(err)
            return
        if not self._first.is_set() and self._first.try_set():
            self._upstream.request(self._prefetch)
        self._drain()

    def _abandoned(self, ws: UnicastGroup) -> None:
        # nobody subscribed: it no longer holds back nor keeps the upstream alive
        ws.replenish = None
        q = ws.q
        self.consumed(len(q) if q else 0)
        ws.release()


@final
class _WindowPredicateFlowable(Flowable[Any]):
    __slots__ = ("_source", "_predicate", "_mode", "_prefetch", "_op")

    def __init__(
        self, source: Flowable[Any], predicate: Callable[[Any], object], mode: int, prefetch: int, op: str
    ) -> None:
        self._source = source
        self._predicate = predicate
        self._mode = mode
        self._prefetch = prefetch
        self._op = op

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        self._source.subscribe(
            _WindowPredicateSubscriber(subscriber, self._predicate, self._mode, self._prefetch, self._op)
        )


def _check(op: str, predicate: object, prefetch: object) -> int:
    if not callable(predicate):
        raise TypeError(f"{op}(): predicate must be callable, got {type(predicate).__name__}")
    return min(check_count(op, prefetch, "prefetch"), MAX_DEMAND)


def window_until(
    source: Flowable[T], predicate: Callable[[T], object], cut_before: bool = False, prefetch: int = DEFAULT_PREFETCH
) -> Flowable[Flowable[T]]:
    p = _check("window_until", predicate, prefetch)
    if not isinstance(cut_before, bool):
        raise TypeError(f"window_until(): cut_before must be a bool, got {type(cut_before).__name__}")
    mode = _CUT_BEFORE if cut_before else _UNTIL
    return _WindowPredicateFlowable(source, predicate, mode, p, "window_until")


def window_while(source: Flowable[T], predicate: Callable[[T], object], prefetch: int = DEFAULT_PREFETCH) -> Flowable[Flowable[T]]:
    p = _check("window_while", predicate, prefetch)
    return _WindowPredicateFlowable(source, predicate, _WHILE, p, "window_while")
