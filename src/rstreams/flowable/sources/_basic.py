"""The basic sources: just, empty, error, never, from_iterable, range, defer, from_callable,
from_publisher. The synchronous ones are fusion sources (see ``_fused.py``)."""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final, Generic, NoReturn, TypeVar, cast, final

from ..._internal import plugins
from ..._internal.arguments import check_callable_arg
from ..._internal.atomics import AtomicFlag, AtomicInt
from ..._internal.requests import add_request, take_one, validate_request
from ..._internal.subscriptions import complete_empty, error_empty, report_double_subscription
from ..._spec import Publisher, Subscriber, Subscription, null_element_message
from ...errors import MissingBackpressureError, NoneElementError, OneShotIteratorError, ProtocolViolationError
from .._flowable import Flowable
from .._fused import FusedFlowable, Fusion, sized
from .._scalar import DeferredScalarSubscription

__all__ = [
    "just",
    "empty",
    "error",
    "never",
    "from_iterable",
    "range_",
    "defer",
    "from_callable",
    "from_publisher",
    "JustFlowable",
    "EmptyFlowable",
    "scalar_value",
    "reject_async_function",
    "check_sync_callable",
]

T = TypeVar("T")

_SIZED_TYPES: Final = (list, tuple, range, dict, set, frozenset, str, bytes, deque)

# inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR, inspect.CO_GENERATOR (inspect is not imported:
# `import rstreams` stays light)
_CO_ASYNC: Final = 0x80 | 0x200
_CO_GENERATOR: Final = 0x20


def reject_async_function(where: str, what: str, fn: object, *, generator: bool = False) -> None:
    """Raise TypeError if ``fn`` is an ``async def`` function (or async generator function), and,
    with ``generator=True``, if it is a generator function (``def`` with ``yield``).

    The sources call their functions synchronously for their effect: an async one only makes a
    coroutine that never runs, a generator function only a generator whose body never runs, so the
    stream would hang (``create``), spin forever without emitting (``generate``), emit coroutine
    objects (``from_callable``) or skip a clean-up. ``generator=True`` is for functions whose
    result is ignored or must not be a generator (a generator may well be a legitimate *state* or
    *resource*). Partials and bound methods are looked through.

    >>> async def f(): ...
    >>> reject_async_function("from_callable", "fn", f)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: from_callable(): fn is an async function (f); ...
    """
    f: Any = fn
    while isinstance(f, functools.partial):
        f = f.func
    f = getattr(f, "__func__", f)  # a bound method
    code = getattr(f, "__code__", None)
    if code is None:
        return
    flags = code.co_flags
    name = getattr(f, "__qualname__", type(f).__name__)
    if flags & _CO_ASYNC:
        raise TypeError(
            f"{where}(): {what} is an async function ({name}); it is called synchronously, so its "
            "coroutine would never run: pass a plain function, or use rstreams.aio "
            "(from_coroutine, from_async_iterable, map_async) for async code"
        )
    if generator and flags & _CO_GENERATOR:
        raise TypeError(
            f"{where}(): {what} is a generator function ({name}); calling it only creates a "
            "generator, so its body would never run: pass a plain function (from_iterable() "
            "turns a generator into a Flowable)"
        )


def check_sync_callable(where: str, what: str, fn: object, *, generator: bool = False, none_ok: bool = False) -> None:
    """A source's function argument: callable (or None with ``none_ok``), and neither an async
    function nor, with ``generator=True``, a generator function (:func:`reject_async_function`
    says why); a TypeError naming the source and the argument otherwise, at assembly."""
    check_callable_arg(where, what, fn, none_ok=none_ok)
    reject_async_function(where, what, fn, generator=generator)


@final
class JustFlowable(FusedFlowable[T]):
    """``just(*items)``: known items (the scalar shortcut of concat_map/flat_map looks for it)."""

    __slots__ = ("items",)
    # scalar_value() tests the type: assembly tracing must not put a stand-in in its place (merge
    # and flat_map emit scalars in another order); just() cannot fail, so no trace is lost
    _rs_no_trace = True

    def __init__(self, items: tuple[T, ...]) -> None:
        # cheap to build: flat_map(lambda x: just(x)) makes one per element (the scalar shortcut
        # reads .items); the Fusion is made only when something subscribes or fuses
        self.items = items
        self._fusion = None  # type: ignore[assignment]

    def _fused(self) -> Fusion[T]:
        f = self._fusion
        if f is None:
            items = self.items
            f = self._fusion = Fusion(items.__iter__, sized(len(items)), (), ("just",))
        return f

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._fused().subscribe(subscriber)

    def __repr__(self) -> str:
        return f"Flowable.just{self.items!r}"


