"""concat_map(mapper, prefetch): map each element to a Publisher and emit the inners in order.

Structure (queue-drain, seed 004):

* The upstream is asked for ``prefetch`` elements up front and replenished in batches of
  ``limit = prefetch - prefetch // 4`` as the drain consumes them. Its elements wait in a queue.
* One inner Publisher runs at a time, subscribed through the inner's
  :class:`SubscriptionArbiter`, which *is* the downstream's demand: demand an inner did not use
  carries over to the next one (``produced`` is accounted when an inner completes).
* The drain (owner of the ``wip`` counter) takes the next element when no inner is active, calls
  the mapper and subscribes the inner. An inner that completes synchronously, inside
  ``subscribe``, only marks itself inactive and bumps ``wip``: the running drain loop continues
  with the next element, so many synchronous inners never recurse (trampoline; race: inner
  completion on another thread vs the drain).
* Scalar shortcut: a mapper result ``just(x)`` is emitted directly when demand is unbounded, or
  handed to the arbiter as a one-element subscription that emits when requested; ``empty()`` is
  skipped without subscribing anything. (The same test as ``sources._basic.scalar_value``,
  inlined on this per-element path.)
* Errors are immediate (RxJava's default concatMap): an upstream error cancels the inner, an inner
  or mapper error cancels the upstream. Elements come from the inner's thread while the upstream
  error may arrive on another: the two are half-serialized (``_hs`` counter, race: inner on_next
  vs upstream on_error) so the error is delivered after the in-flight ``on_next`` returns, and
  never two signals overlap (rule 1.3).
* ``delay_error`` (RxJava's ``concatMapDelayError``): errors go into an :class:`ErrorCollector`
  instead of the terminal slot. With ``till_the_end`` every queued element is still mapped and
  every inner runs; the errors (one, or an ``ExceptionGroup``) follow the last element. Without
  it an error stops the stream at the next inner boundary: an upstream error lets the current
  inner finish, an inner error cancels the upstream; the queued elements are dropped. A mapper
  error terminates at once in both modes (RxJava), with the errors collected so far. Every
  terminal signal of this mode is delivered by the drain when no inner is active, so no inner
  ``on_next`` can overlap it; the half-serializer is still entered as in the immediate mode.
  The immediate mode pays one ``is not None`` test, only when the upstream has completed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, Final, TypeVar, final

from ..._internal import plugins
from ..._internal.arguments import check_bool, check_callable_arg, positive_int
from ..._internal.atomics import AtomicInt, AtomicRef
from ..._internal.drain import TERMINATED, ErrorCollector, enter, leave
from ..._internal.requests import MAX_DEMAND, validate_request
from ..._internal.subscribers import NOOP_SUBSCRIBER
from ..._internal.subscriptions import CANCELLED, SubscriptionArbiter, cancel, set_once
from ..._spec import Publisher, Subscriber, Subscription
from .._base import none_result_error
from .._flowable import Flowable
from ..sources._basic import EmptyFlowable, JustFlowable
from ._inner import overflow_error as _overflow

__all__ = ["concat_map"]

T = TypeVar("T")
R = TypeVar("R")



class _Completed(Exception):
    """Marks the terminal slot as "completed normally" (never signalled as an error)."""


_COMPLETE: Final = _Completed("complete")


@final
class _ScalarSubscription:
    """A one-element subscription for the scalar shortcut when demand is bounded: emits into the
    inner when requested (the arbiter only requests it when demand exists)."""

    __slots__ = ("_inner", "_value", "_once")

    def __init__(self, inner: _Inner, value: Any) -> None:
        self._inner: _Inner | None = inner
        self._value = value
        self._once = AtomicInt(0)  # race: request from the downstream vs cancel

    def request(self, n: int) -> None:
        if n > 0 and self._once.compare_and_set(0, 1):
            inner = self._inner
            self._inner = None
            if inner is not None:
                inner.on_next(self._value)
                inner.on_complete()

    def cancel(self) -> None:
        self._once.set(1)
        self._inner = None


@final
class _Inner(SubscriptionArbiter):
    """Subscribes to each inner in turn; its arbiter state is the downstream's demand."""

    _rs_no_wrap = True
    __slots__ = ("_parent", "_emitted")

    def __init__(self, parent: _ConcatMapSubscriber) -> None:
        super().__init__(cancel_on_replace=False)
        self._parent = parent
        self._emitted = 0  # only the current inner's serial signals touch it

    def on_subscribe(self, subscription: Subscription) -> None:
        self.set_subscription(subscription)

    def on_next(self, item: Any) -> None:
        self._emitted += 1
        self._parent.inner_next(item)

    def on_error(self, error: BaseException) -> None:
        e = self._emitted
        if e:  # the delay-error mode moves on to the next inner: its demand carries over
            self._emitted = 0
            self.produced(e)
        self._parent.inner_error(error)

    def on_complete(self) -> None:
        e = self._emitted
        if e:
            self._emitted = 0
            self.produced(e)
        self._parent.inner_complete()


