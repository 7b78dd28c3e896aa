"""``from_future(future, timeout)``: the result of a ``concurrent.futures.Future`` as a Flowable.

No thread is blocked: the value arrives through ``future.add_done_callback`` (on the thread that
completes the future, or on the subscribing thread if it is already done) and is held in a
:class:`~rstreams.flowable._scalar.DeferredScalarSubscription` until requested. An exception becomes
``on_error``; a cancelled future ``on_error(concurrent.futures.CancelledError)``; a ``None`` result
``on_error(TypeError)`` (rule 2.13).

``timeout`` seconds without a result signals ``TimeoutError``, armed with a daemon
``threading.Timer`` that is cancelled as soon as the future completes or the subscription is
cancelled (no timer thread outlives the subscription by more than its wake-up). Cancelling the
subscription does not cancel the future (it may be shared). A NaN timeout is refused; one beyond
``threading.TIMEOUT_MAX`` (``inf`` included) means no timeout (a Timer cannot wait that long).

An ``asyncio.Future`` (or Task) is accepted too. Its methods are not thread-safe: the done
callback is added on the future's own loop (``call_soon_threadsafe`` from any other thread), so it
runs, and reads the result, on that loop's thread; the value is then emitted from there. A future
whose loop is closed is an ``on_error``; one bound to the loop of a thread about to block in a
blocking bridge (``blocking_first`` called on that loop) is an ``on_error`` at once, instead of a
deadlock.

Race guarded: the done callback, the timer and a downstream cancel all want to be "the outcome";
an :class:`AtomicFlag` lets exactly one of them win, the others do nothing.
"""

from __future__ import annotations

import concurrent.futures
import threading
from typing import TYPE_CHECKING, Any, Generic, TypeVar, final

from ..._internal.atomics import AtomicFlag
from ..._spec import Subscriber
from ...errors import NoneElementError
from .._flowable import Flowable
from .._scalar import DeferredScalarSubscription

if TYPE_CHECKING:
    import asyncio

__all__ = ["from_future"]

T = TypeVar("T")


@final
class _FutureObserver(Generic[T]):
    __slots__ = ("_scalar", "_once", "_timer", "_timeout")

    def __init__(self, downstream: Subscriber[T], timeout: float | None) -> None:
        self._scalar: DeferredScalarSubscription[T] = DeferredScalarSubscription(downstream, self._on_cancel)
        self._once = AtomicFlag()  # race: done callback vs timer vs cancel
        self._timer: threading.Timer | None = None
        self._timeout = timeout

    def start(self, downstream: Subscriber[T], future: concurrent.futures.Future[T] | asyncio.Future[T]) -> None:
        downstream.on_subscribe(self._scalar)
        if self._once.is_set():
            return  # cancelled (or failed a rule 3.9 request) inside on_subscribe
        if self._timeout is not None and not future.done():
            timer = threading.Timer(self._timeout, self._on_timeout)
            timer.daemon = True
            timer.name = "rstreams-from_future-timeout"
            self._timer = timer
            timer.start()
            if self._once.is_set():  # race: cancelled while the timer was being armed
                timer.cancel()
        if is_asyncio_future(future):
            self._add_on_loop(future)
        else:
            future.add_done_callback(self._on_done)

    def _add_on_loop(self, future: Any) -> None:
        """An asyncio future: add the done callback on its loop's thread (its methods are not
        thread-safe), directly when called there."""
        from asyncio.events import _get_running_loop

        from ..._internal.event_loops import hidden_by_blocking_bridge

        loop = future.get_loop()
        if loop is hidden_by_blocking_bridge():
            self._fail(
                RuntimeError(
                    "from_future(): the asyncio future belongs to the event loop of this thread, which a "
                    "blocking call (blocking_first/last/iterable/subscribe) is about to block: it could "
                    "never complete. Use `await` on that loop, or call the blocking method from another thread"
                )
            )
            return
        if _get_running_loop() is loop:
            future.add_done_callback(self._on_done)
            return
        try:
            loop.call_soon_threadsafe(future.add_done_callback, self._on_done)
        except RuntimeError:  # "Event loop is closed": the future can never complete
            self._fail(RuntimeError(f"from_future(): the event loop of the asyncio future is closed ({loop!r})"))

    def _fail(self, error: BaseException) -> None:
        if not self._once.try_set():
            return
        self._stop_timer()
        self._scalar.error(error)

    def _stop_timer(self) -> None:
        timer = self._timer
        self._timer = None
        if timer is not None:
            timer.cancel()

    def _on_cancel(self) -> None:
        self._once.try_set()
        self._stop_timer()

    def _on_timeout(self) -> None:
        if not self._once.try_set():
            return
        self._timer = None
        self._scalar.error(
            TimeoutError(f"from_future(): the future did not complete within {self._timeout} s")
        )

    def _on_done(self, future: concurrent.futures.Future[T] | asyncio.Future[T]) -> None:
        if not self._once.try_set():
            return
        self._stop_timer()
        scalar = self._scalar
        if future.cancelled():
            scalar.error(concurrent.futures.CancelledError("from_future(): the future was cancelled"))
            return
        exc = future.exception()
        if exc is not None:
            scalar.error(exc)
            return
        value = future.result()
        if value is None:
            scalar.error(NoneElementError("from_future(): the future's result is None (rule 2.13)"))
            return
        scalar.complete(value)


@final
class _FromFutureFlowable(Flowable[T]):
    __slots__ = ("_future", "_timeout")

    def __init__(self, future: concurrent.futures.Future[T] | asyncio.Future[T], timeout: float | None) -> None:
        self._future = future
        self._timeout = timeout

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        observer: _FutureObserver[T] = _FutureObserver(subscriber, self._timeout)
        observer.start(subscriber, self._future)

    def __repr__(self) -> str:
        return f"Flowable.from_future({self._future!r})"


def is_asyncio_future(obj: object) -> bool:
    """``asyncio.isfuture(obj)`` without importing asyncio (``import rstreams`` stays light)."""
    return hasattr(type(obj), "_asyncio_future_blocking") and getattr(obj, "_asyncio_future_blocking", None) is not None


def from_future(future: concurrent.futures.Future[T] | asyncio.Future[T], timeout: float | None) -> Flowable[T]:
    if not isinstance(future, concurrent.futures.Future) and not is_asyncio_future(future):
        hint = ""
        if hasattr(future, "__await__"):
            hint = (
                "; for a coroutine use Flowable.from_coroutine(lambda: make_coroutine()) (a coroutine "
                "object can be awaited once, so give the function that makes it)"
            )
        raise TypeError(
            "from_future(): expected a concurrent.futures.Future or an asyncio Future/Task, got "
            f"{type(future).__name__}{hint}"
        )
    if timeout is not None:
        t: Any = timeout
        if isinstance(t, bool) or not isinstance(t, int | float):
            raise TypeError(f"from_future(): timeout must be a number of seconds or None, got {t!r}")
        if t != t or t < 0:  # NaN compares unequal to itself: it would time out at once
            raise ValueError(f"from_future(): timeout must be >= 0 seconds (or None), got {t}")
        if t > threading.TIMEOUT_MAX:
            # beyond ~292 years (inf included) a threading.Timer's thread dies of OverflowError and
            # the timeout would silently never fire: such a timeout means "no timeout"
            timeout = None
    return _FromFutureFlowable(future, timeout)