@final
class EmptyFlowable(Flowable[Any]):
    __slots__ = ()
    _rs_no_trace = True  # as JustFlowable's: scalar_value() tests the type

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        complete_empty(subscriber)

    def _fused(self) -> Fusion[Any]:
        return _EMPTY_FUSION

    def __repr__(self) -> str:
        return "Flowable.empty()"


_EMPTY_FUSION: Final[Fusion[Any]] = Fusion(lambda: iter(()), sized(0), (), ("empty",))
_EMPTY: Final = EmptyFlowable()


def scalar_value(source: object) -> tuple[bool, Any]:
    """Scalar shortcut: ``(True, x)`` for ``just(x)``, ``(True, NOTHING)`` for ``empty()``, else
    ``(False, None)``. Used by concat_map/flat_map to skip inner subscriptions."""
    if type(source) is JustFlowable and len(source.items) == 1:
        return True, source.items[0]
    if type(source) is EmptyFlowable:
        return True, NOTHING
    return False, None


NOTHING: Final = object()


def just(*items: T) -> Flowable[T]:
    for x in items:
        if x is None:
            raise NoneElementError(null_element_message("just", "2.13"))
    return JustFlowable(items)


def empty() -> Flowable[Any]:
    return _EMPTY


@final
class _ErrorFlowable(Flowable[Any]):
    __slots__ = ("_error",)

    def __init__(self, error: BaseException | Callable[[], BaseException]) -> None:
        self._error = error

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        e = self._error
        if not isinstance(e, BaseException):
            try:
                e = e()
            except Exception as ex:
                e = ex
            if e is None:
                e = NoneElementError("error(): the error supplier returned None")
            elif not isinstance(e, BaseException):
                # rule 2.13: on_error takes an exception; a str or an exception class would reach
                # the subscriber as a malformed signal
                e = TypeError(
                    f"error(): the error supplier returned a {type(e).__name__} ({e!r}), not an exception"
                )
        error_empty(subscriber, e)


def error(err: BaseException | Callable[[], BaseException]) -> Flowable[Any]:
    if err is None:
        raise NoneElementError(null_element_message("error", "2.13"))
    if not isinstance(err, BaseException) and not callable(err):
        raise TypeError(f"error(): expected an exception or a callable returning one, got {type(err).__name__}")
    reject_async_function("error", "the error supplier", err)
    return _ErrorFlowable(err)


class _NeverSubscription:
    __slots__ = ("_downstream",)

    def __init__(self, downstream: Subscriber[Any]) -> None:
        self._downstream: Subscriber[Any] | None = downstream

    def request(self, n: int) -> None:
        err = validate_request(n)
        d = self._downstream
        if err is not None and d is not None:
            self._downstream = None
            d.on_error(err)  # rule 3.9

    def cancel(self) -> None:
        self._downstream = None  # rule 3.13


@final
class _NeverFlowable(Flowable[Any]):
    __slots__ = ()

    def _subscribe_actual(self, subscriber: Subscriber[Any]) -> None:
        subscriber.on_subscribe(_NeverSubscription(subscriber))

    def __repr__(self) -> str:
        return "Flowable.never()"


_NEVER: Final = _NeverFlowable()


def never() -> Flowable[Any]:
    return _NEVER


def from_iterable(iterable: Iterable[T] | Callable[[], Iterable[T]]) -> Flowable[T]:
    if iterable is None:
        raise NoneElementError(null_element_message("from_iterable", "2.13"))
    if isinstance(iterable, Flowable):
        raise TypeError("from_iterable(): got a Flowable; use it directly (or concat/merge it)")
    if not hasattr(iterable, "__iter__"):
        if callable(iterable):
            # a factory (a generator function, a lambda): called once per subscription, so every
            # subscriber, retry and repeat gets a fresh pass (Reactor's fromStream(Supplier))
            reject_async_function("from_iterable", "the iterable factory", iterable)
            make: Callable[[], Iterable[T]] = iterable
            return FusedFlowable(Fusion(lambda: iter(make()), None, (), ("from_iterable",)))
        raise TypeError(f"from_iterable(): {type(iterable).__name__} is not iterable")
    items = cast("Iterable[T]", iterable)
    if hasattr(type(items), "__next__"):
        # an iterator (a generator, a file, map(...)): iter(it) is it, so a second pass would resume
        # where the first stopped; only the first subscription may take it
        return FusedFlowable(Fusion(_OneShot(cast("Iterator[T]", items)), None, (), ("from_iterable",)))
    sizer = (lambda: len(items)) if isinstance(items, _SIZED_TYPES) else None
    factory: Callable[[], Iterator[T]] = lambda: iter(items)  # noqa: E731
    return FusedFlowable(Fusion(factory, sizer, (), ("from_iterable",)))


