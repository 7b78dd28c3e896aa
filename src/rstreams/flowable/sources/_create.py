"""``create(emitter_fn, strategy)``: bridge a push-style API into a backpressured Flowable.

``emitter_fn(emitter)`` runs once per subscriber, after ``on_subscribe``. It pushes with
``emitter.on_next(x)`` / ``on_error(e)`` / ``on_complete()`` from any thread, as often as it likes;
the emitter reconciles that with the downstream's demand according to the
:class:`~rstreams.flowable.BackpressureStrategy`:

* ``BUFFER``: items without demand wait in an unbounded queue (terminal signals wait behind them);
* ``DROP``: items without demand are dropped;
* ``LATEST``: only the latest item without demand is kept, emitted when demand arrives;
* ``ERROR``: an item without demand ends the stream with ``MissingBackpressureError``;
* ``MISSING``: items are pushed regardless of demand (a downstream operator must cope).

The emitter is always serialized (RxJava's ``serialize()`` is built in; :meth:`serialize` returns
the emitter itself). Every signal enters one queue-drain (seed 004): the producer that moves the
``wip`` counter from 0 owns the drain loop and delivers, other producers only enqueue and bump
``wip`` (race: two producer threads, and a ``request``/``cancel`` from the downstream, all wanting
to signal). No lock is ever held while the downstream is called. The uncontended cost is one
compare-and-set and one decrement per ``on_next`` (the same atomics RxJava's emitters pay).

Demand is kept as two monotonic counters: ``_requested`` (sum of all requests, capped, sticky at
``2**63 - 1``) and ``_emitted`` (written only by the drain owner), so emitting needs no
read-modify-write of the demand per item. ``emitter.requested`` is their difference.

Cancellation (downstream ``cancel``, a rule 3.9 bad request, or termination) runs the function given
to ``set_cancellable`` exactly once (race: cancel vs termination vs ``set_cancellable``; an
:class:`AtomicRef` swapped to a sentinel decides). After a cancel, ``on_next`` is silently ignored
and ``on_error`` goes to the undeliverable-error hook (:mod:`rstreams.plugins`), as in RxJava.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Coroutine, Generator
from typing import Any, Final, TypeVar, final

from ..._internal import plugins
from ..._internal.atomics import AtomicFlag, AtomicInt, AtomicRef
from ..._internal.drain import enter, leave
from ..._internal.requests import MAX_DEMAND, request_or_error
from ..._internal.subscribers import Disposable
from ..._spec import Subscriber, null_element_message
from ...errors import MissingBackpressureError, NoneElementError
from .._enums import BackpressureStrategy
from .._flowable import Flowable, FlowableEmitter
from ._basic import check_sync_callable

__all__ = ["create"]

T = TypeVar("T")

_BUFFER: Final = BackpressureStrategy.BUFFER
_DROP: Final = BackpressureStrategy.DROP
_LATEST: Final = BackpressureStrategy.LATEST
_ERROR: Final = BackpressureStrategy.ERROR
_MISSING: Final = BackpressureStrategy.MISSING


class _Disposed:
    """The terminal value of the cancellable slot: nothing more will be run."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DISPOSED"


_DISPOSED: Final = _Disposed()
_NO_LATEST: Final = object()


def _run_cancellable(fn: Any) -> None:
    if fn is None or fn is _DISPOSED:
        return
    try:
        fn()
    except Exception as e:
        plugins.on_error(e, "create(): the function given to set_cancellable raised")


def _checked_error(error: Any) -> BaseException:
    """Rule 2.13: what the emitter signals as an error is an exception instance; ``None``, a str or an
    exception class is replaced by a TypeError that says so (it would reach the subscriber as a
    malformed ``on_error``)."""
    if isinstance(error, BaseException):
        return error
    if error is None:
        return NoneElementError(null_element_message("create(): emitter.on_error"))
    return TypeError(f"create(): emitter.on_error expects an exception, got {type(error).__name__} {error!r}")


def _overflow_error() -> MissingBackpressureError:
    return MissingBackpressureError(
        "create(..., BackpressureStrategy.ERROR): could not emit an item due to lack of requests; "
        "use BackpressureStrategy.BUFFER, DROP or LATEST, or apply on_backpressure_buffer(), "
        "on_backpressure_drop() or on_backpressure_latest() downstream"
    )