@final
class _ConcatMapSubscriber:
    _rs_no_wrap = True
    __slots__ = (
        "_downstream",
        "_mapper",
        "_prefetch",
        "_limit",
        "_upstream",
        "_queue",
        "_wip",
        "_hs",
        "_error",
        "_inner",
        "_active",
        "_done",
        "_cancelled",
        "_consumed",
        "_errors",
        "_till_end",
    )

    def __init__(
        self,
        downstream: Subscriber[Any],
        mapper: Callable[[Any], Publisher[Any]],
        prefetch: int,
        delay_error: bool = False,
        till_the_end: bool = True,
    ) -> None:
        self._downstream: Subscriber[Any] = downstream
        self._mapper = mapper
        self._prefetch = prefetch
        self._limit = prefetch - (prefetch >> 2)
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)  # race: cancel vs on_subscribe
        self._queue: deque[Any] = deque()  # SPSC: upstream thread appends, the drain pops
        self._wip = AtomicInt(0)  # queue-drain: one drainer at a time
        self._hs = AtomicInt(0)  # half-serializer: inner on_next vs terminal from another thread
        # the terminal slot: the first error, or _COMPLETE; set once (race: completion vs errors)
        self._error: AtomicRef[BaseException | None] = AtomicRef(None)
        self._inner = _Inner(self)
        self._active = False  # written by the drain (True) and the inner's on_complete (False)
        self._done = False
        self._cancelled = False
        self._consumed = 0  # drain-local replenishment count
        # delay-error mode only (None: errors are immediate); race: upstream vs inner errors
        self._errors: ErrorCollector | None = ErrorCollector() if delay_error else None
        self._till_end = till_the_end

    # upstream side -------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if set_once(self._upstream, subscription, "concat_map"):
            self._downstream.on_subscribe(self)
            subscription.request(self._prefetch)

    def on_next(self, item: Any) -> None:
        q = self._queue
        q.append(item)
        if len(q) > self._prefetch:  # the upstream broke rule 1.1 (RxJava: "queue is full")
            cancel(self._upstream)
            self.on_error(_overflow("concat_map", self._prefetch))
            return
        self._drain()

    # library-internal batch protocol: the elements arrive within the prefetch demand; one drain
    # pass maps them in order (the mapper runs as the one-by-one path would run it)
    accepts_batches = True

    def on_next_batch(self, items: list[Any]) -> None:
        q = self._queue
        q.extend(items)
        if len(q) > self._prefetch:  # the upstream broke rule 1.1 (RxJava: "queue is full")
            cancel(self._upstream)
            self.on_error(_overflow("concat_map", self._prefetch))
            return
        self._drain()

    def on_error(self, error: BaseException) -> None:
        errors = self._errors
        if errors is not None:  # delayed: the current inner (and with till_the_end the queue) runs on
            if errors.add_or_report(error):
                self._done = True
                self._drain()
            return
        if not self._error.compare_and_set(None, error):
            plugins.on_error(error, "concat_map: upstream error after termination")
            return
        self._inner.cancel()
        self._terminate()

    def on_complete(self) -> None:
        self._done = True
        self._drain()

    # inner side ------------------------------------------------------------------------------
    def inner_next(self, item: Any) -> None:
        hs = self._hs  # _hs_enter/_hs_leave written out (see there)
        with hs._lock:  # half-serializer enter (race: inner on_next vs upstream on_error)
            if hs._value != 0:
                return  # terminated
            hs._value = 1
        self._downstream.on_next(item)
        with hs._lock:  # half-serializer leave: did a terminal signal arrive meanwhile?
            if hs._value == 1:
                hs._value = 0
                return
        self._deliver_terminal()

    def inner_error(self, error: BaseException) -> None:
        errors = self._errors
        if errors is not None:  # delayed: move on to the next inner (till_the_end) or stop there
            if errors.add_or_report(error):
                if not self._till_end:
                    cancel(self._upstream)
                    self._done = True
                self._active = False
                self._drain()
            return
        if not self._error.compare_and_set(None, error):
            plugins.on_error(error, "concat_map: inner error after termination")
            return
        cancel(self._upstream)
        self._terminate()

    def inner_complete(self) -> None:
        self._active = False
        self._drain()

    # terminal delivery -----------------------------------------------------------------------
    def _terminate(self) -> None:
        """An error was stored: deliver it now unless an on_next is in flight (then its leave does)."""
        self._cancelled = True
        self._signal_terminal()
        if enter(self._wip):
            self._queue.clear()

    def _signal_terminal(self) -> None:
        """The terminal slot is set: deliver it now, or leave it to the ``on_next`` in flight,
        whose half-serializer leave delivers it (race: inner on_next vs a terminal signal)."""
        if self._hs.get_and_increment() == 0:
            self._deliver_terminal()

    def _deliver_terminal(self) -> None:
        d = self._downstream
        self._downstream = NOOP_SUBSCRIBER  # rule 3.13
        e = self._error.get()
        if e is None or e is _COMPLETE:
            d.on_complete()
        else:
            d.on_error(e)

    # downstream side ---------------------------------------------------------------------------
    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:  # rule 3.9
                if self._error.compare_and_set(None, err):
                    cancel(self._upstream)
                    self._inner.cancel()
                    self._terminate()
                return
        self._inner.request(n)

    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        self._inner.cancel()
        cancel(self._upstream)
        self._downstream = NOOP_SUBSCRIBER  # rule 3.13
        errors = self._errors
        if errors is not None:
            errors.report_remaining()  # delayed errors nobody will receive (RxJava: undeliverable)
        if enter(self._wip):
            self._queue.clear()

    # the drain -------------------------------------------------------------------------------
    def _drain(self) -> None:
        if not enter(self._wip):
            return
        missed = 1
        queue = self._queue
        inner = self._inner
        limit = self._limit
        # A run of scalar results emitted here holds the half-serializer once for the whole run
        # (one enter/leave per run instead of per element); it is released before an inner is
        # subscribed (the inner enters it itself) and before this loop leaves.
        holding = False
        while True:
            if self._cancelled:
                if holding:
                    self._hs_leave()  # delivers a terminal signal that arrived meanwhile
                queue.clear()
                return
            if not self._active:
                done = self._done  # read before the queue (race: last on_next vs on_complete)
                if done and self._errors is not None and not self._till_end and self._errors.has_error():
                    # delay_error at the boundary: the error stops the stream between inners
                    queue.clear()
                    if holding and not self._hs_leave():
                        return
                    self._terminate_delayed()
                    return
                if not queue:
                    if done:
                        if holding and not self._hs_leave():
                            return
                        if self._errors is not None:
                            self._terminate_delayed()
                            return
                        # the terminal slot decides complete vs a racing error (first one wins)
                        if self._error.compare_and_set(None, _COMPLETE):
                            self._signal_terminal()
                        return
                else:
                    item = queue.popleft()
                    c = self._consumed + 1
                    if c == limit:
                        c = 0
                        up = self._upstream.get()
                        if up is not None and up is not CANCELLED:
                            up.request(limit)
                    self._consumed = c
                    try:
                        p = self._mapper(item)
                    except Exception as ex:
                        self._fail(ex)
                        if holding:
                            self._hs_leave()
                        return
                    if p is None:
                        self._fail(none_result_error("concat_map"))
                        if holding:
                            self._hs_leave()
                        return
                    if type(p) is JustFlowable and len(p.items) == 1:  # scalar shortcut
                        if inner._requested >= MAX_DEMAND:  # unbounded: emit directly
                            if not holding:
                                if not self._hs_enter():
                                    queue.clear()
                                    return  # terminated
                                holding = True
                            self._downstream.on_next(p.items[0])
                            continue
                        if holding:
                            holding = False
                            if not self._hs_leave():
                                return
                        self._active = True
                        inner.set_subscription(_ScalarSubscription(inner, p.items[0]))
                    elif type(p) is EmptyFlowable:
                        continue  # empty(): nothing to subscribe
                    else:
                        if holding:
                            holding = False
                            if not self._hs_leave():
                                return
                        if not callable(getattr(p, "subscribe", None)):
                            self._fail(TypeError(f"concat_map(): the mapper returned a {type(p).__name__}, not a Publisher"))
                            return
                        self._active = True
                        p.subscribe(inner)
                    # the inner may have completed synchronously: look again before leaving
                    if not self._active:
                        continue
            if holding:
                holding = False
                if not self._hs_leave():
                    return
            missed = leave(self._wip, missed)
            if missed == 0:
                return

    # The half-serializer here is not _internal.drain.HalfSerializer, which does not fit: (1) its
    # terminal lives in its own ErrorCollector, which groups racing errors, while here the first
    # terminal wins the ``_error`` slot shared with the delay-error mode and the drain (later ones go
    # to the hook); (2) the drain holds it across a run of scalar results (one enter/leave per run),
    # which HalfSerializer's per-element ``on_next`` cannot express; (3) ``inner_next`` writes
    # enter/leave out: as calls to these methods they cost about 10% of an inner's per-element path,
    # and HalfSerializer.on_next 5-9% (measured with range(100).hide() inners, 2,000 of them).
    def _hs_enter(self) -> bool:
        """Enter the half-serializer; False once a terminal signal was delivered or is pending."""
        hs = self._hs
        with hs._lock:  # race: emission vs terminal signal from another thread
            if hs._value != 0:
                return False
            hs._value = 1
            return True

    def _hs_leave(self) -> bool:
        """Leave the half-serializer; if a terminal signal arrived meanwhile, deliver it (False)."""
        hs = self._hs
        with hs._lock:
            if hs._value == 1:
                hs._value = 0
                return True
        self._deliver_terminal()
        return False

    def _terminate_delayed(self) -> None:
        """Delay-error mode, from the drain with no inner active: signal the collected errors (or
        complete). The drain does not leave its loop, so later drains are no-ops."""
        assert self._errors is not None
        e = self._errors.terminate()
        if e is TERMINATED:
            return  # cancelled meanwhile
        if self._error.compare_and_set(None, _COMPLETE if e is None else e):
            self._signal_terminal()

    def _fail(self, error: BaseException) -> None:
        """The mapper failed (called from the drain): cancel everything and signal the error
        (in the delay-error mode together with the errors collected so far, as RxJava)."""
        errors = self._errors
        if errors is not None:
            errors.add(error)
            e = errors.terminate()
            if e is TERMINATED or e is None:
                return  # cancelled meanwhile
            error = e
        if not self._error.compare_and_set(None, error):
            plugins.on_error(error, "concat_map: mapper error after termination")
            return
        cancel(self._upstream)
        self._inner.cancel()
        self._cancelled = True
        self._queue.clear()
        self._signal_terminal()


