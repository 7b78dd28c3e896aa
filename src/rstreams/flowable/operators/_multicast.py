"""Multicast operators: ``publish``, ``replay``, ``share``, ``cache`` and :class:`ConnectableFlowable`
with ``connect``, ``ref_count`` and ``auto_connect`` (RxJava 3 semantics).

A :class:`ConnectableFlowable` holds the *current connection*: a processor created on demand (a
lockstep :class:`~rstreams.processors.MulticastProcessor` with a prefetch of 128 for ``publish``, a
:class:`~rstreams.processors.ReplayProcessor` for ``replay``). Subscribers join the current
connection; ``connect()`` subscribes the processor to the source once per connection. A connection
whose processor terminated, or that was disposed, is replaced by a fresh one at the next
``connect()``; until then late subscribers receive what that processor gives late subscribers (the
terminal signal for ``publish``; the retained items and the terminal signal for ``replay``).

Races and guards:

* the current connection is an AtomicRef replaced with compare-and-set (race: subscribe vs
  connect vs reset/dispose from several threads);
* "connect once per connection" is an AtomicFlag (race: two connect() calls);
* ``ref_count``'s bookkeeping (subscriber count, connected flag, the connection's Disposable) is one
  small critical section under a lock that is never held while subscribing, connecting, disposing
  or signalling (race: the n-th subscribe vs the last cancel vs the upstream's terminal signal);
* ``auto_connect`` counts subscribers with an AtomicInt; the n-th one connects (once).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar, final

from ..._internal.arguments import non_negative_int
from ..._internal.atomics import AtomicFlag, AtomicInt, AtomicRef
from ..._internal.subscribers import Disposable
from ..._spec import Subscriber
from .._base import BasicSubscriber
from .._flowable import Flowable

__all__ = ["ConnectableFlowable", "publish", "replay", "share", "cache"]

T = TypeVar("T")


@final
class _Connection(Generic[T]):
    """One connection of a ConnectableFlowable: its processor; a Disposable that disconnects."""

    __slots__ = ("owner", "processor", "connected", "disposed")

    def __init__(self, owner: ConnectableFlowable[T], processor: Any) -> None:
        self.owner = owner
        self.processor = processor
        self.connected = AtomicFlag()  # the source is subscribed once (race: two connect() calls)
        self.disposed = AtomicFlag()

    def detach(self) -> None:
        """Stop being the current connection (new subscribers get a fresh one); no signal, no cancel."""
        self.owner._current.compare_and_set(self, None)

    def dispose(self) -> None:
        if self.disposed.try_set():
            self.detach()
            self.processor._disconnect()

    @property
    def is_disposed(self) -> bool:
        p = self.processor
        return self.disposed.is_set() or p.has_complete or p.has_throwable

    def __repr__(self) -> str:
        return f"Connection({self.processor!r}, disposed={self.is_disposed})"


class ConnectableFlowable(Flowable[T]):
    """A Flowable that starts emitting when :meth:`connect` is called, shared by its subscribers.

    Example::

        cf = Flowable.range(0, 3).publish()          # or publish(Flowable.range(0, 3))
        a, b = cf.test(), cf.test()
        cf.connect()
        a.assert_result(0, 1, 2); b.assert_result(0, 1, 2)

    Backpressure: that of the backing processor (lockstep with a prefetch of 128 for ``publish``;
    each subscriber at its own pace for ``replay``).

    Scheduler: the source runs on the thread that calls :meth:`connect` (or on which ``ref_count``/
    ``auto_connect`` connect: the thread of the subscriber that triggers it).
    """

    __slots__ = ("_source", "_factory", "_current")

    def __init__(self, source: Flowable[T], factory: Callable[[], Any]) -> None:
        self._source = source
        self._factory = factory
        self._current: AtomicRef[_Connection[T] | None] = AtomicRef(
            None
        )  # race: subscribe vs connect vs reset

    def _current_or_fresh(self, replace_disposed: bool) -> _Connection[T]:
        while True:
            conn = self._current.get()
            if conn is not None and not (replace_disposed and conn.is_disposed):
                return conn
            fresh: _Connection[T] = _Connection(self, self._factory())
            if self._current.compare_and_set(conn, fresh):
                return fresh

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._current_or_fresh(False).processor._subscribe_actual(subscriber)

    def connect(self, on_connect: Callable[[Disposable], Any] | None = None) -> Disposable:
        """Subscribe the current connection to the source (once); return a Disposable that
        disconnects (cancels the upstream). ``on_connect`` receives that Disposable before the
        source is subscribed (so a synchronous source can be disconnected from inside).

        A connection whose source terminated is replaced by a fresh one (a new subscription to
        the source).
        """
        conn = self._current_or_fresh(True)
        if on_connect is not None:
            on_connect(conn)
        if conn.connected.try_set() and not conn.disposed.is_set():
            self._source.subscribe(conn.processor)
        return conn

    def reset(self) -> None:
        """Forget a terminated or disposed connection, so the next subscriber starts a fresh one."""
        conn = self._current.get()
        if conn is not None and conn.is_disposed:
            self._current.compare_and_set(conn, None)

    def ref_count(self, subscriber_count: int = 1) -> Flowable[T]:
        """Connect when the ``subscriber_count``-th subscriber arrives; disconnect (cancel the upstream)
        when the last subscriber cancels; a later subscriber connects again (a fresh upstream
        subscription). After the source terminates, the next subscriber also reconnects.

        Example::

            shared = Flowable.range(0, 3).publish().ref_count()
            shared.test().assert_result(0, 1, 2)

        Backpressure: that of the connectable.
        """
        if not isinstance(subscriber_count, int) or isinstance(subscriber_count, bool):
            raise TypeError(
                f"ref_count(): subscriber_count must be an int, got {type(subscriber_count).__name__}"
            )
        if subscriber_count < 1:
            raise ValueError(f"ref_count(): subscriber_count must be >= 1, got {subscriber_count}")
        return _RefCount(self, subscriber_count)

    def auto_connect(self, n: int = 1, on_connect: Callable[[Disposable], Any] | None = None) -> Flowable[T]:
        """Connect when the ``n``-th subscriber arrives (at once if ``n == 0``); never disconnect
        (cancelling subscribers do not cancel the upstream). ``on_connect`` receives the
        connection's Disposable (RxJava ``autoConnect(n, connection)``), so the caller can
        disconnect later.

        Example::

            cached = Flowable.range(0, 3).replay().auto_connect()
            cached.test().assert_result(0, 1, 2)

        Backpressure: that of the connectable.
        """
        non_negative_int("auto_connect", "n", n)
        if on_connect is not None and not callable(on_connect):
            raise TypeError(f"auto_connect(): on_connect must be callable, got {type(on_connect).__name__}")
        if n == 0:
            self.connect(on_connect)
            return self
        return _AutoConnect(self, n, on_connect)

    def __repr__(self) -> str:
        return f"ConnectableFlowable({self._source!r})"


# ---------------------------------------------------------------------------------------------
# auto_connect


@final
class _AutoConnect(Flowable[T]):
    __slots__ = ("_source", "_n", "_clients", "_on_connect")

    def __init__(self, source: ConnectableFlowable[T], n: int, on_connect: Callable[[Disposable], Any] | None) -> None:
        self._source = source
        self._n = n
        self._clients = AtomicInt(0)  # the n-th subscriber connects (race: concurrent subscribers)
        self._on_connect = on_connect

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source._subscribe_actual(subscriber)
        if self._clients.increment_and_get() == self._n:
            self._source.connect(self._on_connect)


# ---------------------------------------------------------------------------------------------
# ref_count


@final
class _RefConnection:
    """ref_count's view of one connection (fields guarded by the _RefCount lock)."""

    __slots__ = ("count", "connected", "disposable", "lock", "disconnected_early")

    def __init__(self, lock: threading.Lock) -> None:
        self.count = 0
        self.connected = False
        self.disposable: Disposable | None = None
        self.lock = lock
        self.disconnected_early = False

    def set_disposable(self, d: Disposable) -> None:
        # race: the last subscriber left between "connected = True" and connect() handing us the
        # connection: it is disposed here, before the source is subscribed
        with self.lock:
            self.disposable = d
            early = self.disconnected_early
        if early:
            d.dispose()