@final
class _OneShot(Generic[T]):
    """The iterator factory of ``from_iterable(iterator)``: the iterator to the first subscription,
    :class:`OneShotIteratorError` (signalled as ``on_error``) to any later one."""

    __slots__ = ("_iterator", "_taken", "_what")

    def __init__(self, iterator: Iterator[T]) -> None:
        self._iterator: Iterator[T] | None = iterator
        self._taken = AtomicFlag()  # race: two subscriptions at once must not both get the iterator
        name = getattr(iterator, "__qualname__", None)
        self._what = f"{type(iterator).__name__} {name}" if isinstance(name, str) else type(iterator).__name__

    def __call__(self) -> Iterator[T]:
        it = self._iterator
        if it is None or not self._taken.try_set():
            raise OneShotIteratorError(
                f"from_iterable(): subscribed again to a one-shot iterator ({self._what}); an iterator "
                "can be iterated once, so a second subscriber (or a retry/repeat resubscribing) would "
                "silently miss what the first pass took. To re-iterate, give a factory, called once per "
                "subscription: Flowable.from_iterable(make_items) (a generator function or a lambda), "
                "or Flowable.defer(lambda: Flowable.from_iterable(make_items())); or pass a list"
            )
        self._iterator = None  # the first subscription owns it; no reference kept once it ends
        return iter(it)


def range_(start: int | range, count: int | None = None) -> Flowable[int]:
    if isinstance(start, range):
        if count is not None:
            raise TypeError("range(): give a Python range object alone, or (start, count) as ints")
        r = start
        n = len(r)
        if n == 0:
            return _EMPTY
        return FusedFlowable(Fusion(r.__iter__, sized(n), (), ("range",), none_free=True))
    if count is None:
        raise TypeError(
            f"range(start, count) takes two ints (RxJava's range: count consecutive ints from start) "
            f"or one Python range object, got ({start!r},)"
        )
    if not isinstance(start, int) or not isinstance(count, int) or isinstance(start, bool) or isinstance(count, bool):
        raise TypeError(f"range(start, count) takes ints, got ({start!r}, {count!r})")
    if count < 0:
        raise ValueError(f"range(): count must be >= 0, got {count}")
    if count == 0:
        return _EMPTY
    end = start + count
    return FusedFlowable(Fusion(lambda: iter(range(start, end)), sized(count), (), ("range",), none_free=True))


@final
class _DeferFlowable(Flowable[T]):
    __slots__ = ("_supplier",)

    def __init__(self, supplier: Callable[[], Publisher[T]]) -> None:
        self._supplier = supplier

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        try:
            p = self._supplier()
        except Exception as e:
            error_empty(subscriber, e)
            return
        if p is None:
            error_empty(subscriber, NoneElementError("defer(): the supplier returned None instead of a Publisher"))
            return
        if not callable(getattr(p, "subscribe", None)):
            # a value that cannot be subscribed would leave the subscriber waiting forever
            error_empty(subscriber, TypeError(f"defer(): the supplier returned a {type(p).__name__}, not a Publisher"))
            return
        from_publisher(p).subscribe(subscriber)  # a foreign Publisher gets the rule 2.13 guard


def defer(supplier: Callable[[], Publisher[T]]) -> Flowable[T]:
    check_sync_callable("defer", "supplier", supplier)
    return _DeferFlowable(supplier)


@final
class _FromCallableFlowable(Flowable[T]):
    __slots__ = ("_fn",)

    def __init__(self, fn: Callable[[], T]) -> None:
        self._fn = fn

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        # as RxJava's fromCallable: called at subscription, the value held until requested
        scalar: DeferredScalarSubscription[T] = DeferredScalarSubscription(subscriber)
        subscriber.on_subscribe(scalar)
        if scalar.is_cancelled:
            return
        call_into(self._fn, scalar)


def call_into(fn: Callable[[], T], scalar: DeferredScalarSubscription[T]) -> None:
    """Call ``fn`` and offer its result to ``scalar``: its error, or NoneElementError for None."""
    try:
        v = fn()
    except Exception as e:
        scalar.error(e)
        return
    if v is None:
        scalar.error(NoneElementError("from_callable(): the callable returned None (rule 2.13)"))
        return
    scalar.complete(v)


def from_callable(fn: Callable[[], T]) -> Flowable[T]:
    check_sync_callable("from_callable", "fn", fn)
    return _FromCallableFlowable(fn)


