"""group_by(key_fn, value_fn, buffer_size): split a stream into keyed groups, each a Flowable.

Structure (RxJava 3's groupBy, written afresh):

* The main output emits one :class:`GroupedFlowable` per new key (it has a ``key`` attribute). A
  group is a unicast queue with its own demand and wip drain (:class:`_GroupState`); it can be
  subscribed once.
* The upstream is asked for ``buffer_size`` elements and replenished **as the groups consume**
  (a group's drain reports each batch it delivered; the upstream-thread fast path counts locally and
  requests in batches of ``limit = buffer_size - buffer_size // 4``). So at most ``buffer_size``
  elements are in flight or parked in group queues at any time.

Documented behaviours (what keeps one group from hanging the others):

* **Abandoned groups**: a group that was emitted but not subscribed by the time the main
  subscriber's ``on_next`` returned is *abandoned*: it is evicted (completed after the element that
  created it, which a late subscriber still receives) and its element is replenished upstream. A later
  element with the same key creates a new group. Groups cancelled by their subscriber are evicted the
  same way, and elements arriving for them are dropped (and replenished).
* **No demand for a new group**: if a new key arrives and the main subscriber has not requested
  another group, the operator cancels the upstream and signals ``MissingBackpressureError`` (to the
  main subscriber and every open group) instead of hanging.
* **Slow group** (``slow_group="error"``, the default): if one group's queue reaches ``buffer_size``
  parked elements (its subscriber does not request while the whole window of ``buffer_size``
  elements is parked in it) *and other groups are open* (they would starve), the operator cancels the
  upstream and signals ``MissingBackpressureError`` naming group_by, the key, the buffer size and the
  fix. If it is the only open group, that is plain backpressure (nobody else is starved): the
  operator waits. A group consumer that is merely slower than the source (``observe_on`` inside the
  group, say) trips this too once it falls a whole buffer behind: give it
  ``on_backpressure_buffer()`` inside the group, a larger ``buffer_size``, or choose
  ``slow_group="wait"``: plain backpressure as RxJava 3 does (the upstream waits for the slow group;
  the other groups wait too, and a group that is subscribed but never requests stalls everything).
* Cancelling the main subscription stops the creation of new groups; the upstream is cancelled when
  the main subscription and every group are cancelled (or done).

Races and guards:

* The key -> group dict is read and written **only on the upstream thread**: a group cancelled from
  another thread is only marked; the upstream thread evicts it when it next sees its key.
* Group drain: a ``wip`` ``AtomicInt`` per group (race: upstream ``on_next`` vs the group
  subscriber's ``request``/``cancel`` on another thread). Fast path on the upstream thread: once a
  drain has seen unbounded demand and emptied the queue it publishes ``fast_on_next``; then, while no
  drain is running (``wip == 0``), the element goes straight to the group's subscriber. A drain that
  starts concurrently (a request or cancel on another thread) finds an empty queue and emits
  nothing, so signals never overlap or reorder.
* Fused sources (``range``, ``from_iterable`` and stateless chains on them): group_by drives the
  builtin iterator itself (:class:`_PullSubscription`), so the per-element cost is one loop
  iteration, the key function, a dict lookup and the group subscriber's ``on_next``.
* ``_sub_state`` (``AtomicInt``): fresh -> subscribed, or fresh -> abandoned (race: a subscriber
  arriving on another thread vs the abandonment check).
* ``_live`` (``AtomicInt``): the main subscription plus one per open group; the one who brings it to
  0 cancels the upstream (race: main cancel vs group cancel).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable
from typing import Any, Final, Generic, TypeVar, cast, final

from ..._internal import plugins
from ..._internal.atomics import AtomicFlag, AtomicInt
from ..._internal.requests import MAX_DEMAND, add_request, produced, validate_request
from ..._internal.subscriptions import CANCELLED, error_empty
from ..._spec import Subscriber, Subscription
from ...errors import MissingBackpressureError, ProtocolViolationError
from .._base import none_result_error
from .._flowable import Flowable
from ._time_common import NOOP

__all__ = ["group_by", "GroupedFlowable"]

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")

_MAX: Final = MAX_DEMAND
_FRESH: Final = 0
_SUBSCRIBED: Final = 1
_ABANDONED: Final = 2


class GroupedFlowable(Flowable[V], Generic[K, V]):
    """One group of :meth:`Flowable.group_by`: a Flowable of the values whose key is ``key``.

    It can be subscribed once; subscribe during the main subscriber's ``on_next`` (as ``flat_map``
    does) or the group is abandoned (see ``group_by``).
    """

    __slots__ = ("key", "_state")

    def __init__(self, key: K, state: _GroupState) -> None:
        self.key = key
        self._state = state

    def _subscribe_actual(self, subscriber: Subscriber[V]) -> None:
        self._state.subscribe(subscriber)

    def __repr__(self) -> str:
        return f"GroupedFlowable(key={self.key!r})"


@final
class _GroupState:
    """A group's unicast queue, its Subscription, and its drain."""

    __slots__ = (
        "key",
        "_parent",
        "q",
        "requested",
        "wip",
        "downstream",
        "_once",
        "_sub_state",
        "cancelled",
        "done",
        "_error",
        "_accounted",
        "_terminated",
        "_released",
        "_request_error",
        "fast_on_next",
        "__weakref__",
    )

    def __init__(self, key: Any, parent: _GroupBySubscriber) -> None:
        self.key = key
        self._parent = parent
        self.q: deque[Any] = deque()
        self.requested = AtomicInt(0)  # race: request (group subscriber thread) vs drain
        self.wip = AtomicInt(0)  # race: upstream on_next vs request/cancel (queue-drain)
        self.downstream: Subscriber[Any] | None = None
        self._once = AtomicFlag()  # unicast: one subscriber
        self._sub_state = AtomicInt(_FRESH)  # race: late subscribe vs abandonment
        self.cancelled = False
        self.done = False
        self._error: BaseException | None = None
        self._accounted = True  # delivered elements replenish the upstream (not once abandoned)
        self._terminated = False
        self._released = AtomicFlag()  # race: abandonment vs a late subscriber's cancel (release once)
        self._request_error: BaseException | None = None
        # the subscriber's on_next once its demand is unbounded (sticky); None otherwise or after cancel
        self.fast_on_next: Callable[[Any], Any] | None = None

    def release(self) -> bool:
        """True once: this group stops counting towards the upstream's liveness."""
        return self._released.try_set()

    # -- subscription ----------------------------------------------------------------------------
    def subscribe(self, subscriber: Subscriber[Any]) -> None:
        if not self._once.try_set():
            error_empty(
                subscriber,
                ProtocolViolationError(
                    "2.12", f"group_by(): the group for key {self.key!r} can be subscribed only once"
                ),
            )
            return
        self._sub_state.compare_and_set(_FRESH, _SUBSCRIBED)
        self.downstream = subscriber
        subscriber.on_subscribe(self)
        self.drain()

    def try_abandon(self) -> bool:
        return self._sub_state.compare_and_set(_FRESH, _ABANDONED)

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                # rule 3.9: the group ends with the error, delivered by the drain (serially)
                self._request_error = err
                self.cancel()
                self.drain()
                return
        add_request(self.requested, n)
        self.drain()

    def cancel(self) -> None:
        self.fast_on_next = None
        if self.cancelled:
            return
        self.cancelled = True
        self._parent.group_cancelled(self)
        self.drain()  # clears the queue (and replenishes it) if no drain is running

    # -- from the upstream thread ------------------------------------------------------------------
    def on_error(self, error: BaseException) -> None:
        self._error = error
        self.done = True
        self.drain()

    def on_complete(self) -> None:
        self.done = True
        self.drain()

    # -- the drain -------------------------------------------------------------------------------
    def drain(self) -> None:
        wip = self.wip
        if wip.get_and_increment() != 0:
            return
        missed = 1
        q = self.q
        requested = self.requested
        while True:
            if self.cancelled:
                n = len(q)
                q.clear()
                if n and self._accounted:
                    self._parent.replenish(n)
                d = self.downstream
                self.downstream = None  # rule 3.13
                re = self._request_error
                if re is not None and d is not None and not self._terminated:
                    self._terminated = True
                    d.on_error(re)
            else:
                d = self.downstream
                if d is not None:
                    done = self.done  # read before the queue: every element precedes the terminal
                    if done and self._error is not None:
                        q.clear()
                        self._finish(d)
                    else:
                        r = requested.get()
                        n = len(q)
                        if r < _MAX and n > r:
                            n = r
                        e = 0
                        if n:
                            on_next = d.on_next
                            pop = q.popleft
                            while e < n and not self.cancelled:
                                on_next(pop())
                                e += 1
                            if r < _MAX:
                                produced(requested, e)  # once per batch
                            if self._accounted:
                                self._parent.replenish(e)
                        if done and not q and not self.cancelled:
                            self._finish(d)
                        elif r >= _MAX and not q and self.fast_on_next is None and not self.cancelled:
                            # enable the upstream thread's fast path. Set inside the drain, after
                            # emptying the queue: while wip is 0 and demand unbounded the queue stays
                            # empty (only the upstream thread appends, and then drains), so the fast
                            # path never overtakes a queued element.
                            self.fast_on_next = d.on_next
            missed = wip.add_and_get(-missed)
            if missed == 0:
                return

    def _finish(self, d: Subscriber[Any]) -> None:
        if self._terminated:
            return
        self._terminated = True
        self.downstream = None  # rule 3.13
        self.fast_on_next = None
        e = self._error
        if e is None:
            d.on_complete()
        else:
            d.on_error(e)