@final
class _RefCount(Flowable[T]):
    __slots__ = ("_source", "_n", "_lock", "_conn")

    def __init__(self, source: ConnectableFlowable[T], n: int) -> None:
        self._source = source
        self._n = n
        # bookkeeping only (race: n-th subscribe vs last cancel vs terminal); never held while
        # subscribing, connecting, disposing or signalling
        self._lock = threading.Lock()
        self._conn: _RefConnection | None = None

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        with self._lock:
            rc = self._conn
            if rc is None:
                rc = _RefConnection(self._lock)
                self._conn = rc
            rc.count += 1
            do_connect = not rc.connected and rc.count == self._n
            if do_connect:
                rc.connected = True
        self._source._subscribe_actual(_RefCountSubscriber(subscriber, self, rc))
        if do_connect:
            self._source.connect(rc.set_disposable)

    def _cancel(self, rc: _RefConnection) -> None:
        with self._lock:
            if self._conn is not rc:
                return
            rc.count -= 1
            if rc.count != 0 or not rc.connected:
                return
            self._conn = None  # the last subscriber left: disconnect (rule 3.14)
            d = rc.disposable
            if d is None:
                rc.disconnected_early = True
            elif isinstance(d, _Connection):
                d.detach()  # inside the lock: a subscriber arriving next gets a fresh connection
        if d is not None:
            d.dispose()  # outside the lock: cancelling runs the upstream's (user) code

    def _terminated(self, rc: _RefConnection) -> None:
        with self._lock:
            if self._conn is not rc:
                return
            self._conn = None  # the next subscriber reconnects
            self._source.reset()  # a compare-and-set only; inside the lock (race: terminal vs subscribe)