@final
class _Emitter(FlowableEmitter[T]):
    """The serialized emitter, also the Subscription the downstream sees."""

    __slots__ = (
        "_downstream",
        "_strategy",
        "_queue",
        "_latest",
        "_wip",
        "_requested",
        "_emitted",
        "_once",
        "_done",
        "_error",
        "_cancelled",
        "_bad_request",
        "_cancellable",
        "__weakref__",
    )

    def __init__(self, downstream: Subscriber[T], strategy: BackpressureStrategy) -> None:
        self._downstream: Subscriber[T] | None = downstream
        self._strategy = strategy
        self._queue: deque[T] = deque()  # deque.append/popleft are atomic (MPSC use)
        self._latest: Any = _NO_LATEST  # LATEST: the pending item (touched by the drain owner only)
        self._wip = AtomicInt(0)  # race: producers vs request/cancel, one drain owner at a time
        self._requested = AtomicInt(0)  # total requested, capped; sticky at 2**63-1 (rule 3.17)
        self._emitted = 0  # written by the drain owner only
        self._once = AtomicFlag()  # race: on_error vs on_complete from two producer threads
        self._done = False
        self._error: BaseException | None = None
        self._cancelled = False
        self._bad_request: BaseException | None = None
        self._cancellable: AtomicRef[Any] = AtomicRef(None)  # race: cancel vs set_cancellable

    # -- FlowableEmitter ------------------------------------------------------------------------
    def on_next(self, item: T) -> None:
        if self._done or self._cancelled:
            return  # after termination or cancel: silently ignored
        if item is None:
            self.on_error(NoneElementError(null_element_message("create(): emitter.on_next")))
            return
        wip = self._wip
        lock = wip._lock  # the AtomicInt's own lock, inlined: this is the per-item path
        with lock:  # compare_and_set(0, 1): become the drain owner (race: producers vs drain)
            owner = wip._value == 0
            if owner:
                wip._value = 1
        if owner:
            # fast path: nobody else is draining. The drain loop left the queue empty or the demand
            # used up (invariant at wip == 0), so the strategy can be applied right here.
            q = self._queue
            d = self._downstream
            if d is None or self._cancelled or q:
                q.append(item)
                self._drain_loop()
                return
            strategy = self._strategy
            e = self._emitted
            if e < self._requested._value or strategy is _MISSING:
                if self._latest is not _NO_LATEST:  # LATEST: the held item goes first
                    q.append(item)
                    self._drain_loop()
                    return
                self._emitted = e + 1
                d.on_next(item)
            elif strategy is _BUFFER:
                q.append(item)
            elif strategy is _LATEST:
                self._latest = item
            elif strategy is _ERROR:
                q.append(item)
                self._drain_loop()  # signals the overflow error
                return
            # DROP without demand: the item is dropped
            with lock:  # decrement_and_get: leave unless someone signalled meanwhile
                w = wip._value - 1
                wip._value = w
            if w != 0:
                self._drain_loop()
            return
        self._queue.append(item)
        with lock:  # get_and_increment
            w = wip._value
            wip._value = w + 1
        if w == 0:
            self._drain_loop()

    def on_error(self, error: BaseException) -> None:
        error = _checked_error(error)
        if not self.try_on_error(error):
            plugins.on_error(error, "create(): on_error after the stream was cancelled or terminated")

    def try_on_error(self, error: BaseException) -> bool:
        """Signal ``error`` unless the stream was cancelled or terminated; False (and nothing is
        signalled or reported) if it was (RxJava ``tryOnError``)."""
        error = _checked_error(error)
        if self._cancelled or not self._once.try_set():
            return False
        self._error = error
        self._done = True  # written after _error: the drain reads _done first
        self._drain()
        return True

    def on_complete(self) -> None:
        if self._cancelled or not self._once.try_set():
            return
        self._done = True
        self._drain()

    @property
    def requested(self) -> int:
        r = self._requested.get()
        if r >= MAX_DEMAND:
            return MAX_DEMAND
        left = r - self._emitted
        return left if left > 0 else 0

    @property
    def is_cancelled(self) -> bool:
        return self._cancelled

    def set_cancellable(self, fn: Callable[[], Any] | None) -> None:
        """Run ``fn`` on cancel or termination; replaces (and runs) a previously set one."""
        # a generator function is refused too: its clean-up would never run
        check_sync_callable("set_cancellable", "fn", fn, generator=True, none_ok=True)
        ref = self._cancellable
        while True:
            cur = ref.get()
            if cur is _DISPOSED:
                _run_cancellable(fn)  # already cancelled/terminated: run it now
                return
            if ref.compare_and_set(cur, fn):
                _run_cancellable(cur)
                return

    def set_disposable(self, disposable: Disposable | None) -> None:
        """RxJava's ``setDisposable``: dispose ``disposable`` on cancel or termination (it replaces,
        and runs, a previously set cancellable or disposable); ``set_cancellable(d.dispose)``."""
        if disposable is None:
            self.set_cancellable(None)
            return
        dispose = getattr(disposable, "dispose", None)
        if not callable(dispose):
            raise TypeError(
                f"set_disposable(): expected a Disposable (with dispose()), got {type(disposable).__name__}"
            )
        self.set_cancellable(dispose)

    def serialize(self) -> _Emitter[T]:
        """This emitter is always serialized; returns itself."""
        return self

    # -- Subscription ---------------------------------------------------------------------------
    def request(self, n: int) -> None:
        err = request_or_error(self._requested, n)
        if err is not None:
            self._bad_request = err  # rule 3.9: the drain owner signals it
        self._drain()

    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        _run_cancellable(self._cancellable.get_and_set(_DISPOSED))
        self._drain()  # the drain owner clears the queue and drops the downstream (rule 3.13)

    # -- drain ----------------------------------------------------------------------------------
    def _overflow(self) -> None:
        """ERROR strategy, called by the drain owner: end the stream (rule 1.1 would be broken).

        If a terminal signal raced in from another producer thread, that one ends the stream."""
        if self._once.try_set():
            self._error = _overflow_error()
            self._done = True
        self._queue.clear()

    def _drain(self) -> None:
        if enter(self._wip):
            self._drain_loop()

    def _drain_loop(self) -> None:
        """Run by the owner of ``wip`` only (rule 1.3: one signal at a time; rule 3.3: a re-entrant
        ``request`` from ``on_next`` only bumps ``wip`` and the loop picks the demand up)."""
        missed = 1
        q = self._queue
        strategy = self._strategy
        missing = strategy is _MISSING
        while True:
            d = self._downstream
            if self._cancelled or d is None:
                self._clear()
            else:
                e = self._emitted
                r = self._requested.get()
                while True:
                    if self._cancelled:
                        self._clear()
                        break
                    bad = self._bad_request
                    if bad is not None:  # rule 3.9: signalled at once, buffered items dropped
                        self._terminate()
                        d.on_error(bad)
                        break
                    done = self._done  # read before the queue: nothing is enqueued after done
                    if e < r or missing:
                        x: Any = self._latest
                        if x is not _NO_LATEST:
                            self._latest = _NO_LATEST
                        elif q:
                            x = q.popleft()
                        else:
                            if done:
                                self._finish(d)
                            break
                        e += 1
                        self._emitted = e
                        d.on_next(x)
                        r = self._requested.get()
                        continue
                    # no demand: apply the strategy to what waits
                    if not q:
                        if done and self._latest is _NO_LATEST:
                            self._finish(d)  # BUFFER/LATEST: terminal signals wait behind items
                        break
                    if strategy is _BUFFER:
                        break
                    x = q.popleft()
                    if strategy is _LATEST:
                        self._latest = x
                    elif strategy is _ERROR:
                        self._overflow()
                    # DROP: the item is dropped
            missed = leave(self._wip, missed)
            if missed == 0:
                return

    def _finish(self, d: Subscriber[T]) -> None:
        err = self._error
        self._terminate()
        if err is None:
            d.on_complete()
        else:
            d.on_error(err)

    def _terminate(self) -> None:
        self._cancelled = True
        self._done = True
        self._downstream = None  # rule 3.13
        self._clear()
        _run_cancellable(self._cancellable.get_and_set(_DISPOSED))

    def _clear(self) -> None:
        self._queue.clear()
        self._latest = _NO_LATEST
        self._downstream = None