@final
class _GroupBySubscriber:
    _rs_no_wrap = True
    __slots__ = (
        "_downstream",
        "_upstream",
        "_key_fn",
        "_value_fn",
        "_buffer_size",
        "_error_on_slow",
        "_limit",
        "_groups",
        "_requested",
        "_emitted_groups",
        "_done",
        "_main_cancelled",
        "_live",
        "_fast",
        "_open",
        "__weakref__",
    )

    def __init__(
        self,
        downstream: Subscriber[Any],
        key_fn: Callable[[Any], Any],
        value_fn: Callable[[Any], Any] | None,
        buffer_size: int,
        error_on_slow: bool = True,
    ) -> None:
        self._downstream: Subscriber[Any] = downstream
        self._error_on_slow = error_on_slow
        self._upstream: Subscription = CANCELLED
        self._key_fn = key_fn
        self._value_fn = value_fn
        self._buffer_size = buffer_size
        self._limit = buffer_size - (buffer_size >> 2)
        self._groups: dict[Any, _GroupState] = {}  # upstream thread only
        self._requested = AtomicInt(0)  # cumulative group demand (race: request vs on_next)
        self._emitted_groups = 0
        self._done = False
        self._main_cancelled = AtomicFlag()
        self._live = AtomicInt(1)  # main + open groups (race: main cancel vs group cancel)
        self._fast = 0  # elements delivered on the fast path, not yet re-requested (upstream thread)
        self._open = 0  # groups in the dict (upstream thread)

    # -- upstream side -----------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if self._upstream is not CANCELLED:
            subscription.cancel()  # rule 2.5
            return
        self._upstream = subscription
        self._downstream.on_subscribe(self)
        subscription.request(self._buffer_size)

    def on_next(self, item: Any) -> None:
        if self._done:
            return
        try:
            key = self._key_fn(item)
            vf = self._value_fn
            if vf is not None:
                item = vf(item)
                if item is None:
                    raise none_result_error("group_by", "value_fn")
        except Exception as e:
            self._fail(e)
            return
        g = self._groups.get(key)
        if g is not None:
            fn = g.fast_on_next
            if fn is not None and g.wip._value == 0:
                # fast path: unbounded demand, nothing queued, no drain running (see docstring)
                fn(item)
                f = self._fast + 1
                if f >= self._limit:
                    self._fast = 0
                    self._upstream.request(f)
                else:
                    self._fast = f
                return
        self._slow_next(key, item, g)

    def run_fused(self, it: Any, permits: int, pull: _PullSubscription) -> bool:
        """The fused pull loop: up to ``permits`` parked elements; True when terminated."""
        if self._done:
            return True
        groups = self._groups
        key_fn = self._key_fn
        vf = self._value_fn
        get = groups.get
        try:
            for item in it:
                if pull.cancelled:  # rule 3.12 (also set when this operator failed or was cancelled)
                    return True
                if item is None:
                    raise pull._fusion.none_error()
                key = key_fn(item)
                if vf is not None:
                    item = vf(item)
                    if item is None:
                        raise none_result_error("group_by", "value_fn")
                g = get(key)
                if g is not None:
                    fn = g.fast_on_next
                    if fn is not None and g.wip._value == 0:
                        fn(item)  # fast path: consumed at once, no permit used
                        continue
                self._slow_next(key, item, g)
                if self._done:
                    return True
                permits -= 1
                if permits == 0:
                    return False
        except Exception as e:
            if not self._done:
                self._fail(e)
            else:
                plugins.on_error(e, "group_by: error after termination")
            return True
        if not self._done:
            self._terminate(None)
        return True

    def _slow_next(self, key: Any, v: Any, g: _GroupState | None) -> None:
        if g is not None and g.cancelled:
            del self._groups[key]  # evict: a cancelled group's key starts a new group
            self._open -= 1
            g = None
        if g is None:
            self._new_group(key, v)
            return
        q = g.q
        q.append(v)
        g.drain()
        if q:
            self._parked(g)

    def _parked(self, g: _GroupState) -> None:
        f = self._fast
        if f:
            self._fast = 0
            self._upstream.request(f)  # a group is slow: never let batching hold the window back
        if len(g.q) >= self._buffer_size and self._open > 1 and self._error_on_slow and not g.cancelled:
            self._fail(
                MissingBackpressureError(
                    f"group_by(): the group for key {g.key!r} has {len(g.q)} elements buffered "
                    f"(buffer_size={self._buffer_size}) because its subscriber is not requesting them, and the "
                    f"other groups cannot progress until it does; consume the groups concurrently (e.g. "
                    f"flat_map(..., max_concurrency=<number of keys>)), add on_backpressure_buffer() inside "
                    f"the group, or raise buffer_size"
                )
            )

    def _new_group(self, key: Any, v: Any) -> None:
        if self._main_cancelled.is_set():
            self.replenish(1)  # no new groups after the main cancel: drop the element
            return
        r = self._requested.get()
        if r < _MAX and r <= self._emitted_groups:
            self._fail(
                MissingBackpressureError(
                    f"group_by(): could not emit the new group for key {key!r} (group #{self._emitted_groups + 1}): "
                    f"the downstream has not requested it; request at least as many groups as there are "
                    f"keys, e.g. flat_map(..., max_concurrency=<number of keys>)"
                )
            )
            return
        g = _GroupState(key, self)
        self._groups[key] = g
        self._open += 1
        self._live.increment_and_get()
        g.q.append(v)
        self._emitted_groups += 1
        self._downstream.on_next(GroupedFlowable(key, g))
        if g.try_abandon():
            # rule of RxJava 3: not subscribed during on_next -> abandoned and evicted
            del self._groups[key]
            self._open -= 1
            g._accounted = False
            if g.release() and self._live.decrement_and_get() == 0:
                self._upstream.cancel()  # the main was cancelled meanwhile
            g.on_complete()
            self.replenish(1)
        elif g.q:
            self._parked(g)

    def on_error(self, error: BaseException) -> None:
        if self._done:
            plugins.on_error(error, "group_by: on_error after termination")
            return
        self._terminate(error)

    def on_complete(self) -> None:
        if self._done:
            return
        self._terminate(None)

    def _fail(self, error: BaseException) -> None:
        self._upstream.cancel()
        self._terminate(error)

    def _terminate(self, error: BaseException | None) -> None:
        self._done = True
        groups = list(self._groups.values())
        self._groups.clear()
        self._open = 0
        for g in groups:
            if error is None:
                g.on_complete()
            else:
                g.on_error(error)
        d = self._downstream
        self._downstream = NOOP
        if self._main_cancelled.is_set():
            if error is not None and not groups:
                plugins.on_error(error, "group_by: error after every subscriber cancelled")
            return
        if error is None:
            d.on_complete()
        else:
            d.on_error(error)

    # -- group callbacks (any thread) ------------------------------------------------------------
    def replenish(self, n: int) -> None:
        if n > 0 and not self._done:
            self._upstream.request(n)

    def group_cancelled(self, g: _GroupState) -> None:
        if g.release() and self._live.decrement_and_get() == 0:
            self._upstream.cancel()

    # -- main subscription -----------------------------------------------------------------------
    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                d = self._downstream
                self.cancel()
                d.on_error(err)  # rule 3.9
                return
        add_request(self._requested, n)

    def cancel(self) -> None:
        if self._main_cancelled.try_set():
            self._downstream = NOOP  # rule 3.13
            if self._live.decrement_and_get() == 0:
                self._upstream.cancel()