@final
class _RefCountSubscriber(BasicSubscriber[T, T]):
    __slots__ = ("_parent", "_rc", "_once")

    def __init__(self, downstream: Subscriber[T], parent: _RefCount[T], rc: _RefConnection) -> None:
        super().__init__(downstream)
        self._parent = parent
        self._rc = rc
        self._once = AtomicFlag()  # the cancel is counted once (rule 3.7)

    def on_next(self, item: T) -> None:
        self.downstream.on_next(item)

    def on_error(self, error: BaseException) -> None:
        if not self.done:
            self._parent._terminated(self._rc)
        super().on_error(error)

    def on_complete(self) -> None:
        if not self.done:
            self._parent._terminated(self._rc)
        super().on_complete()

    def cancel(self) -> None:
        self.upstream.cancel()
        if self._once.try_set():
            self._parent._cancel(self._rc)


# ---------------------------------------------------------------------------------------------
# the operators


def publish(source: Flowable[T]) -> ConnectableFlowable[T]:
    """``source.publish()``: a ConnectableFlowable whose subscribers share one upstream subscription,
    in lockstep (the slowest subscriber paces the upstream through a prefetch queue of 128)."""
    from .._processors._multicast import MulticastProcessor

    return ConnectableFlowable(source, lambda: MulticastProcessor(128))


def replay(source: Flowable[T], n: int | None = None) -> ConnectableFlowable[T]:
    """``source.replay(n)``: a ConnectableFlowable that retains all items (or the last ``n``) and
    replays them to each subscriber at its own pace. The upstream is asked for as many items as the
    subscriber that has requested the most (RxJava's ``replay()``); nothing before any demand."""
    if n is not None:
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"replay(): n must be an int or None, got {type(n).__name__}")
        if n <= 0:
            raise ValueError(f"replay(): n must be > 0, got {n}")
    from .._processors._replay import DemandReplayProcessor

    return ConnectableFlowable(source, lambda: DemandReplayProcessor(n))


def share(source: Flowable[T]) -> Flowable[T]:
    """``source.share()`` = ``publish().ref_count()``."""
    return publish(source).ref_count()


def cache(source: Flowable[T]) -> Flowable[T]:
    """``source.cache()``: replay everything; connect on the first subscriber; never disconnect.
    The source is consumed unbounded (RxJava's ``cache()``); each subscriber at its own pace."""
    from .._processors._replay import ReplayProcessor

    return ConnectableFlowable(source, lambda: ReplayProcessor(None)).auto_connect(1)
