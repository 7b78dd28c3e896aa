"""Subscription helpers (seed 004, "SubscriptionHelper"): the CANCELLED sentinel, ``set_once``,
deferred request, cancel, and the subscription arbiter.

A field that holds an upstream Subscription is an :class:`~rstreams._internal.atomics.AtomicRef`
that starts as ``None``, is set once, and ends as :data:`CANCELLED`. Cancelling before the upstream
arrives is remembered: the upstream is cancelled the moment it arrives (race: cancel vs
on_subscribe).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, final

from .._spec import Subscriber, Subscription
from ..errors import ProtocolViolationError
from . import plugins
from .atomics import AtomicInt, AtomicRef
from .requests import BAD_REQUEST_POISON, MAX_DEMAND, add_request, validate_request

__all__ = [
    "CANCELLED",
    "EMPTY",
    "is_cancelled",
    "set_once",
    "cancel",
    "replace",
    "deferred_set_once",
    "deferred_request",
    "report_double_subscription",
    "DeferredSubscription",
    "SubscriptionArbiter",
    "complete_empty",
    "error_empty",
]


@final
class _CancelledSubscription:
    """The terminal state of a Subscription field: every call is a no-op (rules 3.6, 3.7)."""

    __slots__ = ()

    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        pass

    def __repr__(self) -> str:
        return "CANCELLED"


@final
class _EmptySubscription:
    """A no-op Subscription for sources that terminate right after on_subscribe."""

    __slots__ = ()

    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        pass

    def __repr__(self) -> str:
        return "EMPTY"


CANCELLED: Final = _CancelledSubscription()
EMPTY: Final = _EmptySubscription()


def complete_empty(subscriber: Subscriber[Any]) -> None:
    """on_subscribe(EMPTY) then on_complete (rule 1.9: on_subscribe first)."""
    subscriber.on_subscribe(EMPTY)
    subscriber.on_complete()


def error_empty(subscriber: Subscriber[Any], error: BaseException) -> None:
    """on_subscribe(EMPTY) then on_error(error) (rule 1.9)."""
    subscriber.on_subscribe(EMPTY)
    subscriber.on_error(error)


def is_cancelled(ref: AtomicRef[Subscription | None]) -> bool:
    return ref.get() is CANCELLED


def report_double_subscription(where: str = "", notes: Callable[[BaseException], None] | None = None) -> None:
    """Rule 2.5/2.12: a second Subscription arrived; it was cancelled; report it to the hook.

    ``notes`` adds notes to the error first (assembly tracing: where the stage that received it
    was built)."""
    detail = "on_subscribe called with a second Subscription; it was cancelled"
    if where:
        detail += f" (in {where})"
    err = ProtocolViolationError("2.12", detail)
    if notes is not None:
        notes(err)
    plugins.on_error(err)


def set_once(ref: AtomicRef[Subscription | None], s: Subscription, where: str = "") -> bool:
    """Store ``s`` if the field is empty. Otherwise cancel ``s`` (rule 2.5) and, unless the field was
    cancelled meanwhile, report the double on_subscribe (rule 2.12). Returns True if stored."""
    if ref.compare_and_set(None, s):
        return True
    s.cancel()
    if ref.get() is not CANCELLED:
        report_double_subscription(where)
    return False


def replace(ref: AtomicRef[Subscription | None], s: Subscription | None) -> bool:
    """Swap in ``s`` without cancelling the previous one; if the field is cancelled, cancel ``s``."""
    while True:
        cur = ref.get()
        if cur is CANCELLED:
            if s is not None:
                s.cancel()
            return False
        if ref.compare_and_set(cur, s):
            return True


def cancel(ref: AtomicRef[Subscription | None]) -> bool:
    """Move the field to CANCELLED and cancel what it held. True for the caller that cancelled it."""
    cur = ref.get()
    if cur is CANCELLED:
        return False
    cur = ref.get_and_set(CANCELLED)
    if cur is CANCELLED:
        return False
    if cur is not None:
        cur.cancel()
    return True


def deferred_set_once(
    ref: AtomicRef[Subscription | None], requested: AtomicInt, s: Subscription, where: str = ""
) -> bool:
    """Store the late-arriving upstream and forward the demand accumulated before it arrived."""
    if set_once(ref, s, where):
        r = requested.get_and_set(0)
        if r != 0:
            s.request(r)
        return True
    return False


def deferred_request(ref: AtomicRef[Subscription | None], requested: AtomicInt, n: int) -> None:
    """Request ``n`` from the upstream, or accumulate it until the upstream arrives.

    Race: request vs on_subscribe. The demand is added first, then the field is re-read; whichever of
    the two sides takes the accumulated demand with ``get_and_set(0)`` forwards it, so none is lost
    and none is forwarded twice.
    """
    s = ref.get()
    if s is not None:
        s.request(n)
        return
    if validate_request(n) is not None:
        # rule 3.9: a bad amount is never added to the demand (0 would vanish, -5 would cancel
        # earlier demand, True would count as 1); the total is poisoned with -1 instead, so the
        # upstream is asked for a non-positive amount, and signals the rule 3.9 error, when it arrives
        with requested._lock:  # race: a concurrent request adding to the total
            requested._value = BAD_REQUEST_POISON
    else:
        add_request(requested, n)
    s = ref.get()
    if s is not None:
        r = requested.get_and_set(0)
        if r != 0:
            s.request(r)


class DeferredSubscription:
    """A Subscription that may be requested and cancelled before its upstream exists.

    Example::

        d = DeferredSubscription()
        d.request(5)          # remembered
        d.set_upstream(up)    # up.request(5) now
    """

    __slots__ = ("_upstream", "_missed")

    def __init__(self) -> None:
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)
        self._missed = AtomicInt(0)

    def set_upstream(self, s: Subscription) -> bool:
        return deferred_set_once(self._upstream, self._missed, s, type(self).__name__)

    def request(self, n: int) -> None:
        deferred_request(self._upstream, self._missed, n)

    def cancel(self) -> None:
        cancel(self._upstream)

    @property
    def is_cancelled(self) -> bool:
        return self._upstream.get() is CANCELLED


class SubscriptionArbiter:
    """Switches between successive upstream Subscriptions, carrying unfulfilled demand across.

    Used by concat, retry, repeat, switch_if_empty, on_error_resume_next and timeout fallbacks.
    ``produced(n)`` must be called (from the emitting side, serially with ``set_subscription``)
    before switching, so the next upstream is asked only for what is still outstanding.

    Race: request/cancel from the downstream vs set_subscription/produced from the upstream side.
    All state changes are queued as "missed" values and applied by whichever caller wins the wip
    counter, so the current Subscription, the demand and the hand-over are never torn.
    """

    __slots__ = (
        "_wip",
        "_lock",
        "_current",
        "_requested",
        "_missed_subscription",
        "_missed_requested",
        "_missed_produced",
        "_cancelled",
        "_cancel_on_replace",
    )

    def __init__(self, cancel_on_replace: bool = True) -> None:
        self._wip = AtomicInt(0)
        self._lock = AtomicInt(0)._lock  # guards the missed_* fields (race: producers vs drainer)
        self._current: Subscription | None = None
        self._requested = 0
        self._missed_subscription: Subscription | None = None
        self._missed_requested = 0
        self._missed_produced = 0
        self._cancelled = False
        self._cancel_on_replace = cancel_on_replace

    @property
    def is_cancelled(self) -> bool:
        return self._cancelled

    @property
    def is_unbounded(self) -> bool:
        return self._requested >= MAX_DEMAND

    def set_subscription(self, s: Subscription) -> None:
        if self._cancelled:
            s.cancel()
            return
        with self._lock:
            old = self._missed_subscription
            self._missed_subscription = s
        if old is not None and self._cancel_on_replace:
            old.cancel()
        self._drain()

    def request(self, n: int) -> None:
        if self._cancelled:
            return
        with self._lock:
            m = self._missed_requested + n
            self._missed_requested = MAX_DEMAND if m >= MAX_DEMAND else m
        self._drain()

    def produced(self, n: int) -> None:
        if n <= 0:
            return
        with self._lock:
            self._missed_produced += n
        self._drain()

    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        self._drain()

    def _drain(self) -> None:
        if self._wip.get_and_increment() != 0:
            return
        missed = 1
        requested_amount = 0
        requested_target: Subscription | None = None
        while True:
            with self._lock:
                ms = self._missed_subscription
                self._missed_subscription = None
                mr = self._missed_requested
                self._missed_requested = 0
                mp = self._missed_produced
                self._missed_produced = 0
            a = self._current
            if self._cancelled:
                if a is not None:
                    a.cancel()
                    self._current = None
                if ms is not None:
                    ms.cancel()
            else:
                r = self._requested
                if r < MAX_DEMAND:
                    u = r + mr
                    if u >= MAX_DEMAND:
                        r = MAX_DEMAND
                    else:
                        v = u - mp
                        if v < 0:
                            plugins.on_error(
                                ProtocolViolationError("1.1", f"more produced than requested: {v} (in {type(self).__name__})")
                            )
                            v = 0
                        r = v
                    self._requested = r
                if ms is not None:
                    if a is not None and self._cancel_on_replace:
                        a.cancel()
                    self._current = ms
                    # the new upstream is asked for all outstanding demand (replaces earlier targets)
                    requested_amount = r
                    requested_target = ms
                elif a is not None and mr != 0:
                    requested_amount = MAX_DEMAND if requested_amount + mr >= MAX_DEMAND else requested_amount + mr
                    requested_target = a
            missed = self._wip.add_and_get(-missed)
            if missed == 0:
                break
        if requested_amount != 0 and requested_target is not None:
            requested_target.request(requested_amount)

