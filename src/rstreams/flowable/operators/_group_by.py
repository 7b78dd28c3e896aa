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
  elements is parked in it) *and other groups are open* (they would starve; a group its subscriber
  cancelled does not count), the operator cancels the
  upstream and signals ``MissingBackpressureError`` naming group_by, the key, the buffer size and the
  fix. If it is the only open group, that is plain backpressure (nobody else is starved): the
  operator waits. A group consumer that is merely slower than the source (``observe_on`` inside the
  group, say) trips this too once it falls a whole buffer behind: give it
  ``on_backpressure_buffer()`` inside the group, a larger ``buffer_size``, or choose
  ``slow_group="wait"``: plain backpressure as RxJava 3 does (the upstream waits for the slow group;
  the other groups wait too, and a group that is subscribed but never requests stalls everything).
  A window that fills while a group's consumer is replenishing (``replenish`` on the stack, on
  any thread) is not judged: a synchronous source re-enters there while, e.g., flat_map's drain
  has requested one group and is about to request the others; the upstream then waits as in
  RxJava until a group is requested again (so a slow group found only then waits instead of
  failing).
* Cancelling the main subscription stops the creation of new groups; the upstream is cancelled when
  the main subscription and every group are cancelled (or done).
* **Expiry** (``expire_after_count``, ``expire_after``, ``expire_after_idle``; see
  :class:`_ExpiringGroupBySubscriber`): an expired group completes after what it holds and
  releases its share of ``_live``; the key's next element opens a new group.
* **Fused group folds**: ``flat_map(lambda g: g.count())`` (any aggregate of the group, optionally
  followed by ``map``) is recognized by flat_map (:func:`group_fold`): the group hands its
  elements to a :class:`GroupFold` instead of a chain of subscribers, with the same signals.

