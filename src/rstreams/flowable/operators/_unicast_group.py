"""UnicastGroup: the single-subscriber queue-drain publisher behind group_by's groups and windows.

A parent operator (``group_by``, ``window``, ``window_timed``, ``retry_when``'s signal window) feeds
it from its own serialized producer side; one subscriber consumes it with its own demand. The public
Flowables (``GroupedFlowable``, ``UnicastWindow``) are thin wrappers that hand their subscriber to
:meth:`UnicastGroup.subscribe`; the group itself is the Subscription that subscriber receives.

What differs between the users is passed in, not subclassed into the drain:

* ``on_release`` (called at most once, by :meth:`UnicastGroup.release`): the group stops keeping the
  parent's upstream alive. It runs when the subscriber cancels, when the parent abandons the group
  (nobody subscribed during the parent's ``on_next``; see :meth:`try_abandon`) and, where
  ``release_when_done`` is set (windows), when the producer terminates it.
* ``replenish`` (group_by: its upstream window): told how many queued elements were delivered or
  dropped by a cancel, once per drain batch; ``None`` (windows; an abandoned group) for nothing.
* ``_subscribed_twice``: the message of the rule 2.12 error a second subscriber receives (rule 1.9:
  ``on_subscribe`` first).

Races and guards:

* ``wip`` (``AtomicInt``): the queue-drain; race: the producer's ``on_next``/terminal vs the
  subscriber's ``request``/``cancel`` on another thread. Only one thread emits at a time, in order.
* ``requested`` (``AtomicInt``): race: ``request`` (subscriber thread) vs the drain's ``produced``.
* ``_once`` (``AtomicFlag``): unicast; race: two concurrent subscribers (the loser gets the error).
* ``_sub_state`` (``AtomicInt``): fresh -> subscribed, or fresh -> abandoned; race: a subscriber
  arriving on another thread vs the parent's abandonment check.
* ``_released`` (``AtomicFlag``): ``on_release`` runs once; race: abandonment vs a late subscriber's
  cancel vs completion.
* ``fast_on_next``: published by the drain (after emptying the queue, with unbounded demand) for a
  producer that appends from one thread only (group_by's upstream thread): while ``wip`` is 0 it may
  hand an element straight to the subscriber, because the queue stays empty then (only that producer
  appends, and then drains), so the fast path never overtakes a queued element. A drain starting
  concurrently (request/cancel on another thread) finds the queue empty and emits nothing. Cleared on
  cancel and on termination (rule 3.13). Producers that do not read it (windows) are unaffected.
* Rule 3.9: an invalid ``request`` cancels the group and the drain delivers the error, serially
  with everything else. Rule 3.13: the drain drops the subscriber on cancel and on termination.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, ClassVar, Final

from ..._internal.atomics import AtomicFlag, AtomicInt
from ..._internal.requests import MAX_DEMAND, add_request, produced, validate_request
from ..._internal.subscriptions import error_empty
from ..._spec import Subscriber
from ...errors import ProtocolViolationError

__all__ = ["UnicastGroup"]

_MAX: Final = MAX_DEMAND
_FRESH: Final = 0
_SUBSCRIBED: Final = 1
_ABANDONED: Final = 2


class UnicastGroup:
    """A unicast queue, its Subscription, and its drain (see the module docstring)."""

    __slots__ = (
        "q",
        "requested",
        "wip",
        "downstream",
        "_once",
        "_sub_state",
        "cancelled",
        "done",
        "_error",
        "_terminated",
        "_released",
        "_on_release",
        "replenish",
        "_request_error",
        "fast_on_next",
        "__weakref__",
    )

    #: whether the producer's terminal signal releases the group (windows) or not (groups: the
    #: upstream itself terminated them)
    release_when_done: ClassVar[bool] = False
    #: whether the elements already queued go out before the producer's error (windows, as RxJava's
    #: UnicastProcessor.create(n, onTerminate)) or the error drops them (groups: groupBy's default)
    delay_error: ClassVar[bool] = False

    def __init__(
        self, on_release: Callable[[], Any] | None, replenish: Callable[[int], Any] | None = None
    ) -> None:
        self.q: deque[Any] = deque()
        self.requested = AtomicInt(0)  # race: request (subscriber thread) vs drain
        self.wip = AtomicInt(0)  # race: producer on_next vs subscriber request/cancel (queue-drain)
        self.downstream: Subscriber[Any] | None = None
        self._once = AtomicFlag()  # unicast: one subscriber (race: concurrent subscribes)
        self._sub_state = AtomicInt(_FRESH)  # race: late subscribe vs abandonment
        self.cancelled = False
        self.done = False
        self._error: BaseException | None = None
        self._terminated = False
        self._released = AtomicFlag()  # race: abandonment vs cancel vs completion (release once)
        self._on_release = on_release
        # delivered/dropped element counts go here (once per batch); None: nobody counts them
        self.replenish = replenish
        self._request_error: BaseException | None = None
        # the subscriber's on_next once its demand is unbounded (sticky); None otherwise or after cancel
        self.fast_on_next: Callable[[Any], Any] | None = None

    def _subscribed_twice(self) -> str:
        return "this group can be subscribed only once"

    def release(self) -> None:
        """This group no longer keeps the parent's upstream alive (cancelled, abandoned, or done): once."""
        if self._released.try_set():
            cb = self._on_release
            self._on_release = None
            if cb is not None:
                cb()

    # -- subscription ----------------------------------------------------------------------------
    def subscribe(self, subscriber: Subscriber[Any]) -> None:
        if not self._once.try_set():
            error_empty(subscriber, ProtocolViolationError("2.12", self._subscribed_twice()))
            return
        self._sub_state.compare_and_set(_FRESH, _SUBSCRIBED)
        subscriber.on_subscribe(self)
        # stored only after on_subscribe returned: a producer draining on another thread (a late
        # subscriber of an abandoned group or window) must not signal during on_subscribe (rules
        # 1.3, 1.9); what was requested (or a rule 3.9 error) inside on_subscribe is drained here
        self.downstream = subscriber
        self.drain()

    def try_abandon(self) -> bool:
        """True when nobody has subscribed yet: from now on nobody is expected to (fresh -> abandoned)."""
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
        self.release()
        self.drain()  # clears the queue (and replenishes it) if no drain is running

    # -- producer side (serialized by the parent) --------------------------------------------------
    def on_next(self, item: Any) -> None:
        if self.done or self.cancelled:
            return
        self.q.append(item)
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
                rep = self.replenish
                if n and rep is not None:
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
                        q.clear()
                        self._finish(d)
                    else:
                        r = requested.get()
                        n = len(q)
                        if r < _MAX and n > r:
                            n = r
                        if n:
                            e = 0
                            on_next = d.on_next
                            pop = q.popleft
                            while e < n and not self.cancelled:
                                on_next(pop())
                                e += 1
                            if r < _MAX:
                                produced(requested, e)  # once per batch
                            rep = self.replenish
                            if rep is not None:
                                rep(e)
                        if done and not q and not self.cancelled:
                            self._finish(d)
                        elif r >= _MAX and not q and self.fast_on_next is None and not self.cancelled:
                            # publish the producer's fast path (see the module docstring): set inside
                            # the drain, after emptying the queue
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
