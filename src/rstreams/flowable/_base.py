"""Base classes for operator subscribers (the relaxed, library-internal contract of seed 004).

An operator subscriber is also the Subscription its downstream sees. The upstream of an internal
subscriber is trusted: it signals serially (rule 1.3) and validates requests (rule 3.9), so the
per-item path carries no locks. Foreign subscribers never see these classes directly; they are
wrapped in ``StrictSubscriber`` by ``Flowable.subscribe``.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Generic, TypeVar

from .._internal import plugins
from .._internal.atomics import AtomicInt, AtomicRef
from .._internal.drain import (
    COMPLETED_MASK,
    ErrorCollector,
    HalfSerializer,
    post_complete,
    post_complete_request,
)
from .._internal.requests import request_or_error, validate_request
from .._internal.subscriptions import CANCELLED, EMPTY, DeferredSubscription, report_double_subscription
from .._spec import Subscriber, Subscription, null_element_message
from ..errors import NoneElementError
from ._flowable import Flowable

__all__ = [
    "BasicSubscriber",
    "MainWithOthersSubscriber",
    "PassThroughSubscriber",
    "PostCompleteSubscriber",
    "FirstErrorDrain",
    "MappedInnersMain",
    "accept_upstream",
    "as_flowable",
    "none_result_error",
    "transparent_subscriber",
    "variadic_sources",
]

T = TypeVar("T")
R = TypeVar("R")


def none_result_error(operator: str, what: str = "the mapper") -> NoneElementError:
    """The error signalled when a user function returns None where an element is needed."""
    return NoneElementError(
        f"{operator}(): {what} returned None; None is not a valid element (rule 2.13). "
        f"Filter it out or map it to a sentinel value."
    )


class BasicSubscriber(Generic[T, R]):
    """Passes request/cancel up and terminal signals down; subclasses override ``on_next``.

    ``done`` guards against signals after a terminal one (rule 1.7) when a user callback failed
    and the operator already cancelled its upstream.
    """

    _rs_no_wrap = True
    __slots__ = ("downstream", "upstream", "done", "__weakref__")

    def __init__(self, downstream: Subscriber[R]) -> None:
        self.downstream: Subscriber[R] = downstream
        self.upstream: Subscription = CANCELLED
        self.done = False

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise NoneElementError(null_element_message("on_subscribe"))
        if self.upstream is not CANCELLED:
            subscription.cancel()  # rule 2.5
            report_double_subscription(type(self).__name__)
            return
        self.upstream = subscription
        self.downstream.on_subscribe(self)

    def on_next(self, item: T) -> None:  # pragma: no cover - always overridden
        raise NotImplementedError

    def on_error(self, error: BaseException) -> None:
        if self.done:
            plugins.on_error(error, f"{type(self).__name__}: on_error after termination")
            return
        self.done = True
        self.downstream.on_error(error)

    def on_complete(self) -> None:
        if self.done:
            return
        self.done = True
        self.downstream.on_complete()

    def fail(self, error: BaseException) -> None:
        """A user callback failed: cancel upstream, then signal the error downstream."""
        self.upstream.cancel()
        self.on_error(error)

    def request(self, n: int) -> None:
        self.upstream.request(n)

    def cancel(self) -> None:
        self.upstream.cancel()


class PassThroughSubscriber(BasicSubscriber[T, T]):
    """Passes elements on untouched; subclasses watch or change the other signals (``do_on_*``,
    ``do_finally``...). Nothing goes on after a terminal signal (rule 1.7), even from a faulty
    upstream."""

    __slots__ = ()

    def on_next(self, item: T) -> None:
        if self.done:
            return
        self.downstream.on_next(item)


class MainWithOthersSubscriber(BasicSubscriber[Any, Any]):
    """The main source's subscriber of an operator that also subscribes other sources
    (``skip_until``, ``with_latest_from``): every signal reaches the downstream through one
    :class:`~rstreams._internal.drain.HalfSerializer` (race: the main ``on_next`` vs an other
    source's terminal on another thread). The downstream gets its Subscription before any source
    is subscribed (rule 1.9: an early error of an other source must not precede ``on_subscribe``),
    so requests made before the main upstream arrives are deferred. Subclasses cancel their other
    sources in :meth:`_cancel_others`."""

    __slots__ = ("_serializer",)

    def __init__(self, downstream: Subscriber[Any]) -> None:
        super().__init__(downstream)
        self.upstream: Any = DeferredSubscription()
        self._serializer = HalfSerializer(downstream)

    def _cancel_others(self) -> None:  # pragma: no cover - every subclass has other sources
        raise NotImplementedError

    def on_subscribe(self, subscription: Subscription) -> None:
        self.upstream.set_upstream(subscription)

    def on_error(self, error: BaseException) -> None:
        if self.done:
            plugins.on_error(error)
            return
        self.done = True
        self._cancel_others()
        self._serializer.on_error(error)

    def on_complete(self) -> None:
        if self.done:
            return
        self.done = True
        self._cancel_others()
        self._serializer.on_complete()

    def _other_error(self, error: BaseException) -> None:
        if self.done:
            plugins.on_error(error)
            return
        self.done = True
        self.upstream.cancel()
        self._cancel_others()
        self._serializer.on_error(error)

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                # rule 3.9: the main upstream may not be there yet (the deferred request would
                # drop it); end the stream through the serializer
                self.cancel()
                if not self.done:
                    self.done = True
                    self._serializer.on_error(err)
                return
        self.upstream.request(n)

    def cancel(self) -> None:
        self.upstream.cancel()
        self._cancel_others()


def as_flowable(op: str, source: object) -> Flowable[Any]:
    """Check an operator's source argument is a Publisher (has ``subscribe``) and return it as a
    Flowable: at assembly, with an error naming the operator, rather than at subscription."""
    if source is None:
        raise NoneElementError(f"{op}(): a source is None; expected a Publisher (rule 2.13)")
    if isinstance(source, Flowable):
        return source
    if not callable(getattr(source, "subscribe", None)):
        raise TypeError(f"{op}(): expected a Publisher, got {type(source).__name__}")
    from .sources._basic import from_publisher

    return from_publisher(source)  # type: ignore[arg-type]


def variadic_sources(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The sources of a combining operator called ``op(a, b, ...)`` or ``op([a, b, ...])`` (one
    iterable that is not itself a Publisher: RxJava's ``op(Iterable)`` overload)."""
    if len(args) == 1 and not hasattr(args[0], "subscribe") and hasattr(args[0], "__iter__"):
        return tuple(args[0])
    return args


def accept_upstream(op: Any, subscription: Subscription, prefetch: int, where: str | None = None) -> bool:
    """The ``on_subscribe`` of an operator ``op`` holding ``_upstream`` (CANCELLED until the
    first Subscription), ``_downstream`` (None once gone) and ``_cancelled``: a second Subscription
    is cancelled (rule 2.5; False), and reported to the error hook naming ``where`` when given;
    else it is kept, the downstream gets ``op`` as its Subscription and, unless the downstream
    cancelled from its ``on_subscribe``, the upstream is asked for ``prefetch``."""
    if op._upstream is not CANCELLED:
        subscription.cancel()  # rule 2.5
        if where is not None:
            report_double_subscription(where)
        return False
    op._upstream = subscription
    d = op._downstream
    if d is not None:
        d.on_subscribe(op)
    if not op._cancelled:
        subscription.request(prefetch)
    return True


class FirstErrorDrain:
    """The Subscription of a coordinator whose inners (``QueuedInner``) feed one queue-drain
    (``merge``, ``zip``): the first error, an inner's or a rule 3.9 request's, takes the
    ``_error`` slot (an ``AtomicRef``; race: errors of inners on several threads) and the drain
    delivers it; a later one, or one after the coordinator was cancelled or terminated (``_cancelled``,
    set by both), goes to the undeliverable-error hook: never lost. Subclasses name themselves in
    ``_op`` and hold ``_requested``, ``_error``, ``_cancelled`` and ``drain``."""

    __slots__ = ()
    _op = "?"
    _requested: AtomicInt
    _error: AtomicRef[BaseException | None]
    _cancelled: bool

    def drain(self) -> None:  # pragma: no cover - every subclass drains
        raise NotImplementedError

    def inner_error(self, error: BaseException) -> None:
        if not self._cancelled and self._error.compare_and_set(None, error):
            self.drain()
        else:
            plugins.on_error(error, f"{self._op}: error after termination or a first error")

    def request(self, n: int) -> None:
        err = request_or_error(self._requested, n)
        if err is not None:  # rule 3.9, delivered by the drain
            if not self._cancelled:  # after a cancel or the end a request is a no-op (rule 3.6)
                self.inner_error(err)
            return
        self.drain()


class MappedInnersMain:
    """The outer subscriber of an operator that maps each element to an inner Publisher whose
    elements wait in a queue for one drain (``switch_map``, ``concat_map_eager``): it is also the
    Subscription its downstream sees. Subclasses name themselves in ``_op``, set their
    ``__slots__``, say how much of the outer they request first (:meth:`_outer_request`) and write
    ``on_next`` (through :meth:`_inner_publisher`), ``on_error``, ``request``, ``cancel`` and the
    drain; the inners call ``_inner_next``/``_inner_next_batch``/``_inner_error``."""

    _rs_no_wrap = True
    _op = "?"
    __slots__ = (
        "_downstream",
        "_mapper",
        "_prefetch",
        "_upstream",
        "_requested",
        "_wip",
        "_errors",
        "_done",
        "_cancelled",
        "__weakref__",
    )

    def __init__(self, downstream: Subscriber[Any], mapper: Any, prefetch: int) -> None:
        self._downstream: Subscriber[Any] | None = downstream  # None after cancel/termination (rule 3.13)
        self._mapper = mapper
        self._prefetch = prefetch  # of each inner
        self._upstream: Subscription = CANCELLED
        self._requested = AtomicInt(0)  # race: request vs the drain
        self._wip = AtomicInt(0)  # race: the outer, the inners and requests all want to drain (rule 1.3)
        self._errors = ErrorCollector()
        self._done = False
        self._cancelled = False

    def _outer_request(self) -> int:  # pragma: no cover - every subclass says it
        raise NotImplementedError

    def _drain(self) -> None:  # pragma: no cover - every subclass drains
        raise NotImplementedError

    def on_error(self, error: BaseException) -> None:  # pragma: no cover - every subclass has one
        raise NotImplementedError

    def request(self, n: int) -> None:  # pragma: no cover - every subclass has one
        raise NotImplementedError

    def cancel(self) -> None:  # pragma: no cover - every subclass has one
        raise NotImplementedError

    def on_subscribe(self, subscription: Subscription) -> None:
        accept_upstream(self, subscription, self._outer_request())

    def _inner_publisher(self, item: Any) -> Any:
        """``mapper(item)`` if it is a Publisher; None if the mapper raised, returned None (rule
        2.13) or returned something else: the upstream is cancelled and the error signalled."""
        try:
            p = self._mapper(item)
        except Exception as e:
            err: BaseException = e
        else:
            if p is not None and callable(getattr(p, "subscribe", None)):
                return p
            op = self._op
            if p is None:
                err = none_result_error(op, "the mapper")
            else:
                err = TypeError(f"{op}(): the mapper returned a {type(p).__name__}, not a Publisher")
        self._upstream.cancel()
        self.on_error(err)
        return None

    def on_complete(self) -> None:
        if self._done:
            return
        self._done = True
        self._upstream = EMPTY  # rule 2.4: a completed outer is not cancelled when the operator ends
        self._drain()

    def _inner_next(self, inner: Any, item: Any) -> None:
        inner.queue.append(item)
        self._drain()

    def _inner_next_batch(self, inner: Any, items: list[Any]) -> None:
        inner.queue.extend(items)  # within the inner's prefetch (the inner checked rule 1.1)
        self._drain()


class PostCompleteSubscriber(BasicSubscriber[T, Any]):
    """Base of operators that emit a buffered tail (``self.queue``) after the upstream completed."""

    __slots__ = ("queue", "requested", "cancelled", "_bad")

    def __init__(self, downstream: Subscriber[Any], queue: deque[Any]) -> None:
        super().__init__(downstream)
        self.queue = queue
        self.requested = AtomicInt(0)  # demand + COMPLETED_MASK (race: request vs on_complete)
        self.cancelled = False
        self._bad: AtomicRef[BaseException | None] = AtomicRef(None)  # rule 3.9 after completion

    def is_cancelled(self) -> bool:
        """Called by the post-complete drain owner only: delivers a parked rule 3.9 error."""
        if self.cancelled:
            err = self._bad.get_and_set(None)
            if err is not None:
                self.queue.clear()
                self.downstream.on_error(err)
            return True
        return False

    def forward_request(self, n: int) -> None:
        """A valid request that arrived before completion (subclasses translate it)."""
        self.upstream.request(n)

    def request(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            err = validate_request(n)
            if err is not None:
                self._bad_request(n, err)
                return
        if post_complete_request(n, self.downstream, self.queue, self.requested, self.is_cancelled):
            self.forward_request(n)

    def _bad_request(self, n: Any, err: BaseException) -> None:
        requested = self.requested
        if not requested.get() & COMPLETED_MASK:
            self.upstream.request(n)  # rule 3.9: the upstream signals it through on_error
            if not requested.get() & COMPLETED_MASK:
                return
            # the upstream completed meanwhile: it ignores requests now; signal it ourselves
        self._bad.set(err)
        self.cancelled = True
        # take (or join) the drain ownership; the owner's is_cancelled() delivers the error
        post_complete_request(1, self.downstream, self.queue, requested, self.is_cancelled)

    def cancel(self) -> None:
        self.cancelled = True
        self.upstream.cancel()

    def on_error(self, error: BaseException) -> None:
        if not self.done:
            self.queue.clear()
        super().on_error(error)

    def on_complete(self) -> None:
        if self.done:
            return
        self.done = True
        if self.cancelled:
            self.queue.clear()
            return
        self.before_complete()
        post_complete(self.downstream, self.queue, self.requested, self.is_cancelled)

    def before_complete(self) -> None:
        """Hook: settle demand accounting before the tail is drained."""


def passthrough(x: Any) -> Any:
    return x


def _hand_on_batch(self: Any, items: list[Any]) -> None:
    if self.done:
        return  # rule 1.7: nothing after the terminal signal
    self.downstream.on_next_batch(items)


def _downstream_accepts_batches(self: Any) -> bool:
    return bool(getattr(self.downstream, "accepts_batches", True))


_BATCH_VARIANTS: dict[type[Any], type[Any]] = {}


def transparent_subscriber(
    cls: type[BasicSubscriber[Any, Any]], downstream: Subscriber[Any], *args: Any
) -> BasicSubscriber[Any, Any]:
    """``cls(downstream, *args)`` for a subscriber that passes elements on untouched (it watches
    signals: ``do_on_complete``, ``do_finally``...), as its batch-passing variant when
    ``downstream`` takes the library-internal batches, so an element-transparent stage never
    turns a batch hand-off (an aggregate, ``observe_on``, an iterator bridge) into one call per
    element. The variant is a subclass made once per class (a benign race: two threads may both
    make one; either is correct)."""
    if getattr(downstream, "on_next_batch", None) is None:
        return cls(downstream, *args)
    variant = _BATCH_VARIANTS.get(cls)
    if variant is None:
        variant = type(
            cls.__name__ + "Batches",
            (cls,),
            {
                "__slots__": (),
                "on_next_batch": _hand_on_batch,
                "accepts_batches": property(_downstream_accepts_batches),
            },
        )
        _BATCH_VARIANTS[cls] = variant
    sub: BasicSubscriber[Any, Any] = variant(downstream, *args)
    return sub
