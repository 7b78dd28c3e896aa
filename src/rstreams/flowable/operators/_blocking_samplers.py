"""Blocking samplers: blocking_latest, blocking_next, blocking_most_recent (RxJava
``blockingLatest``, ``blockingNext``, ``blockingMostRecent``).

Each returns a :class:`BlockingSampler`: a Python iterator over *samples* of a stream that the
consumer does not keep up with. None of them backpressures the source: each requests unbounded
and keeps at most one element (as RxJava), so a fast producer is never slowed and memory is O(1).

* ``blocking_latest()`` subscribes at once. ``next()`` returns the latest element not returned
  before, blocking until there is one; elements that arrive between two ``next()`` calls are
  replaced by later ones.
* ``blocking_next()`` subscribes at the first ``next()``. ``next()`` blocks until the upstream emits
  an element *after* the call began, and returns it; elements emitted while nobody waits are
  dropped.
* ``blocking_most_recent(initial)`` subscribes at once. ``next()`` never blocks: it returns the most
  recent element (``initial`` before the first one) again and again; iteration ends as soon as the
  stream completes (a synchronous source completes inside the call, so it yields nothing, as in
  RxJava).

End of stream: a completion ends the iteration; an error is raised from ``next()`` (once; the
iterator is then closed). Departure from RxJava, for ``blocking_latest``/``blocking_next``: RxJava
lets the terminal signal overwrite an element not yet taken (so a synchronous source yields
nothing); here that element is returned first and the terminal signal is reported by the following
``next()``.

Leaving early cancels the upstream: ``close()`` (from any thread: a blocked ``next()`` wakes up and
the iteration ends), ``break`` out of ``for x in it``, an exception in the loop body, the ``with``
block, or garbage collection. An exception while ``next()`` waits (``KeyboardInterrupt``) cancels
the upstream and propagates: no thread and no subscription is left behind (the samplers start no
thread of their own).

No timeouts: ``next()`` waits on a condition variable until it is notified; nothing polls. Every
state change a waiter needs (a sample, a terminal signal, a cancel) is followed by a notify that
cannot be lost (see ``_wake``). On POSIX a signal interrupts that wait (``Ctrl-C`` raises
``KeyboardInterrupt`` from ``next()`` at once); on Windows, where a lock wait ignores ``Ctrl-C``,
the wait wakes every ``_INTERRUPT_SLICE`` seconds only to let the signal handler run.

Concurrency: the upstream emits serially (rule 1.3) from any thread; the consumer is one thread.
``latest`` publishes ``(sequence number, element)`` as one reference store per element (no lock per
element with the GIL, and the consumer never loses or repeats one: it remembers the last number it
returned); ``next`` hands an element over only while the consumer said it waits (one lock round
trip per element handed over, none for the dropped ones); ``most_recent`` is one reference store.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Generator
from typing import Any, Final, Generic, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import SEQUENTIAL_ATTRIBUTES, AtomicRef
from ..._internal.requests import MAX_DEMAND
from ..._internal.subscriptions import CANCELLED, cancel, set_once
from ..._spec import Subscription
from ...errors import NoneElementError
from .._flowable import Flowable
from ._blocking import _END, ClosedOnExit, _none_argument, _subscribe_blocking

__all__ = ["BlockingSampler", "blocking_latest", "blocking_next", "blocking_most_recent"]

T = TypeVar("T")

_EMPTY: Final = object()  # blocking_next: no element handed over yet
# None: wait until notified. Windows: a lock wait cannot be interrupted by Ctrl-C, so the wait wakes
# this often only to let the signal handler run (nothing is polled: the state is re-checked and,
# unchanged, waited for again)
_INTERRUPT_SLICE: Final[float | None] = 0.25 if sys.platform == "win32" else None


class _SamplerSubscriber(Generic[T]):
    """What the three samplers share: the unbounded subscription, the terminal state, cancel, and
    the consumer's wait. Subclasses keep the sample (``on_next``) and pick it (``take``)."""

    _rs_no_wrap = True
    __slots__ = ("_upstream", "_done", "_error", "_cancelled", "_cond", "_waiting", "_name", "__weakref__")

    def __init__(self, name: str) -> None:
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)  # race: cancel vs on_subscribe
        self._done = False  # written after the last sample and after _error (the consumer reads it first)
        self._error: BaseException | None = None
        self._cancelled = False
        # reentrant: a sampler collected by the garbage collector on the producer's thread while
        # that thread notifies (inside _signal) cancels, and so notifies, again
        self._cond = threading.Condition(threading.RLock())
        self._waiting = False  # the consumer sleeps on _cond (written under its lock)
        self._name = name

    # -- Subscriber -----------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            _none_argument(self, "on_subscribe")
        if set_once(self._upstream, subscription, self._name):
            subscription.request(MAX_DEMAND)  # a sampler never backpressures (as RxJava)

    def on_error(self, error: BaseException) -> None:
        if error is None:
            _none_argument(self, "on_error")
        if self._done or self._cancelled:  # nobody will raise it: never silently
            plugins.on_error(error, f"{self._name}: on_error after termination or after the consumer left")
            return
        self._upstream.set(CANCELLED)  # rule 2.4: the consumer's final cancel is then a no-op
        self._error = error
        self._done = True  # after _error
        self._signal()

    def on_complete(self) -> None:
        self._upstream.set(CANCELLED)  # rule 2.4
        self._done = True
        self._signal()

    def _signal(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def _wake(self) -> None:
        """Per-element producer side: notify only when the consumer sleeps. With the GIL, plain
        attribute reads and writes are sequentially consistent: the consumer raises ``_waiting``
        under the lock *before* its last look at the sample, the producer stores the sample
        *before* reading ``_waiting``, so either the consumer sees the sample or the producer sees
        the flag and then blocks on the lock until the consumer sleeps (race: "consumer about to
        sleep" vs "producer stores", a lost wake-up otherwise). Without the GIL the flag is read
        under the lock."""
        if SEQUENTIAL_ATTRIBUTES:
            if self._waiting:
                self._signal()
            return
        with self._cond:
            if self._waiting:
                self._cond.notify_all()

    # -- consumer side --------------------------------------------------------------------------
    def cancel(self) -> None:
        """Any thread: cancel the upstream; a consumer blocked in :meth:`take` wakes up and ends."""
        self._cancelled = True
        cancel(self._upstream)
        self._signal()

    def _terminal(self) -> Any:
        """After ``_done``: raise the error (once), else the end marker."""
        err = self._error
        if err is not None:
            self._error = None
            raise err
        return _END

    def _ready(self) -> bool:
        raise NotImplementedError

    def _wait(self) -> None:
        """Block until :meth:`_ready`, a terminal signal or a cancel."""
        with self._cond:
            self._waiting = True
            try:
                while not self._ready() and not self._done and not self._cancelled:
                    self._cond.wait(_INTERRUPT_SLICE)
            finally:
                self._waiting = False

    def start(self, source: Flowable[T]) -> None:
        _subscribe_blocking(source, self)

    def take(self) -> Any:
        raise NotImplementedError


@final
class _LatestSubscriber(_SamplerSubscriber[T]):
    __slots__ = ("_cell", "_seq", "_seen")

    def __init__(self) -> None:
        super().__init__("blocking_latest")
        self._cell: tuple[int, Any] = (0, None)  # (sequence number, element): one atomic store
        self._seq = 0  # producer only (rule 1.3: serial signals)
        self._seen = 0  # consumer only: the number of the last element returned

    def on_next(self, item: T) -> None:
        if item is None:
            _none_argument(self, "on_next")
        if self._done or self._cancelled:
            return  # rule 2.8
        s = self._seq + 1
        self._seq = s
        self._cell = (s, item)
        self._wake()

    def on_next_batch(self, items: list[T]) -> None:
        """Library-internal batch hand-off: only the batch's last element can be the latest."""
        if items:
            self.on_next(items[-1])

    def _ready(self) -> bool:
        return self._cell[0] != self._seen

    def take(self) -> Any:
        while True:
            if self._cancelled:
                return _END
            done = self._done  # read before the cell: nothing is stored after done
            seq, item = self._cell
            if seq != self._seen:
                self._seen = seq
                return item  # an element not taken yet comes before the terminal signal
            if done:
                return self._terminal()
            self._wait()


@final
class _NextSubscriber(_SamplerSubscriber[T]):
    __slots__ = ("_want", "_slot")

    def __init__(self) -> None:
        super().__init__("blocking_next")
        self._want = False  # the consumer waits for the next element (set under the lock)
        self._slot: Any = _EMPTY  # the element handed over (producer stores, consumer clears)

    def on_next(self, item: T) -> None:
        if item is None:
            _none_argument(self, "on_next")
        if not self._want or self._done or self._cancelled:
            return  # nobody waits: dropped (as RxJava)
        # _want is cleared first: once the consumer sees the slot filled it may take it and wait
        # again (raising _want), which a later clear would undo (race: hand-over vs next call)
        self._want = False
        self._slot = item
        self._signal()

    def on_next_batch(self, items: list[T]) -> None:
        """Library-internal batch hand-off: the batch's first element is the next one."""
        if items and self._want:
            self.on_next(items[0])

    def _ready(self) -> bool:
        return self._slot is not _EMPTY

    def expect(self) -> None:
        """Before subscribing: the first ``next()`` waits for the very first element."""
        self._want = True

    def take(self) -> Any:
        while True:
            if self._cancelled:
                return _END
            done = self._done  # read before the slot: nothing is stored after done
            v = self._slot
            if v is not _EMPTY:
                self._slot = _EMPTY
                return v  # handed over before the terminal signal: returned first
            if done:
                return self._terminal()
            with self._cond:
                self._want = True  # from here on the next element is ours
            self._wait()


@final
class _MostRecentSubscriber(_SamplerSubscriber[T]):
    __slots__ = ("_value",)

    def __init__(self, initial: T) -> None:
        super().__init__("blocking_most_recent")
        self._value: Any = initial

    def on_next(self, item: T) -> None:
        if item is None:
            _none_argument(self, "on_next")
        if not self._done and not self._cancelled:
            self._value = item  # one reference store (rule 1.3: a single writer)

    def on_next_batch(self, items: list[T]) -> None:
        """Library-internal batch hand-off: only the batch's last element can be the most recent."""
        if items:
            self.on_next(items[-1])

    def _ready(self) -> bool:
        return True

    def take(self) -> Any:
        if self._cancelled:
            return _END
        if self._done:  # as RxJava: the terminal signal ends the samples at once
            return self._terminal()
        return self._value


class BlockingSampler(ClosedOnExit, Generic[T]):
    """An iterator over samples of a Flowable (``blocking_latest``, ``blocking_next``,
    ``blocking_most_recent``); ``close()``, leaving a ``for`` loop, the ``with`` block or garbage
    collection cancel the subscription."""

    __slots__ = ("_source", "_sub", "_started", "_closed", "__weakref__")

    def __init__(self, source: Flowable[T], sub: _SamplerSubscriber[T], eager: bool) -> None:
        self._source: Flowable[T] | None = source
        self._sub: _SamplerSubscriber[T] | None = sub
        self._started = False
        self._closed = False
        if eager:
            self._start()

    def _start(self) -> None:
        self._started = True
        sub = self._sub
        src = self._source
        self._source = None
        if sub is None or src is None:
            return
        if isinstance(sub, _NextSubscriber):
            sub.expect()
        try:
            sub.start(src)
        except BaseException:
            self.close()
            raise

    def __next__(self) -> T:
        if self._closed:
            raise StopIteration
        if not self._started:
            self._start()
        sub = self._sub
        if sub is None:
            raise StopIteration
        try:
            v = sub.take()  # blocks (latest, next); raises the stream's error
        except BaseException:
            self.close()  # the error, or an interrupt while waiting: cancel, nobody is left waiting
            raise
        if v is _END:
            self.close()
            raise StopIteration
        return v  # type: ignore[no-any-return]

    def __iter__(self) -> Generator[T, None, None]:
        """A generator over the samples; its ``finally`` cancels on ``break``, on an exception in the
        loop body, or when the generator is closed or collected."""
        try:
            while True:
                try:
                    x = self.__next__()
                except StopIteration:
                    return
                yield x
        finally:
            self.close()

    def close(self) -> None:
        """Stop sampling and cancel the subscription (idempotent; from any thread too)."""
        self._closed = True
        self._source = None
        sub = self._sub
        if sub is not None:
            self._sub = None
            sub.cancel()



def blocking_latest(source: Flowable[T]) -> BlockingSampler[T]:
    return BlockingSampler(source, _LatestSubscriber(), eager=True)


def blocking_next(source: Flowable[T]) -> BlockingSampler[T]:
    return BlockingSampler(source, _NextSubscriber(), eager=False)


def blocking_most_recent(source: Flowable[T], initial: T) -> BlockingSampler[T]:
    if initial is None:
        raise NoneElementError("blocking_most_recent(): initial is None; None is not a valid element (rule 2.13)")
    return BlockingSampler(source, _MostRecentSubscriber(initial), eager=True)