@final
class _ConcatMapFlowable(Flowable[R]):
    __slots__ = ("_source", "_mapper", "_prefetch", "_delay_error", "_till_the_end")

    def __init__(
        self,
        source: Flowable[T],
        mapper: Callable[[T], Publisher[R]],
        prefetch: int,
        delay_error: bool = False,
        till_the_end: bool = True,
    ) -> None:
        self._source = source
        self._mapper = mapper
        self._prefetch = prefetch
        self._delay_error = delay_error
        self._till_the_end = till_the_end

    def _subscribe_actual(self, subscriber: Subscriber[R]) -> None:
        if self._delay_error:
            s = _ConcatMapSubscriber(subscriber, self._mapper, self._prefetch, True, self._till_the_end)
        else:
            s = _ConcatMapSubscriber(subscriber, self._mapper, self._prefetch)
        self._source.subscribe(s)


def concat_map(
    source: Flowable[T],
    mapper: Callable[[T], Publisher[R]],
    prefetch: int = 2,
    delay_error: bool = False,
    till_the_end: bool = True,
) -> Flowable[R]:
    op = "concat_map_delay_error" if delay_error else "concat_map"
    check_callable_arg(op, "mapper", mapper)
    positive_int(op, "prefetch", prefetch)
    check_bool(op, "delay_error", delay_error)
    check_bool(op, "till_the_end", till_the_end)
    return _ConcatMapFlowable(source, mapper, prefetch, delay_error, till_the_end)