@final
class _PullSubscription:
    """Stands in for the upstream Subscription when group_by drives a fused source's iterator.

    Demand from group_by (its window of ``buffer_size``, replenished as groups consume) is counted
    in ``_permits``; the pull loop is a queue-drain on ``_wip`` (race: a group's drain on another
    thread replenishing vs the loop; rule 3.3: a replenish from inside the loop only adds permits).
    An element that goes through the fast path is consumed at once and costs no permit, so with
    unbounded group demand the loop is one ``for`` over the builtin iterator.
    """

    __slots__ = ("_parent", "_it", "_fusion", "_permits", "_wip", "cancelled")

    def __init__(self, parent: _GroupBySubscriber, it: Any, fusion: Any) -> None:
        self._parent = parent
        self._it = it
        self._fusion = fusion
        self._permits = AtomicInt(0)  # race: replenish (any thread) vs the pull loop
        self._wip = AtomicInt(0)
        self.cancelled = False

    def request(self, n: int) -> None:
        add_request(self._permits, n)
        self.pull()

    def cancel(self) -> None:
        self.cancelled = True

    def pull(self) -> None:
        wip = self._wip
        if wip.get_and_increment() != 0:
            return
        missed = 1
        parent = self._parent
        while True:
            if self.cancelled:
                self._it = None
                return
            permits = self._permits.get_and_set(0)
            if permits and parent.run_fused(self._it, permits, self):
                self._it = None
                return
            missed = wip.add_and_get(-missed)
            if missed == 0:
                return


