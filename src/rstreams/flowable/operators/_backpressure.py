"""Backpressure operators: on_backpressure_buffer, on_backpressure_drop, on_backpressure_latest and
rebatch_requests.

``on_backpressure_buffer``, ``on_backpressure_latest`` and ``rebatch_requests`` share one
queue-drain (seed 004): the upstream thread appends to a deque and bumps the ``wip`` counter; the
thread that moved ``wip`` from 0 (the upstream's, or a downstream ``request``/``cancel`` on another
thread) owns the drain and delivers up to the downstream's demand. Race guarded: upstream signals
vs downstream requests and cancel on different threads; one drain owner at a time (rule 1.3), a
re-entrant ``request`` from ``on_next`` only bumps ``wip`` (rule 3.3). Demand is consumed once per
batch (``produced``), never per item.

Unbounded fast path: once the downstream's demand is unbounded and the queue is empty, the
upstream thread, while it owns the drain, switches the operator to "direct" mode and from then on
emits without any atomic operation. This is safe because in that state nothing else can start
emitting: requests no longer drain (demand is sticky at ``2**63 - 1``) and a cancel only clears.

Rule 3.9: a bad ``request`` is signalled by the drain owner ahead of any buffered element (and the
upstream is cancelled); in direct mode, where only the upstream's context may signal, it is passed
to the upstream, which is trusted to validate it and answers with ``on_error``.

Semantics (RxJava's; ``on_backpressure_buffer(delay_error=True)`` makes an error, from the upstream
or an overflow, wait behind the buffered elements instead):

* ``on_backpressure_buffer(capacity, on_overflow, on_dropped)`` requests unbounded upstream. On a
  full buffer: ``ERROR`` cancels the upstream, calls ``on_dropped`` with the overflowing element and
  signals ``MissingBackpressureError`` *at once*: the elements still buffered are discarded (not
  passed to ``on_dropped``), as RxJava does when ``delay_error`` is false. ``DROP_OLDEST`` drops the
  oldest buffered element, ``DROP_LATEST`` the newest buffered one (RxJava's meaning), each passed to
  ``on_dropped``, then buffers the new element. An upstream error is likewise signalled at once
  (buffered elements discarded); a completion waits behind the buffered elements.
* ``on_backpressure_latest()`` keeps only the latest unrequested element (a buffer of one that drops
  the oldest).
* ``on_backpressure_drop(on_drop)`` needs no queue: signals come from the upstream thread only, so
  it compares a monotonic total of requests with a count of emitted elements (no lock per item).
* ``rebatch_requests(n)`` requests ``n`` upfront and ``n - n // 4`` each time that many have been
  emitted, buffering at most ``n`` (an upstream that sends more breaks rule 1.1:
  ``MissingBackpressureError``). It is RxJava's ``observeOn(immediate, delayError=true, n)``: an
  error waits behind the buffered elements.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, Final, Generic, TypeVar, final

from ..._internal import plugins
from ..._internal.arguments import positive_int
from ..._internal.atomics import AtomicInt
from ..._internal.drain import enter, leave, pair_errors
from ..._internal.requests import MAX_DEMAND, add_request, produced, validate_request
from ..._internal.subscriptions import CANCELLED, report_double_subscription
from ..._spec import Subscriber, Subscription, null_element_message
from ...errors import MissingBackpressureError, NoneElementError
from .._base import accept_upstream
from .._enums import BackpressureOverflow
from .._flowable import Flowable
from ..sources._basic import reject_async_function

__all__ = ["on_backpressure_buffer", "on_backpressure_drop", "on_backpressure_latest", "rebatch_requests"]

T = TypeVar("T")

_ERROR: Final = BackpressureOverflow.ERROR
_DROP_OLDEST: Final = BackpressureOverflow.DROP_OLDEST
_DROP_LATEST: Final = BackpressureOverflow.DROP_LATEST


class _QueueDrainSubscriber(Generic[T]):
    """Upstream subscriber + downstream Subscription with a bounded or unbounded queue-drain."""

    _rs_no_wrap = True
    __slots__ = (
        "_downstream",
        "_upstream",
        "_queue",
        "_capacity",
        "_overflow_mode",
        "_on_dropped",
        "_name",
        "_initial",
        "_limit",
        "_consumed",
        "_wip",
        "_requested",
        "_done",
        "_error",
        "_cancelled",
        "_bad_request",
        "_bad_n",
        "_direct",
        "_delay_error",
        "__weakref__",
    )

    def __init__(
        self,
        downstream: Subscriber[T],
        name: str,
        capacity: int | None,
        overflow: BackpressureOverflow,
        on_dropped: Callable[[T], Any] | None,
        initial: int,
        limit: int,
        delay_error: bool = False,
    ) -> None:
        self._downstream: Subscriber[T] | None = downstream
        # an error (upstream or overflow) waits behind the buffered elements (True), or discards
        # them and is signalled at once (False, RxJava's default for onBackpressureBuffer)
        self._delay_error = delay_error
        self._upstream: Subscription = CANCELLED
        self._queue: deque[T] = deque()  # SPSC: the upstream appends, the drain owner pops
        self._capacity = capacity
        self._overflow_mode = overflow
        self._on_dropped = on_dropped
        self._name = name
        self._initial = initial  # first upstream request
        self._limit = limit  # replenish after this many emitted (0: never, upstream is unbounded)
        self._consumed = 0  # drain owner only
        self._wip = AtomicInt(0)  # race: upstream signals vs downstream request/cancel
        self._requested = AtomicInt(0)  # outstanding downstream demand (rule 3.17 cap)
        self._done = False
        self._error: BaseException | None = None
        self._cancelled = False
        self._bad_request: BaseException | None = None
        self._bad_n: Any = 0
        self._direct = False  # unbounded fast path: read and written by the upstream thread only

    # -- from upstream --------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise NoneElementError(null_element_message("on_subscribe"))
        accept_upstream(self, subscription, self._initial, self._name)

    def on_next(self, item: T) -> None:
        if self._done:
            return
        if self._direct:
            d = self._downstream
            if d is None or self._cancelled:
                return
            d.on_next(item)
            lim = self._limit
            if lim:
                c = self._consumed + 1
                if c == lim:
                    c = 0
                    self._upstream.request(lim)
                self._consumed = c
            return
        q = self._queue
        cap = self._capacity
        if cap is not None and len(q) >= cap:
            if not self._overflow(item):
                return
        else:
            q.append(item)
        wip = self._wip
        with wip._lock:  # get_and_increment, inlined on the per-item path
            w = wip._value
            wip._value = w + 1
        if w == 0:
            self._drain_loop(True)

    def _overflow(self, item: T) -> bool:
        """The buffer is full (upstream thread). False if the stream ended."""
        q = self._queue
        mode = self._overflow_mode
        if mode is _ERROR:
            self._upstream.cancel()
            mbe = MissingBackpressureError(self._overflow_message())
            err: BaseException = mbe
            cb = self._on_dropped
            if cb is not None:
                try:
                    cb(item)
                except Exception as e:
                    err = pair_errors(mbe, e, f"{self._name}(): buffer overflow and on_dropped raised")
            self.on_error(err)
            return False
        dropped: Any = None
        try:
            dropped = q.popleft() if mode is _DROP_OLDEST else q.pop()
        except IndexError:
            pass  # the drain emptied it meanwhile (race: drop vs drain)
        q.append(item)
        cb = self._on_dropped
        if cb is not None and dropped is not None:
            try:
                cb(dropped)
            except Exception as e:
                self._upstream.cancel()
                self.on_error(e)
                return False
        return True

    def _overflow_message(self) -> str:
        if self._limit:
            return (
                f"{self._name}({self._capacity}): the upstream emitted more than was requested "
                "(rule 1.1); put on_backpressure_buffer/drop/latest before it"
            )
        return (
            f"{self._name}(capacity={self._capacity}): the buffer is full; raise the capacity or use "
            "on_overflow=BackpressureOverflow.DROP_OLDEST/DROP_LATEST, on_backpressure_drop() or "
            "on_backpressure_latest()"
        )

    def on_error(self, error: BaseException) -> None:
        if self._done or self._cancelled:
            plugins.on_error(error, f"{self._name}(): on_error after termination or cancel")
            return
        self._error = error
        self._done = True
        if self._direct:
            d = self._downstream
            if self._cancelled or d is None:
                plugins.on_error(error, f"{self._name}(): on_error after cancel")
                return
            self._release()
            d.on_error(error)
            return
        self._drain()

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        if self._direct:
            d = self._downstream
            if self._cancelled or d is None:
                return
            self._release()
            d.on_complete()
            return
        self._drain()

    # -- from downstream ------------------------------------------------------------------------
    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                self._bad_n = n
                self._bad_request = err  # rule 3.9: the drain owner signals it, ahead of the queue
                self._drain()
                return
        if add_request(self._requested, n) >= MAX_DEMAND:
            return  # already unbounded: nothing changes (and the direct mode stays safe)
        self._drain()

    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        self._upstream.cancel()
        self._drain()  # the owner clears the queue and drops the downstream (rule 3.13)

    # -- the drain ------------------------------------------------------------------------------
    def _release(self) -> None:
        self._cancelled = True
        self._downstream = None  # rule 3.13
        self._queue.clear()

    def _finish(self, d: Subscriber[T]) -> None:
        err = self._error
        self._release()
        if err is None:
            d.on_complete()
        else:
            d.on_error(err)

    def _drain(self) -> None:
        if enter(self._wip):
            self._drain_loop(False)

    def _drain_loop(self, upstream_thread: bool) -> None:
        missed = 1
        q = self._queue
        requested = self._requested
        lim = self._limit
        delay_error = self._delay_error
        while True:
            d = self._downstream
            if self._direct or self._cancelled or d is None:
                if self._cancelled:
                    self._release()
                elif self._bad_request is not None:
                    # direct mode: only the upstream's context may signal; the upstream (trusted
                    # to validate, rule 3.9) answers the bad request with on_error
                    self._bad_request = None
                    self._upstream.request(self._bad_n)
            else:
                r = requested.get()
                e = 0
                c = self._consumed
                while True:
                    if self._cancelled:
                        self._release()
                        break
                    bad = self._bad_request
                    if bad is not None:
                        self._upstream.cancel()
                        self._release()
                        d.on_error(bad)
                        break
                    done = self._done  # read before the queue: nothing is appended after done
                    if done and not delay_error and self._error is not None:
                        err = self._error
                        self._release()  # errors are not delayed: buffered elements are discarded
                        d.on_error(err)
                        break
                    if e == r:
                        if done and not q:
                            self._finish(d)
                        break
                    try:
                        x = q.popleft()
                    except IndexError:
                        if done:
                            self._finish(d)
                        break
                    d.on_next(x)
                    e += 1
                    if lim:
                        c += 1
                        if c == lim:
                            c = 0
                            self._upstream.request(lim)
                self._consumed = c
                if e:
                    r = produced(requested, e)
                if (
                    upstream_thread
                    and r >= MAX_DEMAND
                    and not q
                    and not self._done
                    and not self._cancelled
                    and self._bad_request is None
                ):
                    # only the upstream's signal context (serial, rule 1.3) sets and reads the flag
                    self._direct = True
            missed = leave(self._wip, missed)  # once per pass, often once per item
            if missed == 0:
                return


@final
class _QueueDrainFlowable(Flowable[T]):
    __slots__ = (
        "_source",
        "_name",
        "_capacity",
        "_overflow",
        "_on_dropped",
        "_initial",
        "_limit",
        "_delay_error",
    )

    def __init__(
        self,
        source: Flowable[T],
        name: str,
        capacity: int | None,
        overflow: BackpressureOverflow,
        on_dropped: Callable[[T], Any] | None,
        initial: int,
        limit: int,
        delay_error: bool = False,
    ) -> None:
        self._delay_error = delay_error
        self._source = source
        self._name = name
        self._capacity = capacity
        self._overflow = overflow
        self._on_dropped = on_dropped
        self._initial = initial
        self._limit = limit

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(
            _QueueDrainSubscriber(
                subscriber,
                self._name,
                self._capacity,
                self._overflow,
                self._on_dropped,
                self._initial,
                self._limit,
                self._delay_error,
            )
        )

    def __repr__(self) -> str:
        return f"{self._source!r}.{self._name}()"


def on_backpressure_buffer(
    source: Flowable[T],
    capacity: int | None,
    on_overflow: BackpressureOverflow,
    on_dropped: Callable[[T], Any] | None,
    delay_error: bool = False,
) -> Flowable[T]:
    if not isinstance(delay_error, bool):
        raise TypeError(
            f"on_backpressure_buffer(): delay_error must be a bool, got {type(delay_error).__name__}"
        )
    if capacity is not None:
        positive_int("on_backpressure_buffer", "capacity", capacity)
    if not isinstance(on_overflow, BackpressureOverflow):
        raise TypeError(
            f"on_backpressure_buffer(): on_overflow must be a BackpressureOverflow, got {on_overflow!r}"
        )
    if on_dropped is not None and not callable(on_dropped):
        raise TypeError("on_backpressure_buffer(): on_dropped must be callable or None")
    reject_async_function("on_backpressure_buffer", "on_dropped", on_dropped, generator=True)
    return _QueueDrainFlowable(
        source, "on_backpressure_buffer", capacity, on_overflow, on_dropped, MAX_DEMAND, 0, delay_error
    )


def on_backpressure_latest(source: Flowable[T]) -> Flowable[T]:
    return _QueueDrainFlowable(source, "on_backpressure_latest", 1, _DROP_OLDEST, None, MAX_DEMAND, 0)


def rebatch_requests(source: Flowable[T], n: int) -> Flowable[T]:
    positive_int("rebatch_requests", "n", n)
    # RxJava's observeOn(immediate, delayError=true, n): an error waits behind the buffered elements
    return _QueueDrainFlowable(source, "rebatch_requests", n, _ERROR, None, n, n - (n >> 2), True)


# ---------------------------------------------------------------------------------------------
# on_backpressure_drop


@final
class _DropSubscriber(Generic[T]):
    """Emits when the total requested exceeds the total emitted, else drops (no queue, no drain).

    Race guarded: ``request`` on another thread only raises the monotonic total (an atomic add);
    the upstream thread alone reads it and counts what it emitted, so per item there is one plain
    read and no lock.
    """

    _rs_no_wrap = True
    __slots__ = ("_downstream", "_upstream", "_on_drop", "_requested", "_emitted", "_done", "__weakref__")

    def __init__(self, downstream: Subscriber[T], on_drop: Callable[[T], Any] | None) -> None:
        self._downstream: Subscriber[T] | None = downstream
        self._upstream: Subscription = CANCELLED
        self._on_drop = on_drop
        self._requested = AtomicInt(0)  # total requested, capped and sticky at 2**63-1
        self._emitted = 0  # upstream thread only
        self._done = False

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise NoneElementError(null_element_message("on_subscribe"))
        if self._upstream is not CANCELLED:
            subscription.cancel()
            report_double_subscription("on_backpressure_drop")
            return
        self._upstream = subscription
        d = self._downstream
        if d is not None:
            d.on_subscribe(self)
        subscription.request(MAX_DEMAND)

    def on_next(self, item: T) -> None:
        if self._done:
            return
        d = self._downstream
        if d is None:
            return
        e = self._emitted
        if e < self._requested.get():
            self._emitted = e + 1
            d.on_next(item)
            return
        cb = self._on_drop
        if cb is not None:
            try:
                cb(item)
            except Exception as ex:
                self._upstream.cancel()
                self.on_error(ex)

    def on_error(self, error: BaseException) -> None:
        d = self._downstream
        if self._done or d is None:
            plugins.on_error(error, "on_backpressure_drop(): on_error after termination or cancel")
            return
        self._done = True
        self._downstream = None
        d.on_error(error)

    def on_complete(self) -> None:
        d = self._downstream
        if self._done or d is None:
            return
        self._done = True
        self._downstream = None
        d.on_complete()

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            if validate_request(n) is not None:
                self._upstream.request(n)  # rule 3.9: the (trusted) upstream signals the error
                return
            # a legal amount of an int subclass (an IntEnum member): it is this operator's demand,
            # not the upstream's (which was requested unbounded), else it would be lost
            n = int(n)
        add_request(self._requested, n)

    def cancel(self) -> None:
        self._downstream = None  # rule 3.13
        self._upstream.cancel()


@final
class _DropFlowable(Flowable[T]):
    __slots__ = ("_source", "_on_drop")

    def __init__(self, source: Flowable[T], on_drop: Callable[[T], Any] | None) -> None:
        self._source = source
        self._on_drop = on_drop

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._source.subscribe(_DropSubscriber(subscriber, self._on_drop))


def on_backpressure_drop(source: Flowable[T], on_drop: Callable[[T], Any] | None) -> Flowable[T]:
    if on_drop is not None and not callable(on_drop):
        raise TypeError("on_backpressure_drop(): on_drop must be callable or None")
    reject_async_function("on_backpressure_drop", "on_drop", on_drop, generator=True)
    return _DropFlowable(source, on_drop)