Cost per group (20,000 groups): one :class:`_GroupState` (no lock of its own: the groups of a
subscription share one; no atomics objects), no queue once idle, the parent's callbacks shared by
all groups, the fast path reading the group's subscriber (no bound method per group); with a fused
fold no aggregate subscriber, deferred-scalar subscription or flat_map inner either, and for
``count``/``to_list``/``reduce`` (optionally one ``map``) nothing per group but the fold object
(``count``/``to_list`` share one folder). Per new group: one lock round trip to count it in
``_live`` and enter the main emission, one to leave it, one to register the fold with flat_map,
one to claim the group and attach the fold, one to finish it at completion; the objects that
outlive the emission are the group state and the fold (and the user's mapper closure held by the
fold for the result's ``map``). Per element on the fast path: the key function, one dict lookup,
two slot reads of the group (one cache line) and the subscriber's ``on_next``.

Races and guards:

* The key -> group dict is read and written **only on the upstream thread** (without expiry): a
  group cancelled from another thread is only marked; the upstream thread evicts it when it next
  sees its key. With expiry, timers remove groups too: the dict is then guarded by a lock (see
  :class:`_ExpiringGroupBySubscriber`).
* Group drain: a ``wip`` per group (under the groups' lock; race: upstream ``on_next`` vs the group
  subscriber's ``request``/``cancel`` on another thread); the group is a :class:`UnicastGroup`
  (``_unicast_group.py``, shared with ``window``), which documents its own guards. Fast path on the
  upstream thread: once a drain has seen unbounded demand and emptied the queue it publishes
  ``fast`` (its subscriber); then, while no drain is running (``wip == 0``), the element goes
  straight to the group's subscriber. A drain that starts concurrently (a request or cancel on
  another thread) finds an empty queue and emits nothing, so elements never overlap or reorder.
* Fused sources (``range``, ``from_iterable`` and stateless chains on them): group_by drives the
  builtin iterator itself (:class:`_PullSubscription`), so the per-element cost is one loop
  iteration, the key function, a dict lookup and the group subscriber's ``on_next``.
* A group's subscription state (fresh -> subscribed, or fresh -> abandoned) is a flag set under
  the group's lock (race: a subscriber arriving on another thread vs the abandonment check).
* Main output: a :class:`HalfSerializer` (race: a new group emitted on the upstream thread vs a
  rule 3.9 error from the main ``request`` on another thread; rule 1.3); its ``on_next`` is inlined
  in ``_new_group`` (the same lock round trips, fewer calls).
* ``_live`` (an int under the HalfSerializer's lock, which is never held while anyone calls out):
  the main subscription plus one per open group; the one who brings it to 0 cancels the upstream
  (race: main cancel vs group cancel vs a group opening; a group releases its share once, on
  cancel, abandonment or expiry: ``UnicastGroup.release``).
"""

from __future__ import annotations

import functools
import operator
import threading
import time
from _thread import get_ident
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any, ClassVar, Final, Generic, Protocol, TypeVar, cast, final

from ..._internal import plugins
from ..._internal.atomics import AtomicFlag, AtomicInt
from ..._internal.drain import HalfSerializer
from ..._internal.requests import DEFAULT_PREFETCH, MAX_DEMAND, add_request, validate_request
from ..._internal.subscriptions import CANCELLED, error_empty
from ..._spec import Subscriber, Subscription
from ...errors import MissingBackpressureError
from ...schedulers import Scheduler, Worker
from .._base import none_result_error
from .._enums import NOTSET
from .._flowable import Flowable
from .._fused import batch_sink
from ._aggregate import _STOP, _AggregateFlowable, _Count, _Folder, _Reduce, _stop_value, _ToList
from ._map_filter import _MapFlowable
from ._time_common import NOOP, check_count, check_duration, resolve_scheduler
from ._unicast_group import _SUBSCRIBED, UnicastGroup

__all__ = ["group_by", "GroupedFlowable", "FOLDABLE", "group_fold"]

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")


class GroupedFlowable(Flowable[V], Generic[K, V]):
    """One group of :meth:`Flowable.group_by`: a Flowable of the values whose key is ``key``.

    It can be subscribed once; subscribe during the main subscriber's ``on_next`` (as ``flat_map``
    does) or the group is abandoned (see ``group_by``).

    Departure from RxJava 3 (whose ``GroupedFlowable`` and its state are two objects): the group
    is one object, the Flowable and its own unicast queue, so the Subscription its subscriber
    receives is the group itself (one object per group instead of two). That side is the
    protocol's, not API: it is not on this class (nor in ``dir()`` of a group), only on the
    private class of the objects group_by emits.
    """

    __slots__ = ()

    key: K  # the key of this group's values

    def __repr__(self) -> str:
        # getattr: a GroupedFlowable made by hand (only group_by makes working ones) has no key
        return f"GroupedFlowable(key={getattr(self, 'key', '<none: not made by group_by>')!r})"


@final
class _GroupState(GroupedFlowable[Any, Any], UnicastGroup):
    """A group: the public :class:`GroupedFlowable`, its unicast queue, its Subscription, and its
    drain (:class:`UnicastGroup`), in one object.

    ``subscribe`` is Flowable's (the public one; it calls :meth:`_subscribe_actual`, which hands
    the subscriber to ``UnicastGroup.subscribe``). Delivered (or, on cancel, dropped) elements
    replenish the upstream window; the group releases its share of ``_live`` when cancelled or
    abandoned.
    """

    # seen/due/age_due/_timer: expiry only (set by _ExpiringGroupBySubscriber, under its lock)
    __slots__ = ("key", "seen", "due", "age_due", "_timer")
    seen: int  # elements routed to it
    due: float  # when it expires (scheduler time; inf: never by time)
    age_due: float  # its expire_after deadline (inf: none)
    _timer: Any  # its pending timer's handle, or None

    # built by _GroupBySubscriber._new_group: UnicastGroup's __init__ with the parent's callbacks
    # (bound once, shared by every group) and lock, then ``key`` (no __init__ of its own: one
    # Python call per group instead of two)
    key: Any

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        UnicastGroup.subscribe(self, subscriber)

    def _subscribed_twice(self) -> str:
        return f"group_by(): the group for key {self.key!r} can be subscribed only once"

    def __dir__(self) -> list[str]:
        # the public face is GroupedFlowable's (what a type checker shows): the queue and the
        # Subscription side (request, cancel, on_next...) are the protocol's, not API to call
        return sorted(set(dir(GroupedFlowable)) | {"key"})


@final
class _MainOut:
    """The main subscriber behind group_by's HalfSerializer; NOOP once terminated or cancelled
    (rule 3.13)."""

    _rs_no_wrap = True
    __slots__ = ("d",)

    def __init__(self, d: Subscriber[Any]) -> None:
        self.d = d

    def on_subscribe(self, s: Subscription) -> None:  # pragma: no cover - never called
        self.d.on_subscribe(s)

    def on_next(self, item: Any) -> None:
        self.d.on_next(item)

    def on_error(self, error: BaseException) -> None:
        d = self.d
        self.d = NOOP
        d.on_error(error)

    def on_complete(self) -> None:
        d = self.d
        self.d = NOOP
        d.on_complete()


class _GroupBySubscriber:
    _rs_no_wrap = True
    _expiring: ClassVar[bool] = False  # groups expire (_ExpiringGroupBySubscriber)
    __slots__ = (
        "_dict_lock",
        "_out",
        "_hs",
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
        "_live_lock",
        "_fast",
        "_open",
        "_consuming",
        "_release_cb",
        "_replenish_cb",
        "_credit",
        "_emit_ident",
        "_group_lock",
        "_pulled",
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
        self._out = _MainOut(downstream)
        # the main signals: new groups on the upstream thread, a rule 3.9 error on the requesting
        # thread (race: they must not overlap, rule 1.3)
        self._hs = HalfSerializer(self._out)
        self._error_on_slow = error_on_slow
        self._upstream: Subscription = CANCELLED
        self._pulled = False  # the upstream is group_by's own pull loop (_PullSubscription)
        self._key_fn = key_fn
        self._value_fn = value_fn
        self._buffer_size = buffer_size
        self._limit = buffer_size - (buffer_size >> 2)
        self._groups: dict[Any, _GroupState] = {}  # upstream thread only
        self._requested = AtomicInt(0)  # cumulative group demand (race: request vs on_next)
        self._emitted_groups = 0
        self._done = False
        self._main_cancelled = AtomicFlag()
        # main + open groups, an int under the HalfSerializer's lock (race: main cancel vs group
        # cancel vs a group opening): that lock is never held while anyone calls out, and sharing
        # it lets a new group count itself and enter the main emission in one round trip
        self._live = 1
        self._live_lock = self._hs._lock
        self._fast = 0  # elements delivered on the fast path, not yet re-requested (upstream thread)
        self._open = 0  # groups in the dict (upstream thread)
        # replenishes in progress (race: group drains on several threads replenish while the
        # upstream thread parks): a window that fills while a consumer is replenishing is not
        # judged (see _parked)
        self._consuming = AtomicInt(0)
        self._release_cb = self.group_released
        self._replenish_cb = self.replenish
        # fused sources: window returned while a new group is emitted, taken back by the pull loop
        # right after the emission (no request per new group); _emit_ident: the pull loop's thread
        # id while it emits a new group, else 0. Race: a group drained on another thread meanwhile
        # replenishes as usual (its id never equals the emitter's); only the upstream thread writes
        # _emit_ident and touches _credit
        self._credit = 0
        self._emit_ident = 0
        # None: the dict is the upstream thread's alone; with expiry, timers touch it too
        self._dict_lock: threading.Lock | None = None
        # every group's lock (UnicastGroup's wip/requested/flags): one for all the groups (with
        # timed expiry, the dict's), never held while anyone calls out, so sharing it costs only
        # waits of a few attribute updates between groups drained on different threads; a lock
        # per group was one more object per group for the allocator and the garbage collector
        self._group_lock = threading.Lock()

    # -- upstream side -----------------------------------------------------------------------------
    def on_subscribe(self, subscription: Subscription) -> None:
        if self._upstream is not CANCELLED:
            subscription.cancel()  # rule 2.5
            return
        self._upstream = subscription
        self._pulled = type(subscription) is _PullSubscription
        self._out.d.on_subscribe(self)
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
            # inside the try: an unhashable key raises TypeError here, which must fail the stream
            # (it escaped on_next, rule 2.13, and the stream hung)
            g = self._groups.get(key)
        except Exception as e:
            self._fail(e)
            return
        if g is not None:
            fast = g.fast
            if fast is not None and g.wip == 0:
                # fast path: unbounded demand, nothing queued, no drain running (see docstring)
                fast.on_next(item)
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
                if g is None:
                    self._new_group(key, item)
                else:
                    fast = g.fast
                    if fast is not None and g.wip == 0:
                        fast.on_next(item)  # fast path: consumed at once, no permit used
                        continue
                    self._slow_next(key, item, g)
                if self._done:
                    return True
                c = self._credit  # _permit_used, inlined (once per new group)
                if c:
                    self._credit = 0
                    permits += c
                permits -= 1
                if permits == 0:
                    return False
        except Exception as e:
            self._fused_failed(e)
            return True
        if not self._done:
            self._terminate(None)
        return True

    def _permit_used(self, permits: int) -> int:
        """The pull loop parked an element: one permit fewer, plus those consumed while its new
        group was emitted (they come back here: ``_credit``)."""
        c = self._credit
        if c:
            self._credit = 0
            permits += c
        return permits - 1

    def _fused_failed(self, e: BaseException) -> None:
        if not self._done:
            self._fail(e)
        else:
            plugins.on_error(e, "group_by: error after termination")

    def _slow_next(self, key: Any, v: Any, g: _GroupState | None) -> None:
        if g is not None and g.cancelled:
            del self._groups[key]  # evict: a cancelled group's key starts a new group
            self._open -= 1
            g = None
        if g is None:
            self._new_group(key, v)
            return
        g.push(v)
        g.drain()
        if g.q:
            self._parked(g)
        else:
            g.trim()  # an idle group holds no queue

    def _parked(self, g: _GroupState) -> None:
        q = g.q
        parked = len(q) if q else 0
        f = self._fast
        if f:
            self._fast = 0
            self._upstream.request(f)  # a group is slow: never let batching hold the window back
        if (
            parked >= self._buffer_size
            and self._consuming._value == 0
            and self._open > 1
            and self._error_on_slow
            and not g.cancelled
            and self._others_open(g)
        ):
            self._fail(
                MissingBackpressureError(
                    f"group_by(): the group for key {g.key!r} has {parked} elements buffered "
                    f"(buffer_size={self._buffer_size}) because its subscriber is not requesting them, and the "
                    f"other groups cannot progress until it does; consume the groups concurrently (e.g. "
                    f"flat_map(..., max_concurrency=<number of keys>)), add on_backpressure_buffer() inside "
                    f"the group, or raise buffer_size"
                )
            )

    def _others_open(self, g: _GroupState) -> bool:
        """Whether a group other than ``g`` is still open (would starve behind ``g``).

        ``_open`` also counts groups cancelled by their subscriber but not yet evicted (eviction
        waits for their key to come again): they wait for nothing, so they do not count. Runs only
        when a group's queue is full (upstream thread, like every dict access; with expiry under
        the dict's lock: a timer may evict a group meanwhile).
        """
        lock = self._dict_lock
        if lock is not None:
            with lock:
                return any(other is not g and not other.cancelled for other in self._groups.values())
        for other in self._groups.values():
            if other is not g and not other.cancelled:
                return True
        return False

    def _new_group(self, key: Any, v: Any) -> None:
        if self._main_cancelled._value:
            self.replenish(1)  # no new groups after the main cancel: drop the element
            return
        r = self._requested._value
        if r < MAX_DEMAND and r <= self._emitted_groups:
            self._fail(
                MissingBackpressureError(
                    f"group_by(): could not emit the new group for key {key!r} (group #{self._emitted_groups + 1}): "
                    f"the downstream has not requested it; request at least as many groups as there are "
                    f"keys, e.g. flat_map(..., max_concurrency=<number of keys>)"
                )
            )
            return
        g = _GroupState(self._release_cb, self._replenish_cb, self._group_lock)
        g.key = key
        expiring = self._expiring
        hl = self._live_lock
        if expiring:
            # its share of _live before a timer can see it (an expiry releases it: counted first,
            # or the main's share alone would reach 0 and cancel the upstream); a raw round trip
            hl.acquire()
            self._live += 1
            hl.release()
            # parked before the emission: a timer may expire the group meanwhile, and it then
            # completes after what it holds (the producer's first append, UnicastGroup.push)
            g.q = deque((v,))
            self._opened(g)  # expiry: its count, deadlines and timer; inserted (under the lock if timed)
        else:
            self._groups[key] = g
            self._open += 1
        self._emitted_groups += 1
        hs = self._hs
        # HalfSerializer.on_next, inlined (once per group), and (without expiry) the group's share
        # of _live in the same round trip of its lock (nothing in between can raise; nobody can
        # release the group before it is emitted); the race it guards: a rule 3.9 error from the
        # main request on another thread vs this emission (rule 1.3: the error waits until it
        # returned)
        hl.acquire()
        if not expiring:
            self._live += 1
        w = 1 if hs._done else hs._wip
        if not w:
            hs._wip = 1
        hl.release()
        if not w:
            if self._pulled:
                # the pull loop's own window: what is consumed during the emission comes back
                # as permits of the loop (run_fused), not as a request per new group
                self._emit_ident = get_ident()
                try:
                    self._out.d.on_next(g)
                finally:
                    self._emit_ident = 0
            else:
                self._out.d.on_next(g)
            hl.acquire()
            w = hs._wip - 1
            hs._wip = w
            hl.release()
            if w:  # a terminal signal arrived during on_next: delivered here, after it
                hs._errors.terminate_into(hs._downstream)
                hs._done = True
        if not g._flags & _SUBSCRIBED and g.try_abandon():  # a raised flag is final: plain read first
            # rule of RxJava 3: not subscribed during on_next -> abandoned and evicted
            g.replenish = None  # its element is replenished here, not when a late subscriber takes it
            if not expiring:
                g.push(v)  # parked for a late subscriber (its drain reads the queue afresh)
            if self._evict(g):  # else a timer expired it meanwhile (and completes it)
                g.release()  # cancels the upstream if the main was cancelled meanwhile
                g.on_complete()
            self.replenish(1)
        elif expiring:
            if g.seen == self._count_limit():
                if self._evict(g):
                    self._expire(g)  # expire_after_count=1: the group is its first element
            elif g.q:
                self._parked(g)
            else:
                g.q = None  # consumed during the emission: an idle group holds no queue (UnicastGroup.trim)
        else:
            # the first element goes after the emission, as any later one: straight to a subscriber
            # that took unbounded demand (a fold, flat_map's inner), else queued and drained
            fast = g.fast
            if fast is not None and g.wip == 0:
                fast.on_next(v)
                # consumed at once: its permit comes back to the pull loop (run_fused), or is
                # re-requested at once as when a drain delivers it
                if self._pulled:
                    self._credit += 1
                else:
                    self.replenish(1)
            else:
                g.push(v)
                g.drain()
                if g.q:
                    self._parked(g)
                else:
                    g.q = None  # an idle group holds no queue (UnicastGroup.trim)

    def _evict(self, g: _GroupState) -> bool:
        """Remove ``g`` from the dict if it is still there; True when this call removed it (the
        remover completes it: with expiry, a timer and the upstream thread may both try)."""
        lock = self._dict_lock
        if lock is None:
            del self._groups[g.key]
            self._open -= 1
            return True
        with lock:
            if self._groups.get(g.key) is not g:
                return False
            del self._groups[g.key]
            self._open -= 1
            return True

    # -- expiry hooks (see _ExpiringGroupBySubscriber) ---------------------------------------------
    def _opened(self, g: _GroupState) -> None:  # pragma: no cover - expiry only
        raise NotImplementedError

    def _count_limit(self) -> int | None:
        return None

    def _expire(self, g: _GroupState) -> None:  # pragma: no cover - expiry only
        raise NotImplementedError

    def _stop_timers(self) -> None:
        """Upstream terminated or cancelled: no group expires any more (expiry only)."""

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
        self._cancel_upstream()
        self._terminate(error)

    def _cancel_upstream(self) -> None:
        self._upstream.cancel()
        self._stop_timers()

    def _terminate(self, error: BaseException | None) -> None:
        self._done = True
        self._stop_timers()
        lock = self._dict_lock
        if lock is None:
            groups = list(self._groups.values())
            self._groups.clear()
            self._open = 0
        else:
            with lock:  # race: a timer expiring a group (whoever removes a group completes it)
                groups = list(self._groups.values())
                self._groups.clear()
                self._open = 0
        if error is None:
            _complete_groups(groups)
        else:
            for g in groups:
                g.on_error(error)
        if self._main_cancelled.is_set():
            if error is not None and not groups:
                plugins.on_error(error, "group_by: error after every subscriber cancelled")
            return
        if error is None:
            self._hs.on_complete()
        else:
            self._hs.on_error(error)

    # -- group callbacks (any thread) ------------------------------------------------------------
    def replenish(self, n: int) -> None:
        """A group delivered (or dropped) ``n`` parked elements: ask the upstream for as many.

        The request may re-enter the upstream (a synchronous source emits inside it, while the
        consumer that replenished, e.g. flat_map's drain, is still on the stack with requests for
        other groups to come). The pull loop does not re-enter itself (``_PullSubscription``'s
        wip), and a window that fills up meanwhile is not judged a slow group (``_consuming``):
        the upstream then waits, as RxJava's groupBy does, until a group is requested again.
        """
        if n > 0 and not self._done:
            if self._emit_ident == get_ident():
                self._credit += n  # the upstream thread, emitting a new group: taken back after it
                return
            up = self._upstream
            pull = up if type(up) is _PullSubscription else None
            if pull is not None and not pull.enter(n):
                return  # the pull loop is running (here or on another thread): it takes the permits
            c = self._consuming
            c.increment_and_get()
            try:
                if pull is not None:
                    pull.run()
                else:
                    up.request(n)
            finally:
                c.decrement_and_get()

    def group_released(self) -> None:
        """A group was cancelled, abandoned or expired (once per group: ``UnicastGroup.release``)."""
        lock = self._live_lock
        lock.acquire()  # a raw round trip (see _live)
        live = self._live - 1
        self._live = live
        lock.release()
        if live == 0 and not self._done:
            # not after the upstream terminated: its subscription counts as cancelled (rule 2.4)
            self._cancel_upstream()

    # -- main subscription -----------------------------------------------------------------------
    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                if self._main_cancelled.try_set():  # after a cancel a request is a no-op (rule 3.6)
                    # rule 3.9, through the HalfSerializer: if the upstream thread is inside
                    # on_next(group), the error follows it (it used to overlap it: rule 1.3)
                    self._hs.on_error(err)
                    self._release_main()
                return
        add_request(self._requested, n)

    def cancel(self) -> None:
        if self._main_cancelled.try_set():
            self._out.d = NOOP  # rule 3.13
            self._release_main()

    def _release_main(self) -> None:
        lock = self._live_lock
        lock.acquire()  # a raw round trip (see _live)
        live = self._live - 1
        self._live = live
        lock.release()
        if live == 0:
            self._cancel_upstream()


@final
class _ExpiringGroupBySubscriber(_GroupBySubscriber):
    """group_by with group expiry: ``expire_after_count``, ``expire_after`` (since the group
    opened) and ``expire_after_idle`` (since its last element).

    An expired group leaves the dict, releases its share of ``_live`` and completes (after the
    elements it already holds); the key's next element opens a new group. Timers run on a worker
    of ``scheduler`` (one per subscription, disposed when the upstream terminates or is
    cancelled); each group has at most one pending timer (idle groups re-arm it lazily: an element
    only moves the group's deadline, ``due``).

    Races and guards: the timer thread vs the upstream thread. ``_dict_lock`` guards the dict,
    ``_open`` and each group's expiry fields, and is also every group's own lock
    (:class:`UnicastGroup`'s ``wip``/``requested``/flags), so one acquisition per element both
    looks the group up and claims its drain. Whoever removes a group from the dict under the lock
    completes it (the upstream thread at a count limit, at a deadline it sees first, or at
    abandonment; the timer; ``_terminate``), so a group completes once and an element is either
    queued into (or handed to) the group before it is removed, or finds it gone and opens a new
    group: an element at the same instant as the expiry goes to exactly one group. An element
    whose time is at or past its group's deadline (the timer is late, or runs at that same
    virtual instant after it) opens a new group, so the outcome does not depend on which of the
    two threads comes first. The fast path claims the group's ``wip`` under the lock instead of
    only reading it (a timer completing the group meanwhile is drained by :meth:`UnicastGroup.leave`
    after the element, never beside it: rule 1.3). The lock is never held while calling out.
    With ``expire_after_count`` alone there is no timer and no lock: everything happens on the
    upstream thread, as in group_by without expiry.
    """

    __slots__ = ("_max_count", "_age", "_idle", "_timed", "_scheduler", "_worker", "_now", "_on_timer_cb")
    _expiring = True

    def __init__(
        self,
        downstream: Subscriber[Any],
        key_fn: Callable[[Any], Any],
        value_fn: Callable[[Any], Any] | None,
        buffer_size: int,
        error_on_slow: bool,
        max_count: int | None,
        age: float | None,
        idle: float | None,
        scheduler: Scheduler | None,
    ) -> None:
        super().__init__(downstream, key_fn, value_fn, buffer_size, error_on_slow)
        self._max_count = max_count
        self._age = age
        self._idle = idle
        self._timed = age is not None or idle is not None
        # only timers touch the dict from another thread: expire_after_count alone runs lock-free
        # on the upstream thread, as group_by without expiry does
        if self._timed:
            self._dict_lock = self._group_lock = threading.Lock()  # see the class docstring
        self._scheduler = scheduler
        self._worker: Worker | None = None
        self._now: Callable[[], float] = (
            _zero
            if scheduler is None
            # the base class's clock is time.monotonic: called directly (one call less per element)
            else time.monotonic
            if type(scheduler).now is Scheduler.now
            else scheduler.now
        )
        self._on_timer_cb = self._on_timer

    def on_subscribe(self, subscription: Subscription) -> None:
        if self._upstream is CANCELLED and self._scheduler is not None:
            self._worker = self._scheduler.create_worker()
        super().on_subscribe(subscription)

    def _count_limit(self) -> int | None:
        return self._max_count

    def _stop_timers(self) -> None:
        w = self._worker
        if w is not None:
            w.dispose()  # drops every pending timer (and the groups they reference)

    def _opened(self, g: _GroupState) -> None:
        now = self._now()
        age = self._age
        g.seen = 1
        g.age_due = _INF if age is None else now + age
        idle = self._idle
        due = g.age_due if idle is None else min(g.age_due, now + idle)
        g.due = due
        g._timer = None
        lock = self._dict_lock
        if lock is None:  # no timers: the upstream thread's alone
            self._groups[g.key] = g
            self._open += 1
            return
        with lock:
            self._groups[g.key] = g
            self._open += 1
        w = self._worker
        if w is not None and due < _INF:
            g._timer = w.schedule(functools.partial(self._on_timer_cb, g, due), due - now)

    def _on_timer(self, g: _GroupState, armed: float) -> None:
        """A group's timer (the scheduler's thread), armed for the deadline ``armed``: expire the
        group, or re-arm for its moved deadline (elements arrived meanwhile). A deadline that did
        not move expires even if the clock reads a hair before it (a scheduler's time resolution,
        e.g. TestScheduler's nanoseconds: re-arming for a sub-resolution delay would never end)."""
        now = self._now()
        with self._dict_lock:  # type: ignore[union-attr]
            if self._groups.get(g.key) is not g:
                return  # gone: expired, evicted or terminated already
            due = g.due
            if now < due and due > armed:
                expire = False
            else:
                del self._groups[g.key]
                self._open -= 1
                expire = True
        if expire:
            self._expire(g)
            return
        w = self._worker
        if w is not None:
            g._timer = w.schedule(functools.partial(self._on_timer_cb, g, due), due - now)

    def _expire(self, g: _GroupState) -> None:
        """``g`` left the dict (this thread removed it): it completes after what it holds."""
        t = g._timer
        g._timer = None
        if t is not None:
            t.dispose()
        g.release()  # no longer keeps the upstream alive
        g.on_complete()  # its only producer now: whoever removed it from the dict

    # -- upstream side -------------------------------------------------------------------------
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
            hash(key)  # an unhashable key fails the stream here (rule 2.13)
        except Exception as e:
            self._fail(e)
            return
        if self._next(key, item):
            f = self._fast + 1
            if f >= self._limit:
                self._fast = 0
                self._upstream.request(f)
            else:
                self._fast = f

    def run_fused(self, it: Any, permits: int, pull: _PullSubscription) -> bool:
        if self._done:
            return True
        key_fn = self._key_fn
        vf = self._value_fn
        step = self._next
        try:
            for item in it:
                if pull.cancelled:
                    return True
                if item is None:
                    raise pull._fusion.none_error()
                key = key_fn(item)
                if vf is not None:
                    item = vf(item)
                    if item is None:
                        raise none_result_error("group_by", "value_fn")
                if step(key, item):
                    continue  # consumed at once: no permit used
                if self._done:
                    return True
                permits = self._permit_used(permits)
                if permits == 0:
                    return False
        except Exception as e:
            self._fused_failed(e)
            return True
        if not self._done:
            self._terminate(None)
        return True

    def _next(self, key: Any, item: Any) -> bool:
        """Route one element (upstream thread); True when it went out on the fast path."""
        if not self._timed:
            return self._next_counted(key, item)
        now = self._now()
        stale: _GroupState | None = None
        last = False
        fast: Subscriber[Any] | None = None
        with self._dict_lock:  # type: ignore[union-attr]
            groups = self._groups
            g = groups.get(key)
            if g is not None and (g.cancelled or now >= g.due):
                del groups[key]  # evicted: cancelled by its subscriber, or at/after its deadline
                self._open -= 1
                if not g.cancelled:
                    stale = g
                g = None
            if g is not None:
                idle = self._idle
                if idle is not None:
                    d = now + idle
                    g.due = d if d < g.age_due else g.age_due
                seen = g.seen + 1
                g.seen = seen
                if seen == self._max_count:
                    del groups[key]  # the group's last element: the next one opens a new group
                    self._open -= 1
                    last = True
                fast = g.fast
                if fast is not None and g.wip == 0:
                    g.wip = 1  # the fast path claims the group's drain (the group's lock is this one)
                else:
                    fast = None
                    g.push(item)  # under the lock: before any expiry of this group
        if stale is not None:
            self._expire(stale)
        if g is None:
            self._new_group(key, item)
            return False
        if fast is not None:
            try:
                fast.on_next(item)
            finally:
                with g._lock:  # UnicastGroup.leave, inlined: nobody signalled meanwhile (the rule)
                    quiet = g.wip == 1
                    if quiet:
                        g.wip = 0
                if not quiet:
                    g._drain_loop()  # a completion or cancel arrived during the element
            if last:
                self._expire(g)
            return True
        g.drain()
        if g.q:
            self._parked(g)
        else:
            g.trim()
        if last:
            self._expire(g)
        return False

    def _next_counted(self, key: Any, item: Any) -> bool:
        """``expire_after_count`` alone: no timer, so the dict and the fast path are the upstream
        thread's alone, as without expiry (no lock, no claim of the group's drain)."""
        groups = self._groups
        g = groups.get(key)
        if g is not None and g.cancelled:
            del groups[key]  # evicted: cancelled by its subscriber
            self._open -= 1
            g = None
        if g is None:
            self._new_group(key, item)
            return False
        seen = g.seen + 1
        g.seen = seen
        last = seen == self._max_count
        if last:
            del groups[key]  # the group's last element: the next one opens a new group
            self._open -= 1
        fast = g.fast
        if fast is not None and g.wip == 0:
            fast.on_next(item)  # the fast path of group_by without expiry (see the module docstring)
            if last:
                self._expire(g)
            return True
        g.push(item)
        g.drain()
        if g.q:
            self._parked(g)
        else:
            g.trim()
        if last:
            self._expire(g)
        return False


def _complete_groups(groups: list[_GroupState]) -> None:
    """The upstream completed: complete every group, in the order they were opened.

    A group folded in place by ``flat_map`` (a :class:`GroupFold` on the group's fast path, no
    drain running, nothing queued) is finished here without its drain. Into a batch-taking
    downstream of flat_map (an aggregate, ``observe_on``, a bridge: library code that takes a list
    as the fused sources hand it one), the results of a run of such groups go in one call
    (:meth:`FlatMapSubscriber._inners_last`: one pass through its emitter, one list). Into any
    other downstream they go one by one, each result computed (the user's ``map`` after the
    aggregate) just before it is emitted: a downstream that cancels runs no ``map`` of a later
    group, as when the groups complete through their drains. Any other group completes through its
    drain, after the results of the folds before it. Same signals, same order, either way.
    """
    folds: list[GroupFold] = []
    values: list[Any] = []
    parent: Any = None  # flat_map (FlatMapSubscriber) of the current run of folds
    batching = False
    for g in groups:
        fast = g.fast
        fold = fast if isinstance(fast, GroupFold) else None
        p: Any = None if fold is None else fold._parent
        finished = False
        if p is not None:
            # UnicastGroup.try_finish, inlined (a raw round trip, nothing in between can raise;
            # race: a cancel's drain on another thread)
            lock = g._lock
            lock.acquire()
            if not (g.wip or g.cancelled or g.q):
                g.wip = 1
                g.done = True
                finished = True
            lock.release()
            if finished:
                g._terminated = True
                g.downstream = None  # rule 3.13
                g.fast = None
        if not finished or fold is None or p is None:  # (finished implies both)
            if folds:
                parent._inners_last(folds, values)
                folds, values = [], []
            g.on_complete()
            continue
        if p is not parent:
            if folds:
                parent._inners_last(folds, values)
                folds, values = [], []
            parent = p
            batching = batch_sink(p._downstream) is not None
        acc = fold._acc
        fold._acc = None
        try:
            value = fold.value(acc)
        except Exception as e:
            if folds:
                parent._inners_last(folds, values)
                folds, values = [], []
            fold._fail(e)
            continue
        if value is NOTSET:  # completed without a value (an aggregate of nothing)
            if folds:
                parent._inners_last(folds, values)
                folds, values = [], []
            fold.done = True
            parent._inner_done(fold)
            continue
        if batching:
            folds.append(fold)
            values.append(value)
        else:
            parent._inners_last([fold], [value])
    if folds:
        parent._inners_last(folds, values)


def _zero() -> float:
    return 0.0


_INF: Final = float("inf")


@final
class _PullSubscription:
    """Stands in for the upstream Subscription when group_by drives a fused source's iterator.

    Demand from group_by (its window of ``buffer_size``, replenished as groups consume) is counted
    in ``_permits``; the pull loop is a queue-drain on ``_wip``; both are ints under ``_lock``, taken
    once per request (race: a group's drain on another thread replenishing vs the loop; rule 3.3: a
    replenish from inside the loop only adds permits).
    An element that goes through the fast path is consumed at once and costs no permit, so with
    unbounded group demand the loop is one ``for`` over the builtin iterator.
    """

    __slots__ = ("_parent", "_it", "_fusion", "_lock", "_permits", "_wip", "cancelled")

    def __init__(self, parent: _GroupBySubscriber, it: Any, fusion: Any) -> None:
        self._parent = parent
        self._it = it
        self._fusion = fusion
        self._lock = threading.Lock()  # race: replenish (any thread) vs the pull loop
        self._permits = 0  # under _lock
        self._wip = 0  # under _lock
        self.cancelled = False

    def request(self, n: int) -> None:
        if self.enter(n):
            self.run()

    def cancel(self) -> None:
        self.cancelled = True

    def enter(self, n: int) -> bool:
        """Add ``n`` permits; True when the caller now owns the pull loop (must :meth:`run` it)."""
        with self._lock:
            p = self._permits + n
            self._permits = MAX_DEMAND if p >= MAX_DEMAND else p
            w = self._wip
            self._wip = w + 1
        return w == 0

    def run(self) -> None:
        """The pull loop, run by the caller :meth:`enter` made its owner."""
        missed = 1
        parent = self._parent
        lock = self._lock
        while True:
            if self.cancelled:
                self._it = None
                return
            with lock:
                permits = self._permits
                self._permits = 0
            if permits and parent.run_fused(self._it, permits, self):
                self._it = None
                return
            with lock:
                missed = self._wip - missed
                self._wip = missed
            if missed == 0:
                return


@final
class _GroupByFlowable(Flowable[Any]):
    __slots__ = ("_source", "_key_fn", "_value_fn", "_buffer_size", "_error_on_slow", "_expiry")

    def __init__(
        self,
        source: Flowable[Any],
        key_fn: Callable[[Any], Any],
        value_fn: Callable[[Any], Any] | None,
        buffer_size: int,
        error_on_slow: bool,
        expiry: tuple[int | None, float | None, float | None, Scheduler | None] | None = None,
    ) -> None:
        self._source = source
        self._key_fn = key_fn
        self._value_fn = value_fn
        self._buffer_size = buffer_size
        self._error_on_slow = error_on_slow
        self._expiry = expiry  # (max count, age, idle, scheduler), or None: groups never expire

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        x = self._expiry
        parent = (
            _GroupBySubscriber(
                subscriber, self._key_fn, self._value_fn, self._buffer_size, self._error_on_slow
            )
            if x is None
            else _ExpiringGroupBySubscriber(
                subscriber, self._key_fn, self._value_fn, self._buffer_size, self._error_on_slow, *x
            )
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


# -- fused aggregates over a group (flat_map's fast path) ------------------------------------------


class _FoldParent(Protocol):
    """What a :class:`GroupFold` signals: flat_map's inner protocol (``_inner_last``: the result and
    the completion in one signal; ``_inner_done``: completed empty; ``_inner_error``)."""

    _cancelled: bool

    def _inner_last(self, inner: Any, value: Any) -> None: ...

    def _inner_done(self, inner: Any) -> None: ...

    def _inner_error(self, inner: Any, error: BaseException) -> None: ...


#: the Flowable types :func:`group_fold` may recognize (a cheap pre-check for flat_map's on_next)
FOLDABLE: Final = frozenset((_AggregateFlowable, _MapFlowable))


def group_fold(p: Any, parent: Any, start: bool = False) -> GroupFold | None:
    """``p`` is ``group.<aggregate>()`` (``count``, ``reduce``, ``to_list``, ``collect``, ...),
    optionally followed by ``map`` calls, over a group nobody has subscribed yet: claim the group's
    subscription and return a :class:`GroupFold`. None otherwise (the caller subscribes ``p`` as
    usual).

    ``start=False``: ``parent`` (flat_map) registers the fold as an inner, then calls its
    :meth:`GroupFold.start`. ``start=True`` (flat_map's ``on_next``, ``parent`` a
    :class:`_FoldParent`): registered and started here; for ``count``, ``to_list`` and ``reduce``
    the claim and the attachment are one acquisition of the group's lock (see :func:`_claim_attach`).
    """
    # one map (the common case) in a slot of its own, several (rare) as a tuple: no container
    # per group for the common case
    map_: Callable[[Any], Any] | None = None
    maps: tuple[Callable[[Any], Any], ...] = ()
    if type(p) is _MapFlowable:
        map_ = p._mapper
        p = p._source
        if type(p) is _MapFlowable:  # several maps: collected outermost first
            ms = [map_]
            while type(p) is _MapFlowable:
                ms.append(p._mapper)
                p = p._source
            ms.reverse()
            maps = tuple(ms)
            map_ = None
    if type(p) is not _AggregateFlowable:
        return None
    state = p._source
    if type(state) is not _GroupState:
        return None
    if state._flags & _SUBSCRIBED:  # a raised flag is final: a plain read first
        return None  # subscribed already: the usual path signals the rule 2.12 error
    make = p._make
    shared = _SHARED_FOLDS.get(make)  # count(), to_list(): stateless folders, one shared instance
    cls: type[GroupFold] | None
    if shared is not None:
        cls, folder = shared
    else:
        folder = make()
        cls = _FOLD_CLASSES.get(type(folder))
    fold: GroupFold
    if start and cls is not None:
        # the accumulator before the group can deliver (the starts that cannot raise)
        if cls is _CountFold:
            fold = cls(state, folder, map_, maps, parent)
            fold._acc = 0
        elif cls is _ToListFold:
            fold = cls(state, folder, map_, maps, parent)
            fold._acc = []
        else:
            # the reducer and seed taken out: the fold keeps the shared folder (finish and name
            # only), so this group's folder is garbage at once (one object fewer per live group)
            reduce = cast("_Reduce[Any]", folder)
            fold = (_SumFold if reduce.fn is operator.add else cls)(state, _SHARED_REDUCE, map_, maps, parent)
            cast(_ReduceFold, fold)._fn = reduce.fn
            fold._acc = reduce.seed
        return _claim_attach(fold, state, parent)
    if not _claim(state):
        return None
    fold = (cls or GroupFold)(state, folder, map_, maps, parent)
    if start:  # what flat_map does with a fold it registers itself
        _register(parent, fold)
        if parent._cancelled:  # race: a cancel that swapped _inners before the add
            fold.cancel()
        else:
            fold.start()
    return fold


def _claim(state: _GroupState) -> bool:
    """UnicastGroup.try_subscribe, inlined (race: a concurrent subscriber): a raw round trip,
    nothing in between can raise."""
    lock = state._lock
    lock.acquire()
    flags = state._flags
    if not flags & _SUBSCRIBED:
        state._flags = flags | _SUBSCRIBED
    lock.release()
    return not flags & _SUBSCRIBED


def _register(parent: Any, fold: GroupFold) -> None:
    """Add ``fold`` to flat_map's live inners (race: the emitter removes, a cancel swaps them: its
    ``_lock``; a raw round trip, nothing in between can raise)."""
    lock = parent._lock
    lock.acquire()
    parent._inners[fold] = None
    lock.release()


def _claim_attach(fold: GroupFold, state: _GroupState, parent: Any) -> GroupFold | None:
    """Register ``fold`` with flat_map, then claim the group and attach the fold in one acquisition
    of the group's lock (UnicastGroup.try_subscribe + attach). Registered first: once attached,
    the fold may complete (on the upstream's thread, when the group was handed to another thread)
    and flat_map must know it by then. None when somebody subscribed the group meanwhile (the fold
    is unregistered; the usual path signals the rule 2.12 error)."""
    plock = parent._lock
    plock.acquire()  # _register, inlined
    parent._inners[fold] = None
    plock.release()
    if parent._cancelled:  # race: a cancel that swapped _inners before the add
        if _claim(state):
            fold.cancel()
        return fold
    lock = state._lock
    lock.acquire()  # raw round trip, nothing in between can raise (race: a concurrent subscriber,
    flags = state._flags  # a drain started by a cancel on another thread)
    if flags & _SUBSCRIBED:
        lock.release()
        plock.acquire()
        parent._inners.pop(fold, None)
        plock.release()
        return None
    state._flags = flags | _SUBSCRIBED
    state.downstream = fold
    state.requested = MAX_DEMAND
    w = state.wip
    if w == 0 and not state.q and not state.done and not state.cancelled:
        # nothing to drain, no drain running: publish the producer's fast path (UnicastGroup.attach)
        state.fast = fold
        lock.release()
        return fold
    state.wip = w + 1
    lock.release()
    if w == 0:
        state._drain_loop()  # the element parked for a late fold, the completion
    return fold


class GroupFold:
    """A group consumed by an aggregate (and maps of its result) inside flat_map, without the
    aggregate's subscriber, its deferred-scalar subscription and flat_map's inner subscriber: the
    group's drain hands its elements to :meth:`on_next` (the group's fast path, once the queue is
    empty), which folds them with the aggregate's own folder; on completion the result (through the
    maps) goes to flat_map as an inner's last value. The signals are those of
    ``flat_map(lambda g: g.<aggregate>().map(f))`` subscribed the usual way: a folder or map that
    raises, or a None result, fails the inner (flat_map then fails or, with ``delay_error``,
    collects it); a short-circuit (``all``/``any``) cancels the group, as the aggregate does.

    It is flat_map's inner (the ``queue``/``done``/``consumed``/``cancel`` protocol): ``queue``
    exists only once the result is known. ``_acc`` is touched only by the group's drain and its
    fast path, which the group serializes (its ``wip``; see :class:`UnicastGroup`), so it needs no
    lock; ``_parent`` is dropped by :meth:`cancel` (any thread) and read once before each signal,
    as :class:`PrefetchInner` does.
    """

    _rs_no_wrap = True
    __slots__ = ("_group", "_acc", "_folder", "_map", "_maps", "_parent", "queue", "done", "__weakref__")

    def __init__(
        self,
        group: _GroupState,
        folder: _Folder[Any, Any],
        map_: Callable[[Any], Any] | None,
        maps: tuple[Callable[[Any], Any], ...],
        parent: Any,
    ) -> None:
        self._group = group
        self._folder = folder
        self._acc: Any = NOTSET
        self._map = map_  # the one map of the result, or None (then ``_maps``: several, or none)
        self._maps = maps
        self._parent: _FoldParent | None = parent
        self.queue: deque[Any] | None = None  # flat_map's queue for the result (created with it)
        self.done = False

    # -- flat_map's inner protocol -----------------------------------------------------------------
    def start(self) -> None:
        """Registered with flat_map: start folding (the group's queued element first)."""
        try:
            self._acc = self._folder.start()
        except Exception as e:  # a collect supplier raised: as the aggregate's on_subscribe does
            self._group.cancel()
            self._fail(e)
            return
        self._group.attach(self)

    def consumed(self, n: int) -> None:
        """flat_map emitted the result: nothing to replenish (the group runs unbounded)."""

    def cancel(self) -> None:
        self._parent = None
        self._group.cancel()

    # -- the group's subscriber side (serialized by the group's drain) -----------------------------
    def on_subscribe(self, subscription: Subscription) -> None:  # pragma: no cover - attach, not subscribe
        subscription.request(MAX_DEMAND)

    def on_next(self, item: Any) -> None:
        try:
            acc = self._folder.step(self._acc, item)
        except Exception as e:
            self._acc = None
            self._group.cancel()
            self._fail(e)
            return
        if acc is _STOP:  # all/any/contains decided: stop consuming the group
            self._acc = None
            self._group.cancel()
            self._result(_stop_value(self._folder))
            return
        self._acc = acc

    def on_error(self, error: BaseException) -> None:
        self._acc = None
        self._fail(error)

    def on_complete(self) -> None:
        acc = self._acc
        self._acc = None
        self._result(acc)

    def value(self, acc: Any) -> Any:
        """The result of ``acc`` through the folder's finish and the maps (NOTSET: no value);
        raises what they raise, and on a None (rule 2.13)."""
        value = self._folder.finish(acc)
        if value is None:
            raise none_result_error(self._folder.name, "the accumulator")
        return value if value is NOTSET else self._mapped(value)

    def _mapped(self, value: Any) -> Any:
        """``value`` through the fold's maps, in order; a None from one is rule 2.13's error."""
        m = self._map
        if m is not None:
            value = m(value)
            if value is None:
                raise none_result_error("map")
        for m in self._maps:
            value = m(value)
            if value is None:
                raise none_result_error("map")
        return value

    def _result(self, acc: Any) -> None:
        try:
            value = self.value(acc)
        except Exception as e:
            self._fail(e)
            return
        p = self._parent
        if p is None:
            return
        self.done = True
        if value is NOTSET:
            p._inner_done(self)  # completed empty (reduce of nothing): no value
            return
        self.queue = deque()
        p._inner_last(self, value)

    def _fail(self, error: BaseException) -> None:
        p = self._parent
        self._parent = None
        if p is None:
            plugins.on_error(error, "group_by: a group's aggregate failed after its flat_map was cancelled")
            return
        p._inner_error(self, error)


@final
class _CountFold(GroupFold):
    """``count()``: the fold inlined (one call per element instead of two)."""

    __slots__ = ()

    def start(self) -> None:
        self._acc = 0
        self._group.attach(self)

    def on_next(self, item: Any) -> None:
        self._acc += 1

    def value(self, acc: Any) -> Any:
        # the count is never None, and never empty (_Count.finish: itself)
        return self._mapped(acc)


@final
class _ToListFold(GroupFold):
    """``to_list()``: the fold inlined."""

    __slots__ = ()

    def start(self) -> None:
        self._acc = []
        self._group.attach(self)

    def on_next(self, item: Any) -> None:
        self._acc.append(item)


class _ReduceFold(GroupFold):
    """``reduce(fn[, seed])``: the fold inlined (the checks of ``_Reduce.step``)."""

    __slots__ = ("_fn",)

    def start(self) -> None:
        folder = cast("_Reduce[Any]", self._folder)
        self._fn = folder.fn  # set before the first element (attach may drain queued ones)
        self._acc = folder.seed
        self._group.attach(self)

    def on_next(self, item: Any) -> None:
        acc = self._acc
        if acc is NOTSET:
            self._acc = item
            return
        try:
            v = self._fn(acc, item)
            if v is None:
                raise none_result_error("reduce", "the reducer")
        except Exception as e:
            self._reducer_failed(e)
            return
        self._acc = v

    def _reducer_failed(self, error: BaseException) -> None:
        # the reducer raised (or gave None, rule 2.13): the group is cancelled, the error named
        self._acc = None
        self._group.cancel()
        self._fail(error)


@final
class _SumFold(_ReduceFold):
    """``reduce(operator.add[, seed])``: ``acc + item`` inline (what ``operator.add`` computes, one
    C call fewer per element); the same checks."""

    __slots__ = ()

    def on_next(self, item: Any) -> None:
        acc = self._acc
        if acc is NOTSET:
            self._acc = item
            return
        try:
            v = acc + item
            if v is None:
                raise none_result_error("reduce", "the reducer")
        except Exception as e:
            self._reducer_failed(e)
            return
        self._acc = v


_FOLD_CLASSES: Final[dict[type, type[GroupFold]]] = {
    _Count: _CountFold,
    _ToList: _ToListFold,
    _Reduce: _ReduceFold,
}
#: the aggregates whose folder factory is a stateless class (``count()``, ``to_list()``): their
#: folds share one folder instead of making one per group
_SHARED_FOLDS: Final[dict[Any, tuple[type[GroupFold], _Folder[Any, Any]]]] = {
    _Count: (_CountFold, _Count()),
    _ToList: (_ToListFold, _ToList()),
}
#: what a started reduce fold keeps as its folder: ``finish`` (the accumulator itself) and ``name``
#: are all it reads (its reducer and seed are its own slots)
_SHARED_REDUCE: Final[_Reduce[Any]] = _Reduce(operator.add, NOTSET)


def group_by(
    source: Flowable[T],
    key_fn: Callable[[T], Hashable],
    value_fn: Callable[[T], Any] | None = None,
    buffer_size: int = DEFAULT_PREFETCH,
    slow_group: str = "error",
    expire_after_count: int | None = None,
    expire_after: float | None = None,
    expire_after_idle: float | None = None,
    scheduler: Scheduler | None = None,
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
    expiry: tuple[int | None, float | None, float | None, Scheduler | None] | None = None
    if expire_after_count is not None or expire_after is not None or expire_after_idle is not None:
        count = (
            None
            if expire_after_count is None
            else check_count("group_by", expire_after_count, "expire_after_count")
        )
        age = (
            None
            if expire_after is None
            else check_duration("group_by", expire_after, "expire_after", positive=True)
        )
        idle = (
            None
            if expire_after_idle is None
            else check_duration("group_by", expire_after_idle, "expire_after_idle", positive=True)
        )
        timed = age is not None or idle is not None
        sched = resolve_scheduler("group_by", scheduler) if timed else None
        expiry = (count, age, idle, sched)
    elif scheduler is not None:
        raise ValueError(
            "group_by(): scheduler is for expire_after/expire_after_idle; give one of them or drop it"
        )
    return _GroupByFlowable(source, key_fn, value_fn, buffer_size, slow_group == "error", expiry)