@final
class _GroupByFlowable(Flowable[Any]):
    __slots__ = ("_source", "_key_fn", "_value_fn", "_buffer_size", "_error_on_slow")

    def __init__(
        self,
        source: Flowable[Any],
        key_fn: Callable[[Any], Any],
        value_fn: Callable[[Any], Any] | None,
        buffer_size: int,
        error_on_slow: bool,
    ) -> None:
        self._source = source
        self._key_fn = key_fn
        self._value_fn = value_fn
        self._buffer_size = buffer_size
        self._error_on_slow = error_on_slow

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        parent = _GroupBySubscriber(
            subscriber, self._key_fn, self._value_fn, self._buffer_size, self._error_on_slow
        )
        fz = self._source._fused()
        if fz is None:
            self._source.subscribe(parent)
            return
        # a fused synchronous source: drive its iterator directly (one loop, no per-element on_next)
        try:
            it = fz.factory()
        except Exception as e:
            error_empty(cast(Any, subscriber), e)
            return
        parent.on_subscribe(_PullSubscription(parent, it, fz))


def group_by(
    source: Flowable[T],
    key_fn: Callable[[T], Hashable],
    value_fn: Callable[[T], Any] | None = None,
    buffer_size: int = 128,
    slow_group: str = "error",
) -> Flowable[GroupedFlowable[Any, Any]]:
    if not callable(key_fn):
        raise TypeError(f"group_by(): key_fn must be callable, got {type(key_fn).__name__}")
    if value_fn is not None and not callable(value_fn):
        raise TypeError(f"group_by(): value_fn must be callable or None, got {type(value_fn).__name__}")
    if isinstance(buffer_size, bool) or not isinstance(buffer_size, int):
        raise TypeError(f"group_by(): buffer_size must be an int, got {type(buffer_size).__name__}")
    if buffer_size <= 0:
        raise ValueError(f"group_by(): buffer_size must be > 0, got {buffer_size}")
    if slow_group not in ("error", "wait"):
        raise ValueError(f"group_by(): slow_group must be 'error' or 'wait', got {slow_group!r}")
    return _GroupByFlowable(source, key_fn, value_fn, buffer_size, slow_group == "error")
