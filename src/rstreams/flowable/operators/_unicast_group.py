"""UnicastGroup: the single-subscriber queue-drain publisher behind group_by's groups and windows.

A parent operator (``group_by``, ``window``, ``window_timed``, ``retry_when``'s signal window) feeds
it from its own serialized producer side; one subscriber consumes it with its own demand. The public
Flowables hand their subscriber to :meth:`UnicastGroup.subscribe`: ``UnicastWindow`` is a thin
wrapper around one; a group_by group is one object, a ``GroupedFlowable`` that is also its
``UnicastGroup`` (one object per group instead of two). The group itself is the Subscription that
subscriber receives.

What differs between the users is passed in, not subclassed into the drain:

* ``on_release`` (called at most once, by :meth:`UnicastGroup.release`): the group stops keeping the
  parent's upstream alive. It runs when the subscriber cancels, when the parent abandons the group
  (nobody subscribed during the parent's ``on_next``; see :meth:`try_abandon`) and, where
  ``release_when_done`` is set (windows), when the producer terminates it.
* ``replenish`` (group_by: its upstream window): told how many queued elements were delivered or
  dropped by a cancel, once per drain batch; ``None`` (windows; an abandoned group) for nothing.
* ``_subscribed_twice``: the message of the rule 2.12 error a second subscriber receives (rule 1.9:
  ``on_subscribe`` first).

Races and guards (one ``threading.Lock``, ``_lock``, guards every read-modify-write below: the
group's own (windows), or one the parent shares among all its groups (group_by: a lock is an
object the garbage collector tracks, and tens of thousands of live groups should cost little
memory and collector work); it is never held while anyone calls out, so a shared one only makes
groups drained on different threads wait for each other's few attribute updates, and never
nests. Its round trips are raw ``acquire``/``release`` where nothing in between can raise):

* ``wip`` (int under ``_lock``): the queue-drain; race: the producer's ``on_next``/terminal vs the
  subscriber's ``request``/``cancel`` on another thread. Only one thread emits at a time, in order.
  Plain reads of it (the producer's fast-path check) are single attribute loads.
* ``requested`` (int under ``_lock``): race: ``request`` (subscriber thread) vs the drain's
  ``produced``.
* ``_flags`` (int under ``_lock``): ``_SUBSCRIBED`` (unicast; race: two concurrent subscribers, the
  loser gets the error), ``_ABANDONED`` (fresh -> abandoned; race: a subscriber arriving on another
  thread vs the parent's abandonment check) and ``_RELEASED`` (``on_release`` runs once; race:
  abandonment vs a late subscriber's cancel vs completion).
* ``q``: created by the producer on its first append, and dropped again by the producer
  (:meth:`trim`) once it is empty; only the producer appends, so an empty queue it sees stays empty
  until it appends again, and the drain reads ``q`` afresh on every pass (a queue the producer
  dropped was empty). So an idle group holds no queue.
* ``fast`` (the subscriber): published by the drain (after emptying the queue, with unbounded demand) for a
  producer that appends from one thread only (group_by's upstream thread): while ``wip`` is 0 it may
  hand an element straight to the subscriber, because the queue stays empty then (only that producer
  appends, and then drains), so the fast path never overtakes a queued element. A drain starting
  concurrently (request/cancel on another thread) finds the queue empty and emits nothing. Cleared on
  cancel and on termination (rule 3.13). Producers that do not read it (windows) are unaffected.
* Rule 3.9: an invalid ``request`` cancels the group and the drain delivers the error, serially
  with everything else. Rule 3.13: the drain drops the subscriber on cancel and on termination.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any, ClassVar, Final

from ..._internal.requests import MAX_DEMAND, validate_request
from ..._internal.subscriptions import error_empty
from ..._spec import Subscriber
from ...errors import ProtocolViolationError

__all__ = ["UnicastGroup"]

_SUBSCRIBED: Final = 1  # a subscriber arrived (the next one gets the rule 2.12 error)
_ABANDONED: Final = 2  # the parent found nobody subscribed during its on_next
_RELEASED: Final = 4  # on_release ran


class UnicastGroup:
    """A unicast queue, its Subscription, and its drain (see the module docstring)."""

    # wip and fast first: the producer's fast path reads both per element (one cache line)
    __slots__ = (
        "wip",
        "fast",
        "q",
        "_lock",
        "requested",
        "downstream",
        "_flags",
        "cancelled",
        "done",
        "_error",
        "_terminated",
        "_on_release",
        "replenish",
        "_request_error",
        "__weakref__",
    )

    #: whether the producer's terminal signal releases the group (windows) or not (groups: the
    #: upstream itself terminated them)
    release_when_done: ClassVar[bool] = False
    #: whether the elements already queued go out before the producer's error (windows, as RxJava's
    #: UnicastProcessor.create(n, onTerminate)) or the error drops them (groups: groupBy's default)
    delay_error: ClassVar[bool] = False

    def __init__(
        self,
        on_release: Callable[[], Any] | None,
        replenish: Callable[[int], Any] | None = None,
        lock: threading.Lock | None = None,
    ) -> None:
        # created by the producer on its first append, dropped by it once empty (see trim)
        self.q: deque[Any] | None = None
        # guards wip, requested and _flags (see the module docstring); ``lock``: a lock of the
        # parent's shared by its groups, never held while anyone calls out (group_by)
        self._lock = lock if lock is not None else threading.Lock()
        self.requested = 0  # under _lock (race: request on the subscriber thread vs the drain)
        self.wip = 0  # under _lock (race: producer on_next vs subscriber request/cancel)
        self.downstream: Subscriber[Any] | None = None
        self._flags = 0  # _SUBSCRIBED | _ABANDONED | _RELEASED, under _lock
        self.cancelled = False
        self.done = False
        self._error: BaseException | None = None
        self._terminated = False
        self._on_release = on_release
        # delivered/dropped element counts go here (once per batch); None: nobody counts them
        self.replenish = replenish
        self._request_error: BaseException | None = None
        # the subscriber once its demand is unbounded (sticky); None otherwise or after cancel
        self.fast: Subscriber[Any] | None = None

    def _subscribed_twice(self) -> str:
        return "this group can be subscribed only once"

    def _set_flag(self, flag: int, unless: int = 0) -> bool:
        """Raise ``flag`` unless ``flag`` or one of ``unless`` is raised already; True if this call raised it."""
        if self._flags & (flag | unless):
            return False  # flags are only ever raised: a plain read that sees one is final
        lock = self._lock
        lock.acquire()  # a raw round trip (nothing in between can raise)
        f = self._flags
        if not f & (flag | unless):
            self._flags = f | flag
        lock.release()
        return not f & (flag | unless)

    def release(self) -> None:
        """This group no longer keeps the parent's upstream alive (cancelled, abandoned, or done): once."""
        if self._set_flag(_RELEASED):
            cb = self._on_release
            self._on_release = None
            if cb is not None:
                cb()

    # -- subscription ----------------------------------------------------------------------------
    def subscribe(self, subscriber: Subscriber[Any]) -> None:
        if not self._set_flag(_SUBSCRIBED):
            error_empty(subscriber, ProtocolViolationError("2.12", self._subscribed_twice()))
            return
        subscriber.on_subscribe(self)
        # stored only after on_subscribe returned: a producer draining on another thread (a late
        # subscriber of an abandoned group or window) must not signal during on_subscribe (rules
        # 1.3, 1.9); what was requested (or a rule 3.9 error) inside on_subscribe is drained here
        self.downstream = subscriber
        self.drain()

    def try_subscribe(self) -> bool:
        """Claim the single subscription slot without a Subscriber (a library-internal consumer
        that calls :meth:`attach` next); False when somebody subscribed already."""
        return self._set_flag(_SUBSCRIBED)

    def attach(self, sink: Subscriber[Any]) -> None:
        """After :meth:`try_subscribe`: consume with unbounded demand into ``sink`` (no
        ``on_subscribe``; the sink cancels through :meth:`cancel`)."""
        self.downstream = sink  # before wip: a drain running elsewhere passes again and sees it
        lock = self._lock
        lock.acquire()  # unbounded demand and the drain's entry in one raw round trip (no raise)
        self.requested = MAX_DEMAND
        w = self.wip
        if w == 0 and not self.q and not self.done and not self.cancelled:
            # nothing to drain and no drain running: do what its pass would, publish the
            # producer's fast path (see the module docstring), without the pass
            self.fast = sink
            lock.release()
            return
        self.wip = w + 1
        lock.release()
        if w == 0:
            self._drain_loop()

    def try_abandon(self) -> bool:
        """True when nobody has subscribed yet: from now on nobody is expected to (fresh -> abandoned)."""
        return self._set_flag(_ABANDONED, _SUBSCRIBED)

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                # rule 3.9: the group ends with the error, delivered by the drain (serially)
                self._request_error = err
                self.cancel()
                self.drain()
                return
        with self._lock:  # capped, sticky at MAX (race: request vs the drain's produced)
            r = self.requested
            if r < MAX_DEMAND:
                r += n
                self.requested = MAX_DEMAND if r >= MAX_DEMAND else r
        self.drain()

    def cancel(self) -> None:
        self.fast = None
        if self.cancelled:
            return
        self.cancelled = True
        self.release()
        self.drain()  # clears the queue (and replenishes it) if no drain is running

    # -- producer side (serialized by the parent) --------------------------------------------------
    def push(self, item: Any) -> None:
        """Queue ``item`` (producer only; no drain)."""
        q = self.q
        if q is None:
            q = self.q = deque()
        q.append(item)

    def trim(self) -> None:
        """Drop the queue if it is empty (producer only: nobody else appends, so it stays empty)."""
        q = self.q
        if q is not None and not q:
            self.q = None

    def on_next(self, item: Any) -> None:
        if self.done or self.cancelled:
            return
        self.push(item)
        self.drain()

    def on_error(self, error: BaseException) -> None:
        if self.done:
            return
        self._error = error
        self.done = True
        if self.release_when_done:
            self.release()
        self.drain()

    def on_complete(self) -> None:
        if self.done:
            return
        self.done = True
        if self.release_when_done:
            self.release()
        self.drain()

    def leave(self) -> None:
        """End an emission the producer made itself after raising ``wip`` from 0 to 1 under
        ``_lock`` (group_by's fast path with expiry): what others signalled meanwhile (a
        completion, a cancel) is drained here, after that element."""
        with self._lock:
            if self.wip == 1:
                self.wip = 0
                return
        self._drain_loop()

    def try_finish(self) -> bool:
        """Producer side, at completion: when no drain runs, nothing is queued and nobody cancelled,
        take the drain for good and mark the group done; True: the caller now completes the
        subscriber itself (group_by completing its fused folds in one batch). The ``wip`` raised
        here is never lowered: the group is terminal, so a later ``cancel`` (any thread) only
        releases it and finds a drain "running" with nothing to do."""
        lock = self._lock
        lock.acquire()  # race: a cancel's drain on another thread (a raw round trip, no raise)
        if self.wip or self.cancelled or self.q:
            lock.release()
            return False
        self.wip = 1
        self.done = True
        lock.release()
        self._terminated = True
        self.downstream = None  # rule 3.13
        self.fast = None
        return True

    # -- the drain -------------------------------------------------------------------------------
    def drain(self) -> None:
        lock = self._lock
        lock.acquire()  # a raw round trip (nothing in between can raise)
        w = self.wip
        self.wip = w + 1
        lock.release()
        if w:
            return
        self._drain_loop()

    def _drain_loop(self) -> None:
        """The drain, run by whoever raised ``wip`` from 0 (its one missed pass is this one)."""
        lock = self._lock
        missed = 1
        while True:
            q = self.q  # afresh each pass: the producer may have created or dropped it
            if self.cancelled:
                if q:
                    n = len(q)
                    q.clear()
                    rep = self.replenish
                    if rep is not None:
                        rep(n)
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
                    if done and self._error is not None and not self.delay_error:
                        if q:
                            q.clear()
                        self._finish(d)
                    else:
                        r = self.requested
                        n = len(q) if q else 0
                        if r < MAX_DEMAND and n > r:
                            n = r
                        if n and q is not None:
                            e = 0
                            on_next = d.on_next
                            pop = q.popleft
                            while e < n and not self.cancelled:
                                on_next(pop())
                                e += 1
                            if r < MAX_DEMAND:
                                with lock:  # once per batch (race: a concurrent request adds)
                                    self.requested -= e
                            rep = self.replenish
                            if rep is not None:
                                rep(e)
                        if done and not q and not self.cancelled:
                            self._finish(d)
                        elif r >= MAX_DEMAND and not q and self.fast is None and not self.cancelled:
                            # publish the producer's fast path (see the module docstring): set inside
                            # the drain, after emptying the queue
                            self.fast = d
            lock.acquire()  # a raw round trip (nothing in between can raise)
            missed = self.wip - missed
            self.wip = missed
            lock.release()
            if missed == 0:
                return

    def _finish(self, d: Subscriber[Any]) -> None:
        if self._terminated:
            return
        self._terminated = True
        self.downstream = None  # rule 3.13
        self.fast = None
        e = self._error
        if e is None:
            d.on_complete()
        else:
            d.on_error(e)
