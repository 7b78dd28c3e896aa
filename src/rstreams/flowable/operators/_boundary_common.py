"""Plumbing shared by the operators driven by a second Publisher: ``buffer(boundary)``,
``window(boundary)``, ``sample(sampler)`` and ``debounce(selector)``.

:class:`OtherSubscriber` subscribes to the other Publisher (a boundary, a sampler, a per-element
debouncer), requests it unbounded (RxJava 3: these signals are never backpressured, time-like) and
forwards its signals to the parent once (rule 1.7 guard against a faulty other Publisher). Its
Subscription lives in an ``AtomicRef`` (race: ``dispose`` from the parent vs a late
``on_subscribe``: :func:`set_once` cancels a Subscription arriving after ``dispose``).

:class:`DrivenBase` is the parent's Subscriber/Subscription plumbing: the main upstream in an
``AtomicRef`` (race: a cancel from the other Publisher's thread vs the main ``on_subscribe``), the
downstream's demand in an ``AtomicInt`` (race: ``request`` vs an emission on either source's thread)
and every downstream signal through a :class:`SerializedOut` (race: the main source's thread vs the
other Publisher's thread, rule 1.3). Its terminal and other-Publisher signals forward to three
hooks run inside a section: ``_at_signal`` (an element of the other Publisher), ``_at_end`` (either
completed) and ``_at_error`` (either failed; by default :meth:`DrivenBase.fail`). Emitting without demand cancels both sources and signals
``MissingBackpressureError`` naming the operator (RxJava 3).
"""

from __future__ import annotations

from typing import Any, Final

from ..._internal import plugins
from ..._internal.atomics import AtomicInt, AtomicRef
from ..._internal.requests import MAX_DEMAND, produced, request_or_error
from ..._internal.subscriptions import cancel, set_once
from ..._spec import Subscriber, Subscription
from ._time_common import NOOP, SerializedOut, missing_backpressure, none_refused

__all__ = ["OtherSubscriber", "DrivenBase", "check_publisher", "GONE"]


#: the downstream after cancel or termination (rule 3.13): NOOP, typed as a Subscriber
GONE: Final[Subscriber[Any]] = NOOP  # pyright: ignore[reportAssignmentType]


def check_publisher(op: str, what: str, p: object) -> None:
    if p is None or not hasattr(p, "subscribe"):
        raise TypeError(f"{op}(): {what} must be a Publisher, got {type(p).__name__}")


class OtherSubscriber:
    """Subscribes to the other Publisher; ``kind`` tells the parent which one signalled."""

    _rs_no_wrap = True
    __slots__ = ("_parent", "_ref", "_done", "kind", "__weakref__")

    def __init__(self, parent: Any, kind: Any = None) -> None:
        self._parent = parent
        self._ref: AtomicRef[Subscription | None] = AtomicRef(None)  # race: dispose vs on_subscribe
        self._done = False  # signals from the other Publisher arrive serially (rule 1.3)
        self.kind = kind

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise none_refused("on_subscribe")  # rule 2.13
        if set_once(self._ref, subscription, type(self._parent).__name__):
            subscription.request(MAX_DEMAND)

    def on_next(self, item: Any) -> None:
        if item is None:
            raise none_refused("on_next")  # rule 2.13
        if not self._done:
            self._parent.other_next(self, item)

    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise none_refused("on_error")  # rule 2.13
        if self._done:
            plugins.on_error(error, "an error from a boundary publisher after it terminated")
            return
        self._done = True
        self._parent.other_error(self, error)

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        self._parent.other_complete(self)

    def dispose(self) -> None:
        self._done = True
        cancel(self._ref)


class DrivenBase:
    """Main upstream, demand and serialized output of an operator driven by another Publisher."""

    _rs_no_wrap = True
    __slots__ = ("_out", "_downstream_ref", "_upstream", "_requested", "_done", "_op", "__weakref__")

    def __init__(self, downstream: Subscriber[Any], op: str) -> None:
        self._out = SerializedOut(downstream)  # race: main thread vs other thread (rule 1.3)
        self._downstream_ref: Subscriber[Any] = downstream  # for on_subscribe only
        self._upstream: AtomicRef[Subscription | None] = AtomicRef(None)  # race: cancel vs on_subscribe
        self._requested = AtomicInt(0)  # race: request vs emission (either source's thread)
        self._done = False  # read and written inside SerializedOut sections only
        self._op = op

    # -- hooks ---------------------------------------------------------------------------------
    def _dispose_others(self) -> None:
        """Cancel the other Publisher(s)."""
        raise NotImplementedError

    def _on_request(self) -> None:
        """After a valid request (e.g. a last value waiting for demand)."""

    def _at_signal(self) -> None:
        """Inside a section: an element of the other Publisher (a boundary cut, a sample)."""
        raise NotImplementedError

    def _at_end(self) -> None:
        """Inside a section: the main source or the other Publisher completed."""
        raise NotImplementedError

    def _at_error(self, error: BaseException) -> None:
        """Inside a section: the main source or the other Publisher failed."""
        self.fail(error)

    # -- signals: every one runs its hook inside one SerializedOut section (race: the main
    # source's thread vs the other Publisher's thread, rule 1.3); a subclass with more state per
    # signal overrides these ----------------------------------------------------------------------
    def on_error(self, error: BaseException) -> None:
        if error is None:
            raise none_refused("on_error")  # rule 2.13
        self._out.run(lambda: self._at_error(error))

    def on_complete(self) -> None:
        self._out.run(self._at_end)

    def other_next(self, other: OtherSubscriber, item: Any) -> None:
        self._out.run(self._at_signal)

    def other_error(self, other: OtherSubscriber, error: BaseException) -> None:
        self._out.run(lambda: self._at_error(error))

    def other_complete(self, other: OtherSubscriber) -> None:
        self._out.run(self._at_end)

    # -- plumbing ------------------------------------------------------------------------------
    def subscribe_downstream(self) -> None:
        d = self._downstream_ref
        self._downstream_ref = GONE  # SerializedOut holds it (rule 3.13 after cancel)
        d.on_subscribe(self)

    def set_upstream(self, subscription: Subscription) -> bool:
        if subscription is None:
            raise none_refused("on_subscribe")  # rule 2.13
        return set_once(self._upstream, subscription, self._op)

    def cancel_all(self) -> None:
        cancel(self._upstream)
        self._dispose_others()

    def request(self, n: int) -> None:
        err = request_or_error(self._requested, n)
        if err is not None:
            self.cancel_all()
            self._out.on_error(err)  # rule 3.9
            return
        self._on_request()

    def cancel(self) -> None:
        self.cancel_all()
        self._out.release()  # rule 3.13

    def try_emit(self, item: Any, what: str) -> bool:
        """Emit if there is demand; otherwise stop with MissingBackpressureError (inside a section)."""
        r = self._requested
        if r.get() != 0:
            self._out.emit_next(item)
            if r.get() < MAX_DEMAND:
                produced(r, 1)
            return True
        self._done = True
        self.cancel_all()
        self._out.emit_error(missing_backpressure(self._op, f"could not emit {what}"))
        return False

    def fail(self, error: BaseException) -> None:
        """Cancel everything and signal ``error`` (inside a section)."""
        if self._done:
            plugins.on_error(error, f"{self._op}: an error after the stream ended")
            return
        self._done = True
        self.cancel_all()
        self._out.emit_error(error)