@final
class _CreateFlowable(Flowable[T]):
    __slots__ = ("_fn", "_strategy")

    def __init__(self, fn: Callable[[FlowableEmitter[T]], Any], strategy: BackpressureStrategy) -> None:
        self._fn = fn
        self._strategy = strategy

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        emitter: _Emitter[T] = _Emitter(subscriber, self._strategy)
        subscriber.on_subscribe(emitter)
        try:
            res = self._fn(emitter)
        except Exception as e:
            emitter.on_error(e)
            return
        if isinstance(res, Coroutine | Generator):  # lambda e: an_async_fn(e): it would never run
            res.close()
            emitter.on_error(
                TypeError(
                    f"create(): emitter_fn returned a {type(res).__name__}, whose body would never run; "
                    "push from a plain function (the emitter may be called from any thread)"
                )
            )

    def __repr__(self) -> str:
        return f"Flowable.create({self._fn!r}, {self._strategy})"


def create(emitter_fn: Callable[[FlowableEmitter[T]], Any], strategy: BackpressureStrategy) -> Flowable[T]:
    check_sync_callable("create", "emitter_fn", emitter_fn, generator=True)
    if not isinstance(strategy, BackpressureStrategy):
        raise TypeError(f"create(): strategy must be a BackpressureStrategy, got {strategy!r}")
    return _CreateFlowable(emitter_fn, strategy)