@final
class _ForeignGuard(Generic[T]):
    """What a foreign Publisher subscribes: the rules the operators behind ``from_publisher``
    take for granted are checked once, at the door.

    * Rule 2.13: a ``None`` element or error raises ``NoneElementError`` (a TypeError) to the
      calling publisher; the subscription is then cancelled (the rule says it is to be considered
      cancelled) and the downstream gets that error, so no operator (``zip``, ``combine_latest``)
      puts a ``None`` into a row and no consumer waits forever.
    * Rule 1.1: an element nobody requested cancels the subscription and signals a
      ``MissingBackpressureError`` (RxJava's name for a source that ignores backpressure) naming
      the publisher's class: the operators behind trust their upstream's demand accounting (their
      queues are sized by it), so the breach is caught where it enters.
    * Rules 1.7 and 2.12 (1.9): signals after a terminal one and a second ``on_subscribe`` are
      dropped and reported to the undeliverable-error hook.

    Demand is counted as the downstream requests it, before the request reaches the publisher,
    so a publisher emitting from inside ``request`` (or on another thread at once) is never
    miscounted. After a failure the publisher's later signals are dropped.
    """

    __slots__ = ("_downstream", "_upstream", "_failed", "_terminated", "_requested", "_name")

    def __init__(self, downstream: Subscriber[T], name: str) -> None:
        self._downstream = downstream
        self._upstream: Subscription | None = None
        self._failed = False  # set on the publisher's own (serial, rule 1.3) signal path only
        self._terminated = False  # likewise
        self._requested = AtomicInt(0)  # race: request (downstream thread) vs on_next (publisher's)
        self._name = name

    def on_subscribe(self, subscription: Subscription) -> None:
        if subscription is None:
            raise NoneElementError(null_element_message("on_subscribe"))
        if self._upstream is not None:
            subscription.cancel()  # rule 2.5
            report_double_subscription(f"from_publisher({self._name})")
            return
        self._upstream = subscription
        self._downstream.on_subscribe(_CountedSubscription(subscription, self._requested))

    def on_next(self, item: T) -> None:
        if item is None:
            self._fail("on_next")
        if self._failed:
            return
        if self._terminated:
            plugins.on_error(ProtocolViolationError("1.7", f"from_publisher({self._name}): on_next after the terminal signal"))
            return
        if not take_one(self._requested):
            self._violation(
                MissingBackpressureError(
                    f"Rule 1.1 violated: from_publisher({self._name}): the publisher emitted {item!r} with no "
                    "outstanding request (it ignores backpressure); its subscription was cancelled"
                )
            )
            return
        self._downstream.on_next(item)

    def on_error(self, error: BaseException) -> None:
        if error is None:
            self._fail("on_error")
        if self._failed:
            return
        if self._terminated:
            plugins.on_error(error, f"from_publisher({self._name}): on_error after the terminal signal (rule 1.7)")
            return
        self._terminated = True
        self._downstream.on_error(error)

    def on_complete(self) -> None:
        if self._failed:
            return
        if self._terminated:
            plugins.on_error(ProtocolViolationError("1.7", f"from_publisher({self._name}): on_complete after the terminal signal"))
            return
        self._terminated = True
        self._downstream.on_complete()

    def _violation(self, error: BaseException) -> None:
        self._failed = True
        up = self._upstream
        if up is not None:
            up.cancel()
        self._downstream.on_error(error)

    def _fail(self, where: str) -> NoReturn:
        err = NoneElementError(null_element_message(where))
        if not self._failed:
            self._violation(NoneElementError(f"from_publisher: the publisher broke rule 2.13 ({err})"))
        raise err


@final
class _CountedSubscription:
    """The foreign publisher's subscription as the downstream sees it: each valid request is
    counted (for :meth:`_ForeignGuard.on_next`) before it is passed on; a bad amount goes through
    uncounted, for the publisher to signal (rule 3.9)."""

    __slots__ = ("_upstream", "_requested")

    def __init__(self, upstream: Subscription, requested: AtomicInt) -> None:
        self._upstream = upstream
        self._requested = requested

    def request(self, n: int) -> None:
        if type(n) is int and n > 0:
            add_request(self._requested, n)
        self._upstream.request(n)

    def cancel(self) -> None:
        self._upstream.cancel()


@final
class _FromPublisher(Flowable[T]):
    __slots__ = ("_publisher",)

    def __init__(self, publisher: Publisher[T]) -> None:
        self._publisher = publisher

    def _subscribe_actual(self, subscriber: Subscriber[T]) -> None:
        self._publisher.subscribe(_ForeignGuard(subscriber, type(self._publisher).__name__))

    def __repr__(self) -> str:
        return f"Flowable.from_publisher({self._publisher!r})"


def from_publisher(publisher: Publisher[T]) -> Flowable[T]:
    if isinstance(publisher, Flowable):
        return publisher
    if publisher is None:
        raise NoneElementError(null_element_message("from_publisher", "2.13"))
    if not callable(getattr(publisher, "subscribe", None)):
        raise TypeError(f"from_publisher(): {type(publisher).__name__} has no subscribe() method")
    return _FromPublisher(publisher)
